"""Hub entities: does query generation keep its recall and speed when the
entities of a question have tens of thousands of edges?

    python benchmarks/bench_hub.py [--degrees 0,5000,20000,50000] [--hubs 5] [--work DIR]

The hubs are the bench entities that the most dev questions are about (by
the entities of their gold SPARQL). For each degree N every hub gets N extra
synthetic edges, half out and half in, over 500 predicates with Zipf
frequencies; the predicate names are real bench predicates the hub does not
already use (so no gold answer changes, and the distractors read like real
relations), and every new neighbour has one further edge, so two-hop paths
exist. The bench plus those edges is loaded with `coqa load` and the dev
questions about the hubs are answered with the shipped model. Printed per
degree: candidate recall (share of questions where some candidate's answers
are the gold answers), averaged F1, p50/p95 latency of `Pipeline.answer`.

Nothing here is tuned on the scores: the hubs, questions and edges follow
from the seed and the dev file alone.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import machine_load, percentiles, run_in_work_dir  # noqa: E402

from coqa.config import load_settings  # noqa: E402
from coqa.dataset import GoldQuestion, read_ccks  # noqa: E402
from coqa.evaluation.metrics import answer_set, question_prf  # noqa: E402
from coqa.gold import parse_query  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pkubase-bench"
TRIPLES_FILE = "pkubase-triples.txt"
SYNTHETIC_PREDICATES = 500
PREDICATE_ZIPF = 1.1  # chosen: a few predicates carry most of a hub's edges, as for a country's 国籍 in-edges


def choose_hubs(questions: list[GoldQuestion], count: int) -> list[str]:
    """The `count` entities named by the most gold queries (ties by name)."""
    mentions = Counter(entity for q in questions for entity in set(parse_query(q.sparql).entities()))
    return [entity for entity, _ in sorted(mentions.items(), key=lambda item: (-item[1], item[0]))[:count]]


def bench_predicates(triples_path: Path) -> tuple[list[str], dict[str, set[str]]]:
    """All predicates of the bench (sorted) and, per entity, the predicates on its edges."""
    used: dict[str, set[str]] = {}
    predicates: set[str] = set()
    with triples_path.open(encoding="utf-8") as lines:
        for line in lines:
            parts = line.rstrip("\n").rstrip(" .").split("\t")
            if len(parts) != 3:
                continue
            subject, predicate, obj = parts
            predicates.add(predicate)
            used.setdefault(subject, set()).add(predicate)
            used.setdefault(obj, set()).add(predicate)
    return sorted(predicates), used


def hub_edges(hub: str, number: int, degree: int, predicates: list[str], used: set[str], rng: np.random.Generator) -> list[str]:
    """`degree` new edges of `hub` (half out, half in) plus one further edge per new neighbour, as triple lines."""
    names = [p for p in predicates if p not in used]
    chosen = [names[i] for i in rng.choice(len(names), size=SYNTHETIC_PREDICATES, replace=False)]
    weights = 1.0 / np.arange(1, SYNTHETIC_PREDICATES + 1) ** PREDICATE_ZIPF
    drawn = rng.choice(SYNTHETIC_PREDICATES, size=2 * degree, p=weights / weights.sum())
    lines = []
    for i in range(degree):
        neighbour = f"<合成邻居_{number}_{i}>"
        predicate = chosen[drawn[i]]
        lines.append(f"{hub}\t{predicate}\t{neighbour} ." if i % 2 == 0 else f"{neighbour}\t{predicate}\t{hub} .")
        lines.append(f"{neighbour}\t{chosen[drawn[degree + i]]}\t<合成远端_{number}_{i}> .")
    return lines


def build_store(work: Path, degree: int, hubs: list[str], seed: int) -> Path:
    """The bench plus `degree` extra edges per hub, loaded with `coqa load` (reused when present)."""
    store = work / f"store-{degree}"
    if (store / "mentions").exists():
        return store
    data = work / f"data-{degree}"
    data.mkdir(parents=True, exist_ok=True)
    for name in ("pkubase-types.txt", "pkubase-mention2ent.txt"):
        (data / name).write_bytes((BENCH / name).read_bytes())
    predicates, used = bench_predicates(BENCH / TRIPLES_FILE)
    rng = np.random.default_rng(seed)
    with (data / TRIPLES_FILE).open("w", encoding="utf-8") as out:
        out.write((BENCH / TRIPLES_FILE).read_text(encoding="utf-8"))
        for number, hub in enumerate(hubs):
            out.write("\n".join(hub_edges(hub, number, degree, predicates, used.get(hub, set()), rng)) + "\n")
    subprocess.run([str(Path(sys.executable).parent / "coqa"), "load", str(data), "--store", str(store)], check=True)
    return store


def measure(store: Path, questions: list[GoldQuestion]) -> dict[str, float]:
    """Candidate recall, averaged F1 and latency over `questions` on `store`."""
    pipeline = Pipeline.from_settings(load_settings(flags={"store": str(store)}))
    try:
        pipeline.answer(questions[0].question)  # warm caches and the model
        recalled, f1s, seconds = 0, [], []
        for question in questions:
            started = time.perf_counter()
            answer = pipeline.answer(question.question)
            seconds.append(time.perf_counter() - started)
            gold = answer_set(question.answers)
            f1s.append(question_prf(answer.answers, question.answers).f1)
            recalled += any(answer_set(c.answers) == gold for c in answer.explanation.candidates)
    finally:
        pipeline.close()
    timing = percentiles(seconds)
    return {"recall": recalled / len(questions), "f1": float(np.mean(f1s)), "p50": timing["p50"], "p95": timing["p95"]}


def run(args: argparse.Namespace, work: Path) -> int:
    dev = read_ccks(BENCH / "dev.txt")
    hubs = choose_hubs(dev, args.hubs)
    questions = [q for q in dev if set(parse_query(q.sparql).entities()) & set(hubs)]
    print(f"hubs: {' '.join(hubs)}; {len(questions)} dev questions about them")
    print(machine_load())
    print(f"{'extra edges per hub':>20}  {'cand. recall':>12}  {'avg F1':>7}  {'p50 ms':>7}  {'p95 ms':>7}")
    for degree in args.degrees:
        figures = measure(build_store(work, degree, hubs, args.seed), questions)
        print(
            f"{degree:>20,}  {figures['recall']:>12.3f}  {figures['f1']:>7.3f}  "
            f"{figures['p50'] * 1000:>7.1f}  {figures['p95'] * 1000:>7.1f}",
            flush=True,
        )
    print(machine_load())
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--degrees", type=lambda s: [int(x) for x in s.split(",")], default=[0, 5000, 20000, 50000])
    parser.add_argument("--hubs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="keep the data and stores here (reused by later runs)")
    return run_in_work_dir(parser.parse_args(), run)


if __name__ == "__main__":
    sys.exit(main())
