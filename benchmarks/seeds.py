"""Accuracy over training seeds: `coqa train` with each seed, `coqa eval` of
each model on one file, then the mean and spread of the figures.

    python benchmarks/seeds.py ../shared/data/pkubase-bench/train.txt ../shared/data/pkubase-bench/dev.txt \
        --store /tmp/s --seeds 0 1 2 --work /tmp/seeds

A change is judged against this noise: dev F1 moves by about a point with
the seed alone. The models and eval reports stay in `--work`
(`model-seedN`, `eval-seedN`); a model already there is reused, so a run
that was stopped goes on where it was. `--parallel N` trains N seeds at a
time (each `coqa train` uses one core and about 4.5 GB). `--train-args`
passes more options to every `coqa train` (e.g. `--train-args
"--relation-evidence ../shared/data/nlpcc-kbqa/train.txt"`). Evaluate on a dev
file only to report: never to choose anything.
"""

from __future__ import annotations

import argparse
import re
import shlex
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The figures read from each eval's summary.md, by name.
FIGURES = {
    "averaged F1": re.compile(r"\| averaged F1 \| ([0-9.]+) \|"),
    "linking recall@1": re.compile(r"recall@k over \d+ questions with gold entities: @1 ([0-9.]+)"),
    "candidate recall": re.compile(r"Candidate recall \(some candidate gives the gold answers\): ([0-9.]+)"),
    "ranking accuracy": re.compile(r"Ranking accuracy over the \d+ questions with a correct candidate: ([0-9.]+)"),
    "latency p50 ms": re.compile(r"Latency p50 ([0-9.]+) ms"),
    "latency p95 ms": re.compile(r"p95 ([0-9.]+) ms;"),
}


def _coqa(*arguments: str) -> None:
    """Run a coqa command with this Python; exit with its message when it fails."""
    done = subprocess.run([sys.executable, "-m", "coqa.cli.main", *arguments], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"seeds: `coqa {' '.join(arguments)}` failed: {done.stderr.strip().splitlines()[-1:]}")


def train(train_file: str, store: str, seed: int, work: Path, options: list[str]) -> Path:
    """The model of `seed` in `work`, trained (with the extra `options`) unless it is already there."""
    model = work / f"model-seed{seed}"
    if not (model / "meta.json").is_file():
        _coqa("train", train_file, "--store", store, "-o", str(model), "--seed", str(seed), *options)
    return model


def evaluate(eval_file: str, store: str, model: Path, out: Path) -> dict[str, float]:
    """The FIGURES of `coqa eval` of `model` on `eval_file`."""
    _coqa("eval", eval_file, "--store", store, "--model", str(model), "--out", str(out))
    summary = (out / "summary.md").read_text(encoding="utf-8")
    figures = {}
    for name, pattern in FIGURES.items():
        match = pattern.search(summary)
        if match is None:
            sys.exit(f"seeds: {out / 'summary.md'} has no {name}: is it a coqa eval report?")
        figures[name] = float(match.group(1))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train_file")
    parser.add_argument("eval_file")
    parser.add_argument("--store", required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--work", required=True, help="directory for the models and eval reports")
    parser.add_argument("--parallel", type=int, default=1, help="seeds trained at a time")
    parser.add_argument("--train-args", default="", help="more options for every `coqa train`, one shell-quoted string")
    args = parser.parse_args()
    options = shlex.split(args.train_args)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        models = list(pool.map(lambda seed: train(args.train_file, args.store, seed, work, options), args.seeds))
    results = [evaluate(args.eval_file, args.store, model, work / f"eval-seed{seed}") for seed, model in zip(args.seeds, models)]
    print(f"{'figure':<20}" + "".join(f"{'seed ' + str(s):>10}" for s in args.seeds) + f"{'mean':>10}{'spread':>10}{'stdev':>10}")
    for name in FIGURES:
        values = [result[name] for result in results]
        stdev = statistics.stdev(values) if len(values) > 1 else 0.0
        row = "".join(f"{v:>10.4f}" for v in values)
        print(f"{name:<20}{row}{statistics.mean(values):>10.4f}{max(values) - min(values):>10.4f}{stdev:>10.4f}")


if __name__ == "__main__":
    main()
