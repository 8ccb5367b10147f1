"""pkubase-bench inside a large synthetic store with distractors, side by side
with the bench store alone: load, append, size, memory, F1, latency, linking.

    python benchmarks/bench_scale.py [--triples 10000000] [--work DIR] [--append-runs 3] [--limit N] [--no-distractors]

1. Writes N synthetic PKU-BASE-shaped triples (benchmarks/synthetic.py) and
   the distractors built from the bench's vocabulary (homonyms, common words
   and ASCII/digit tokens as names and mentions, literals equal to common
   phrases) into DIR/data. With `--no-distractors` the synthetic names are
   random characters that hardly ever match a question: what the store's
   size alone costs, apart from the extra things a question's words name.
2. Loads them with `coqa load` into DIR/store-synthetic, then appends
   pkubase-bench with `coqa load --append` to a fresh copy of it, `--append-runs`
   times (the last copy, DIR/store-scale, is the store measured below), and
   loads pkubase-bench alone into DIR/store-bench. Each `coqa load` is timed
   from outside: wall time, CPU seconds (user + system of it and its index
   process) and the peak resident memory of its largest process.
3. Answers the dev questions with the shipped model on each store, one
   process per store (bench first), and prints averaged F1, p50/p95 latency
   of `Pipeline.answer`, the time to open the pipeline, the peak memory of
   the answering process and the size of each store on disk.
4. Linking with distractors: questions whose chosen query names an entity
   that is not the bench's, whose gold entities the bench store linked but
   the large one did not, and whose best-scored link is not a bench entity.

Data and stores in DIR are reused by later runs (each load's figures are
kept next to its store in a .json file); without --work everything goes in
a temporary directory. Nothing is tuned on the scores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic  # noqa: E402
from benchutil import machine_load, memory, percentiles, run_in_work_dir  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pkubase-bench"
COQA = str(Path(sys.executable).parent / "coqa")


def timed_command(command: list[str]) -> dict[str, float]:
    """Run `command`; its wall time, CPU seconds (with its waited-for
    children) and the peak resident memory of its largest process (GB)."""
    started = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {' '.join(command)}")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_gb": usage.ru_maxrss / (1 << 20),
        "load_average": os.getloadavg()[0],
    }


def make_data(work: Path, triples: int, seed: int, distractors: bool) -> Path:
    """The synthetic files, with the bench's distractors or not (reused when
    present). Other data in `work`, and the stores built from it, are removed."""
    data = work / "data"
    recorded = data / "generated.json"
    wanted = {"triples": triples, "seed": seed, "distractors": distractors}
    # Files generated before --no-distractors existed always had them.
    if recorded.is_file() and {"distractors": True, **json.loads(recorded.read_text())["arguments"]} == wanted:
        return data
    for stale in (data, work / "store-synthetic", work / "store-scale"):
        shutil.rmtree(stale, ignore_errors=True)
    started = time.perf_counter()
    counts = synthetic.generate(data, triples, None, seed)
    if distractors:
        counts.update(synthetic.generate_distractors(data, BENCH, seed))
    recorded.write_text(json.dumps({"arguments": wanted, "lines": counts, "seconds": time.perf_counter() - started}))
    return data


def loaded(store: Path, command: list[str]) -> dict[str, float]:
    """Run the `coqa load` command that builds `store` and keep its figures
    in STORE.load.json; reuse them when present."""
    figures_file = store.with_suffix(".load.json")
    if figures_file.is_file() and (store / "manifest.json").is_file():
        return json.loads(figures_file.read_text())
    shutil.rmtree(store, ignore_errors=True)
    figures = timed_command(command)
    figures_file.write_text(json.dumps(figures))
    return figures


def append_runs(base: Path, store: Path, runs: int) -> list[dict[str, float]]:
    """Append the bench to `runs` fresh copies of `base` at `store`; the last one stays."""
    results = []
    for _ in range(runs):
        shutil.rmtree(store, ignore_errors=True)
        shutil.copytree(base, store)
        results.append(timed_command([COQA, "load", str(BENCH), "--store", str(store), "--append"]))
    return results


def scale_store(work: Path, base: Path, runs: int) -> list[dict[str, float]]:
    """DIR/store-scale, the bench appended to `base`, with the figures of
    its `runs` appends (kept in DIR/appends.json and reused)."""
    store, figures_file = work / "store-scale", work / "appends.json"
    if figures_file.is_file() and (store / "manifest.json").is_file():
        return json.loads(figures_file.read_text())
    results = append_runs(base, store, runs)
    figures_file.write_text(json.dumps(results))
    return results


def print_appends(appends: list[dict[str, float]]) -> None:
    for number, figures in enumerate(appends, 1):
        print(load_line(f"append pkubase-bench, run {number}", figures))
    print(
        f"append median: {np.median([a['wall_s'] for a in appends]):.1f} s wall, "
        f"{np.median([a['cpu_s'] for a in appends]):.1f} CPU-s"
    )


def disk_mb(path: Path) -> float:
    """Allocated size of everything under `path` in MB."""
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file()) / 1e6


def answer_all(store: Path, limit: int | None, out: Path) -> None:
    """In this process: answer the dev questions on `store`, write the per-question records to `out`."""
    from coqa.config import load_settings
    from coqa.dataset import read_ccks
    from coqa.evaluation.metrics import question_prf
    from coqa.gold import parse_query
    from coqa.pipeline import Pipeline

    questions = read_ccks(BENCH / "dev.txt")[:limit]
    started = time.perf_counter()
    pipeline = Pipeline.from_settings(load_settings(flags={"store": str(store)}))
    pipeline.answer(questions[0].question)  # first answer loads what is loaded lazily
    opened = time.perf_counter() - started
    records = []
    for question in questions:
        started = time.perf_counter()
        answer = pipeline.answer(question.question)
        seconds = time.perf_counter() - started
        chosen = answer.explanation.chosen
        records.append(
            {
                "f1": question_prf(answer.answers, question.answers).f1,
                "seconds": seconds,
                "gold": parse_query(question.sparql).entities(),
                "chosen": parse_query(chosen.sparql).entities() if chosen else [],
                "linked": [(term.term, term.score) for term in answer.explanation.linked],
            }
        )
    pipeline.close()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.write_text(
        json.dumps(
            {"open_s": opened, "cpu_s": usage.ru_utime + usage.ru_stime, "memory": memory(), "records": records},
            ensure_ascii=False,
        )
    )


def answered(store: Path, limit: int | None, work: Path) -> dict:
    """`answer_all` in a fresh process (so its memory is that store's alone)."""
    out = work / f"answers-{store.name}.json"
    command = [sys.executable, __file__, "--answer", str(store), "--work", str(work), "--out", str(out)]
    subprocess.run(command + (["--limit", str(limit)] if limit else []), check=True)
    return json.loads(out.read_text())


def linking_effects(bench: dict, scale: dict, bench_entities: frozenset[str]) -> dict[str, int]:
    """How the large store's distractors changed linking, question by question."""
    def names(terms: list) -> set[str]:
        return {term[1:-1] for term in terms if term.startswith("<")}

    effects = {"chosen query names a non-bench entity": 0, "gold entity linked on bench, not at scale": 0,
               "best-scored link is not a bench entity": 0, "F1 lower at scale": 0, "F1 higher at scale": 0}
    for small, large in zip(bench["records"], scale["records"]):
        gold = names(large["gold"])
        effects["chosen query names a non-bench entity"] += bool(names(large["chosen"]) - bench_entities)
        linked_small = names([term for term, _ in small["linked"]])
        linked_large = names([term for term, _ in large["linked"]])
        effects["gold entity linked on bench, not at scale"] += bool((gold & linked_small) - linked_large)
        entities = [(score, term[1:-1]) for term, score in large["linked"] if term.startswith("<")]
        effects["best-scored link is not a bench entity"] += bool(entities) and max(entities)[1] not in bench_entities
        effects["F1 lower at scale"] += large["f1"] < small["f1"] - 1e-9
        effects["F1 higher at scale"] += large["f1"] > small["f1"] + 1e-9
    return effects


def summary(label: str, figures: dict) -> str:
    seconds = [r["seconds"] for r in figures["records"]]
    timing = percentiles(seconds)
    linked = np.mean([sum(term.startswith("<") for term, _ in r["linked"]) for r in figures["records"]])
    return (
        f"{label:<10} F1 {np.mean([r['f1'] for r in figures['records']]):.4f}  "
        f"p50 {timing['p50'] * 1000:.1f} ms  p95 {timing['p95'] * 1000:.1f} ms  "
        f"CPU {figures['cpu_s']:.1f} s  open {figures['open_s']:.2f} s  "
        f"peak {figures['memory']['peak_mb'] / 1024:.2f} GB (anon {figures['memory']['anon_mb'] / 1024:.2f}, "
        f"mapped files {figures['memory']['file_mb'] / 1024:.2f} at the end)  "
        f"linked entities per question {linked:.1f}"
    )


def load_line(label: str, figures: dict[str, float], lines: int | None = None) -> str:
    rate = f", {lines / figures['wall_s']:,.0f} lines/s" if lines else ""
    return (
        f"{label}: {figures['wall_s']:.1f} s wall, {figures['cpu_s']:.1f} CPU-s, "
        f"peak {figures['peak_gb']:.2f} GB{rate} (load average {figures['load_average']:.1f} at the end)"
    )


def store_line(label: str, store: Path) -> str:
    manifest = json.loads((store / "manifest.json").read_text())
    return (
        f"{label}: {manifest['triples']:,} triples, {manifest['index_entries']:,} index entries; "
        f"oxigraph {disk_mb(store / 'oxigraph'):,.0f} MB, mention index {disk_mb(store / 'mentions'):,.0f} MB"
    )


def run(args: argparse.Namespace, work: Path) -> int:
    print(machine_load(), flush=True)
    data = make_data(work, args.triples, args.seed, args.distractors)
    lines = json.loads((data / "generated.json").read_text())["lines"]
    base = work / "store-synthetic"
    base_load = loaded(base, [COQA, "load", str(data), "--store", str(base)])
    if args.append_only:
        print_appends(append_runs(base, work / "store-append", args.append_runs))
        print(machine_load())
        return 0
    appends = scale_store(work, base, args.append_runs)
    bench = work / "store-bench"
    bench_load = loaded(bench, [COQA, "load", str(BENCH), "--store", str(bench)])
    print(machine_load(), flush=True)
    bench_answers = answered(bench, args.limit, work)
    scale_answers = answered(work / "store-scale", args.limit, work)
    print(machine_load())
    print(f"\ndata: {', '.join(f'{name} {count:,}' for name, count in lines.items())} lines")
    loaded_files = "synthetic + distractors" if args.distractors else "synthetic, no distractors"
    print(load_line(f"load {loaded_files} ({sum(lines.values()):,} lines)", base_load, sum(lines.values())))
    print_appends(appends)
    print(load_line("load pkubase-bench alone", bench_load))
    print(store_line("bench store", bench))
    print(store_line("scale store", work / "store-scale"))
    print(summary("bench", bench_answers))
    print(summary("scale", scale_answers))
    effects = linking_effects(bench_answers, scale_answers, synthetic.KBVocabulary.read(BENCH).entities)
    print(f"linking over {len(scale_answers['records'])} dev questions: "
          + "; ".join(f"{name}: {count}" for name, count in effects.items()))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--triples", type=int, default=10_000_000, help="synthetic triples (default 10M)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--append-runs", type=int, default=3, help="appends of the bench to fresh copies (default 3)")
    parser.add_argument(
        "--append-only",
        action="store_true",
        help="only time the appends (into DIR/store-append, not reused) after the synthetic load",
    )
    parser.add_argument("--limit", type=int, help="answer only the first N dev questions")
    parser.add_argument(
        "--no-distractors",
        dest="distractors",
        action="store_false",
        help="synthetic names only (random characters): the cost of the store's size without name collisions",
    )
    parser.add_argument("--work", type=Path, help="keep the data and stores here (reused by later runs)")
    parser.add_argument("--answer", type=Path, help=argparse.SUPPRESS)  # internal: one store's answering process
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.answer:
        answer_all(args.answer, args.limit, args.out)
        return 0
    return run_in_work_dir(args, run)


if __name__ == "__main__":
    sys.exit(main())
