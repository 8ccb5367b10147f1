"""Time of mention detection plus entity linking per question (the linker's
KB queries included), for comparing linking code side by side.

    python benchmarks/bench_linking.py QUESTIONS --store /tmp/s [--model DIR] [--repeat 2]

QUESTIONS is a CCKS-format file (use train questions). Each question is
detected and linked `--repeat` times after a warm-up of 20; prints p50 and
p95 in milliseconds. Run the versions to compare one after another, twice,
on the same store.
"""

from __future__ import annotations

import argparse
import time

from coqa.config import load_settings
from coqa.dataset import read_ccks
from coqa.mentions.detection import normalize_question
from coqa.pipeline import Pipeline

WARM_UP = 20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("questions")
    parser.add_argument("--store", required=True)
    parser.add_argument("--model", default="", help="model directory (default: the configured one)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    flags = {"store": args.store} | ({"model": args.model} if args.model else {})
    pipeline = Pipeline.from_settings(load_settings(flags=flags))
    assert pipeline.linker is not None, "the pipeline has a model"
    texts = [normalize_question(question.question) for question in read_ccks(args.questions)]
    for text in texts[:WARM_UP]:
        pipeline.linker.link(text, pipeline.detect(text))
    seconds = []
    for _ in range(args.repeat):
        for text in texts:
            started = time.perf_counter()
            pipeline.linker.link(text, pipeline.detect(text))
            seconds.append(time.perf_counter() - started)
    seconds.sort()
    p50, p95 = seconds[len(seconds) // 2] * 1000, seconds[int(0.95 * len(seconds))] * 1000
    print(f"detection + linking: p50 {p50:.2f} ms, p95 {p95:.2f} ms over {len(seconds)} runs of {len(texts)} questions")


if __name__ == "__main__":
    main()
