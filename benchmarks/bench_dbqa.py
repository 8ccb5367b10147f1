"""Speed of NLPCC DBQA: sentences scored per second and training time.

    python benchmarks/bench_dbqa.py ../shared/data/nlpcc-dbqa/train.txt [--runs 3] [--model DIR]

Scoring: every question of FILE scored with the model (features and LightGBM,
as `coqa answer --task nlpcc-dbqa` does; the shipped model by default), after
one warm-up question (the segmenter's dictionary loads once per process).
Training: `train_model` on FILE (must be labelled). Each is run `--runs`
times; the median is printed with the machine's load.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchutil import machine_load

from coqa.config import default_settings
from coqa.dbqa.model import DbqaModel
from coqa.dbqa.reading import read_dbqa
from coqa.dbqa.scoring import score_file, score_question
from coqa.dbqa.training import train_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="a DBQA file (labelled for the training time)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", help="model folder (default: the shipped DBQA model)")
    parser.add_argument("--repair-labels", action="store_true")
    args = parser.parse_args()
    print(machine_load())
    source = read_dbqa(args.file, repair_labels=args.repair_labels)
    model = DbqaModel.load(args.model)
    first = source.questions[0]
    score_question(model, first.question, first.sentences)
    rates = []
    for _ in range(args.runs):
        started = time.perf_counter()
        scores = score_file(model, source)
        rates.append(len(scores) / (time.perf_counter() - started))
    print(f"scoring: {source.lines} sentences of {len(source.questions)} questions; "
          f"median {statistics.median(rates):,.0f} sentences/s (runs: {', '.join(f'{r:,.0f}' for r in rates)})")
    if source.labelled:
        seconds = []
        for _ in range(args.runs):
            started = time.perf_counter()
            train_model(source, default_settings().dbqa.ranker)
            seconds.append(time.perf_counter() - started)
        print(f"training: median {statistics.median(seconds):.1f} s (runs: {', '.join(f'{s:.1f}' for s in seconds)})")
    print(machine_load())


if __name__ == "__main__":
    main()
