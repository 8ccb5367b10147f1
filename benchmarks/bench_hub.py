"""Hub entities: does query generation keep its recall and speed when the
entities of a question have tens of thousands of edges?

    python benchmarks/bench_hub.py [--degrees 0,5000,20000,50000] [--hubs 5] [--work DIR]

The hubs are the bench entities that the most questions are about (by the
entities of their gold SPARQL), of dev.txt or of the file `--questions` names:
judge a change on held-out train questions (`benchmarks/split.py`, and a
`--model` trained without them), and report it on dev. For each degree N
every hub gets N extra synthetic edges over 500 predicates with Zipf
frequencies; the predicate
names are real bench predicates the hub does not already use (so no gold
answer changes, and the distractors read like real relations), and every new
neighbour has one further edge, so two-hop paths exist. Two generators
(`--generator`):

- `zipf` (the default): half the edges out of the hub and half into it, every
  neighbour an entity, whatever the predicate. So a company gets 78 entities
  by `<外文名>`, a predicate that holds one literal for each of its 44
  subjects in the bench.
- `usage`: the edges follow how each predicate is used in the bench, as a
  real hub's do (a country or a university is a hub by the things that point
  at it): out of the hub, a predicate gets at most as many objects as any
  bench subject has by it, literals where most of its subjects have a
  literal; the rest of the N edges point into the hub, by predicates whose
  objects are mostly entities. The ranker cannot learn to distrust answers a
  predicate never gives in the training knowledge base (tried: a feature of
  the answers' form and number against the predicate's usage across the KB
  left the `zipf` F1 where it was and lowered held-out train F1), so `usage`
  shows what a hub of the real graph costs, and `zipf` how the ranker fares
  with edges that contradict the predicates' usage.

Either way the new edges may restate one of the hub's own relations under a
near-synonym with another value (`<外文名>` beside its `<外文名称>`), which
no ranker can tell from the true one. `--predicates unrelated` keeps to the
predicates that share no two characters in a row with one the hub uses
(its `<类型>` edges included), so
what changes with N is only the hub's size; `any` (the default) allows them.

The bench plus those edges is loaded with `coqa load` and the
questions about the hubs are answered with the shipped model. Printed per
degree: candidate recall (share of questions where some candidate's answers
are the gold answers), averaged F1, p50/p95 latency of `Pipeline.answer` and
its mean CPU time per question (`time.process_time`).

Nothing here is tuned on the scores: the hubs, questions and edges follow
from the seed and the question file alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import machine_load, percentiles, run_in_work_dir  # noqa: E402

from coqa.config import load_settings  # noqa: E402
from coqa.dataset import GoldQuestion, read_ccks  # noqa: E402
from coqa.evaluation.metrics import answer_set, question_prf  # noqa: E402
from coqa.explanation import Answer  # noqa: E402
from coqa.gold import parse_query  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pkubase-bench"
TRIPLES_FILE = "pkubase-triples.txt"
TYPES_FILE = "pkubase-types.txt"
SYNTHETIC_PREDICATES = 500
PREDICATE_ZIPF = 1.1  # chosen: a few predicates carry most of a hub's edges, as for a country's 国籍 in-edges


def choose_hubs(questions: list[GoldQuestion], count: int) -> list[str]:
    """The `count` entities named by the most gold queries (ties by name)."""
    mentions = Counter(entity for q in questions for entity in set(parse_query(q.sparql).entities()))
    return [entity for entity, _ in sorted(mentions.items(), key=lambda item: (-item[1], item[0]))[:count]]


@dataclass
class PredicateUse:
    """How the bench uses one predicate: the most objects one subject has by
    it, and how many of its subjects have a literal object among how many."""

    most_objects: int = 0
    literal_subjects: int = 0
    subjects: int = 0

    def literal(self) -> bool:
        return 2 * self.literal_subjects > self.subjects


def _triples(path: Path) -> Iterator[tuple[str, str, str]]:
    """The (subject, predicate, object) lines of a bench triple file."""
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            parts = line.rstrip("\n").rstrip(" .").split("\t")
            if len(parts) == 3:
                yield parts[0], parts[1], parts[2]


def bench_predicates(bench: Path) -> tuple[dict[str, PredicateUse], dict[str, set[str]]]:
    """How the bench's facts use each predicate and, per entity, the
    predicates on its edges, its `<类型>` edges included (a typed entity's
    own relations include its type, so `歌曲类型` is a near-synonym of them)."""
    used: dict[str, set[str]] = {}
    objects: dict[str, dict[str, list[str]]] = {}
    for source in (TRIPLES_FILE, TYPES_FILE):
        for subject, predicate, obj in _triples(bench / source):
            if source == TRIPLES_FILE:
                objects.setdefault(predicate, {}).setdefault(subject, []).append(obj)
            used.setdefault(subject, set()).add(predicate)
            used.setdefault(obj, set()).add(predicate)
    uses = {
        predicate: PredicateUse(
            max(len(objs) for objs in by_subject.values()),
            sum(any(o.startswith('"') for o in objs) for objs in by_subject.values()),
            len(by_subject),
        )
        for predicate, by_subject in objects.items()
    }
    return uses, used


def _zipf_draws(names: list[str], size: int, rng: np.random.Generator) -> list[str]:
    """`size` predicates drawn from SYNTHETIC_PREDICATES of `names` (chosen at random) with Zipf frequencies."""
    chosen = [names[i] for i in rng.choice(len(names), size=min(SYNTHETIC_PREDICATES, len(names)), replace=False)]
    weights = 1.0 / np.arange(1, len(chosen) + 1) ** PREDICATE_ZIPF
    return [chosen[i] for i in rng.choice(len(chosen), size=size, p=weights / weights.sum())]


def _character_pairs(predicate: str) -> set[str]:
    """The two-character sequences of a predicate's name (the name itself when shorter)."""
    name = predicate.strip("<>")
    return {name[i : i + 2] for i in range(len(name) - 1)} or {name}


def synthetic_names(uses: dict[str, PredicateUse], used: set[str], predicates: str) -> list[str]:
    """The bench predicates a hub's new edges may use: those it does not use,
    and with `predicates == "unrelated"` only those sharing no two-character
    sequence with one it does use (no near-synonym of its own relations)."""
    names = sorted(p for p in uses if p not in used)
    if predicates == "any":
        return names
    own = set().union(*(_character_pairs(p) for p in used))
    return [p for p in names if not _character_pairs(p) & own]


def hub_edges(
    hub: str, number: int, degree: int, uses: dict[str, PredicateUse], names: list[str], generator: str, rng: np.random.Generator
) -> list[str]:
    """`degree` new edges of `hub` over the predicates `names`, plus one
    further edge per new neighbour, as triple lines (see the module docstring)."""
    lines = []

    def further(neighbour: str, i: int, predicate: str) -> None:
        far = f'"合成值_{number}_{i}"' if generator == "usage" and uses[predicate].literal() else f"<合成远端_{number}_{i}>"
        lines.append(f"{neighbour}\t{predicate}\t{far} .")

    if generator == "zipf":
        drawn = _zipf_draws(names, 2 * degree, rng)
        for i in range(degree):
            neighbour = f"<合成邻居_{number}_{i}>"
            lines.append(f"{hub}\t{drawn[i]}\t{neighbour} ." if i % 2 == 0 else f"{neighbour}\t{drawn[i]}\t{hub} .")
            further(neighbour, i, drawn[degree + i])
        return lines
    further_drawn = _zipf_draws(names, degree, rng)
    given: Counter[str] = Counter()
    i = 0
    for predicate in _zipf_draws(names, degree // 2, rng):
        if given[predicate] < uses[predicate].most_objects:
            given[predicate] += 1
            if uses[predicate].literal():
                lines.append(f'{hub}\t{predicate}\t"合成值_{number}_{i}" .')
            else:
                lines.append(f"{hub}\t{predicate}\t<合成邻居_{number}_{i}> .")
                further(f"<合成邻居_{number}_{i}>", i, further_drawn[i])
            i += 1
    for predicate in _zipf_draws([p for p in names if not uses[p].literal()], degree - i, rng):
        neighbour = f"<合成邻居_{number}_{i}>"
        lines.append(f"{neighbour}\t{predicate}\t{hub} .")
        further(neighbour, i, further_drawn[i])
        i += 1
    return lines


def build_store(work: Path, degree: int, hubs: list[str], generator: str, predicates: str, seed: int) -> Path:
    """The bench plus `degree` extra edges per hub, loaded with `coqa load` (reused when present)."""
    suffix = f"{degree}" if generator == "zipf" or degree == 0 else f"{generator}-{degree}"
    if predicates != "any" and degree:
        suffix = f"{predicates}-{suffix}"
    store, data = work / f"store-{suffix}", work / f"data-{suffix}"
    unrelated_to = "; unrelated to the hub's relations and types" if predicates == "unrelated" else ""
    recipe = f"hubs {' '.join(hubs)}; seed {seed}{unrelated_to}\n"
    if (store / "mentions").exists():
        built = (data / "recipe.txt").read_text(encoding="utf-8") if (data / "recipe.txt").exists() else "unknown"
        if built != recipe:
            raise SystemExit(f"{store} was built for other hubs or another seed ({built.strip()}); give another --work")
        return store
    data.mkdir(parents=True, exist_ok=True)
    (data / "recipe.txt").write_text(recipe, encoding="utf-8")
    for name in (TYPES_FILE, "pkubase-mention2ent.txt"):
        (data / name).write_bytes((BENCH / name).read_bytes())
    uses, used = bench_predicates(BENCH)
    rng = np.random.default_rng(seed)
    with (data / TRIPLES_FILE).open("w", encoding="utf-8") as out:
        out.write((BENCH / TRIPLES_FILE).read_text(encoding="utf-8"))
        for number, hub in enumerate(hubs):
            names = synthetic_names(uses, used.get(hub, set()), predicates)
            out.write("\n".join(hub_edges(hub, number, degree, uses, names, generator, rng)) + "\n")
    subprocess.run([str(Path(sys.executable).parent / "coqa"), "load", str(data), "--store", str(store)], check=True)
    return store


def question_record(degree: int, question: GoldQuestion, answer: Answer, f1: float, recalled: bool) -> dict[str, object]:
    """One line of `--report`: the question, its gold query and what the pipeline chose at `degree`."""
    chosen = answer.explanation.chosen
    return {
        "degree": degree, "question": question.question, "gold": question.sparql, "f1": f1, "recalled": recalled,
        "chosen": chosen.sparql if chosen else None, "answers": answer.answers[:10],
        "cuts": [f"{cut.setting} {cut.where} {cut.kept}/{cut.found}" for cut in answer.explanation.cuts],
    }  # fmt: skip


def measure(store: Path, questions: list[GoldQuestion], model: str | None, degree: int, report: list[dict[str, object]]) -> dict[str, float]:
    """Candidate recall, averaged F1, latency and CPU time per question over
    `questions` on `store`; one record per question is appended to `report`."""
    pipeline = Pipeline.from_settings(load_settings(flags={"store": str(store), "model": model}))
    try:
        pipeline.answer(questions[0].question)  # warm caches and the model
        recalled, f1s, seconds, cpu = 0, [], [], []
        for question in questions:
            started, started_cpu = time.perf_counter(), time.process_time()
            answer = pipeline.answer(question.question)
            seconds.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
            gold = answer_set(question.answers)
            f1s.append(question_prf(answer.answers, question.answers).f1)
            found = any(answer_set(c.answers) == gold for c in answer.explanation.candidates)
            recalled += found
            report.append(question_record(degree, question, answer, f1s[-1], found))
    finally:
        pipeline.close()
    timing = percentiles(seconds)
    return {
        "recall": recalled / len(questions), "f1": float(np.mean(f1s)), "p50": timing["p50"], "p95": timing["p95"],
        "cpu": float(np.mean(cpu)),
    }  # fmt: skip


def run(args: argparse.Namespace, work: Path) -> int:
    source = read_ccks(args.questions)
    hubs = choose_hubs(source, args.hubs)
    questions = [q for q in source if set(parse_query(q.sparql).entities()) & set(hubs)]
    print(f"hubs: {' '.join(hubs)}; {len(questions)} questions of {args.questions} about them; {args.generator} edges, {args.predicates} predicates")
    print(machine_load())
    print(f"{'extra edges per hub':>20}  {'cand. recall':>12}  {'avg F1':>7}  {'p50 ms':>7}  {'p95 ms':>7}  {'CPU ms':>7}")
    report: list[dict[str, object]] = []
    for degree in args.degrees:
        store = build_store(work, degree, hubs, args.generator, args.predicates, args.seed)
        figures = measure(store, questions, args.model, degree, report)
        print(
            f"{degree:>20,}  {figures['recall']:>12.3f}  {figures['f1']:>7.3f}  "
            f"{figures['p50'] * 1000:>7.1f}  {figures['p95'] * 1000:>7.1f}  {figures['cpu'] * 1000:>7.1f}",
            flush=True,
        )
    print(machine_load())
    if args.report:
        with args.report.open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in report)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--degrees", type=lambda s: [int(x) for x in s.split(",")], default=[0, 5000, 20000, 50000])
    parser.add_argument("--hubs", type=int, default=5)
    parser.add_argument(
        "--questions", type=Path, default=BENCH / "dev.txt",
        help="the CCKS question file whose questions choose the hubs and are answered (default: the bench's dev.txt)",
    )  # fmt: skip
    parser.add_argument("--generator", choices=("zipf", "usage"), default="zipf", help="how the extra edges are drawn (see above)")
    parser.add_argument(
        "--predicates",
        choices=("any", "unrelated"),
        default="any",
        help="which bench predicates the new edges use: any the hub does not use, or only those sharing no two characters in a row with one it uses",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help="the model directory (default: the shipped model)")
    parser.add_argument("--report", type=Path, help="write one JSON line per question and degree: gold and chosen query, F1")
    parser.add_argument("--work", type=Path, help="keep the data and stores here (reused by later runs)")
    return run_in_work_dir(parser.parse_args(), run)


if __name__ == "__main__":
    sys.exit(main())
