"""The fixed cost of one question: CPU and latency per stage of the pipeline,
on the bench store alone and, paired in the same process, on a large store
with the bench inside.

    python benchmarks/bench_question_cost.py --store /tmp/s [--large /tmp/s10m] [--limit N] [--rounds R] [--json FILE]

Every dev question of pkubase-bench (or of `--questions`) is answered with
the shipped model (or `--model`; on the large store `--large-model` if given,
for a model trained on the large store) through `Pipeline.answer`, once per
store and round, the stores taking turns question by question so that both
see the same machine load.
CPU time (`time.process_time`, all threads of this process) is the figure to
compare on a shared machine; wall time gives p50/p95 latency.

The stages are timed by wrapping the pipeline's own methods (nothing of
coqa is changed): `detect` (mention detection), `link` (link candidates,
their KB features and scores), `generate` (query generation, its KB queries
included), `featurize` (ranking features), `score` (the ranker's boosted
model), and `other` (the rest of `answer`: the explanation records and
running the chosen query). Time spent inside the knowledge base's `select`
is also reported on its own (`kb select`, part of the stages above), with
the number of queries per question, and the CPU time of query generation's
queries by template (`coqa/queries/NAME.rq`: rendering, admission, the
store's evaluation and the conversion of the rows), and that of the
linker's look-ups of its candidates' KB features by template (their edges
out and in, a hub's types and predicate counts: part of `link`).

To compare two versions of the code, run it alternately with `PYTHONPATH`
pointing at a checkout of the other version and compare the `--json` files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import machine_load, percentiles  # noqa: E402

import coqa  # noqa: E402
from coqa.config import load_settings  # noqa: E402
from coqa.dataset import read_ccks  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402
from coqa.templates import Template  # noqa: E402

BENCH = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "pkubase-bench"
STAGES = ("detect", "link", "generate", "featurize", "score")


class StageClock:
    """CPU and wall seconds per stage of the question being answered."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)
        self.queries = 0
        self.template_cpu: dict[str, float] = defaultdict(float)
        self.template_calls: dict[str, int] = defaultdict(int)
        self.rendered: dict[str, str] = {}  # query text -> name of the linker's template it was rendered from
        self.lookup_cpu: dict[str, float] = defaultdict(float)
        self.lookup_calls: dict[str, int] = defaultdict(int)

    def reset(self) -> None:
        self.cpu.clear()
        self.wall.clear()
        self.queries = 0
        self.template_cpu.clear()
        self.template_calls.clear()
        self.rendered.clear()
        self.lookup_cpu.clear()
        self.lookup_calls.clear()

    def timed(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function`, adding the time of each call to `stage`."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.cpu[stage] += time.process_time() - cpu
                self.wall[stage] += time.perf_counter() - wall
                if stage == "kb select":
                    self.queries += 1
                    self._lookup(args[0] if args else kwargs["query"], time.process_time() - cpu)

        return wrapper

    def _lookup(self, query: str, seconds: float) -> None:
        """Add a query's CPU seconds to the linker's template it was rendered from, if any."""
        name = self.rendered.pop(query, None)
        if name is not None:
            self.lookup_cpu[name] += seconds
            self.lookup_calls[name] += 1

    def by_template(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """`function(name, ...)` (a query of template `name`), adding the CPU time of each call to `name`."""

        def wrapper(name: str, *args: Any, **kwargs: Any) -> Any:
            cpu = time.process_time()
            try:
                return function(name, *args, **kwargs)
            finally:
                self.template_cpu[name] += time.process_time() - cpu
                self.template_calls[name] += 1

        return wrapper


class NotedTemplate:
    """A template whose rendered queries are noted in `clock.rendered` with its name."""

    def __init__(self, name: str, template: Template, clock: StageClock) -> None:
        self.name, self.template, self.clock = name, template, clock

    def render(self, bindings: Mapping[str, Any]) -> str:
        query = self.template.render(bindings)
        self.clock.rendered[query] = self.name
        return query


def instrumented(store: Path, model: Path | None, clock: StageClock) -> Pipeline:
    """A pipeline over `store` whose stages report to `clock`."""
    flags: dict[str, str] = {"store": str(store)}
    if model is not None:
        flags["model"] = str(model)
    pipeline = Pipeline.from_settings(load_settings(flags=flags))
    assert pipeline.linker is not None and pipeline.ranker is not None and pipeline.ranker.model.scorer is not None
    pipeline.detect = clock.timed("detect", pipeline.detect)  # type: ignore[method-assign]
    pipeline.linker.link = clock.timed("link", pipeline.linker.link)  # type: ignore[method-assign]
    pipeline.generate_recorded = clock.timed("generate", pipeline.generate_recorded)  # type: ignore[method-assign]
    pipeline.ranker.featurize = clock.timed("featurize", pipeline.ranker.featurize)  # type: ignore[method-assign]
    scorer = pipeline.ranker.model.scorer
    scorer.score = clock.timed("score", scorer.score)  # type: ignore[method-assign]
    # The linker and the generator hold the same KB object as the pipeline.
    pipeline.kb.select = clock.timed("kb select", pipeline.kb.select)  # type: ignore[method-assign]
    pipeline.generator.reader.select = clock.by_template(pipeline.generator.reader.select)  # type: ignore[method-assign]
    # The linker's own copy of the templates, so that only its look-ups are noted.
    pipeline.linker.templates = {name: NotedTemplate(name, t, clock) for name, t in pipeline.linker.templates.items()}  # type: ignore[misc]
    return pipeline


class Run:
    """Per-question figures of one store."""

    def __init__(self, name: str, store: Path, model: Path | None) -> None:
        self.name = name
        self.clock = StageClock()
        self.pipeline = instrumented(store, model, self.clock)
        self.cpu: list[float] = []
        self.wall: list[float] = []
        self.queries: list[int] = []
        self.stage_cpu: dict[str, list[float]] = defaultdict(list)
        self.stage_wall: dict[str, list[float]] = defaultdict(list)
        self.template_cpu: dict[str, float] = defaultdict(float)
        self.template_calls: dict[str, int] = defaultdict(int)
        self.lookup_cpu: dict[str, float] = defaultdict(float)
        self.lookup_calls: dict[str, int] = defaultdict(int)

    def answer(self, question: str) -> None:
        self.clock.reset()
        cpu, wall = time.process_time(), time.perf_counter()
        self.pipeline.answer(question)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        self.cpu.append(cpu)
        self.wall.append(wall)
        self.queries.append(self.clock.queries)
        staged_cpu = sum(self.clock.cpu[s] for s in STAGES)
        staged_wall = sum(self.clock.wall[s] for s in STAGES)
        for stage in (*STAGES, "kb select"):
            self.stage_cpu[stage].append(self.clock.cpu[stage])
            self.stage_wall[stage].append(self.clock.wall[stage])
        self.stage_cpu["other"].append(cpu - staged_cpu)
        _add_counts(self.template_cpu, self.template_calls, self.clock.template_cpu, self.clock.template_calls)
        _add_counts(self.lookup_cpu, self.lookup_calls, self.clock.lookup_cpu, self.clock.lookup_calls)
        self.stage_wall["other"].append(wall - staged_wall)

    def summary(self) -> dict[str, Any]:
        wall, cpu = percentiles(self.wall), percentiles(self.cpu)
        stages = {
            stage: {
                "cpu_mean_ms": 1000 * float(np.mean(self.stage_cpu[stage])),
                "wall_p50_ms": 1000 * percentiles(self.stage_wall[stage])["p50"],
                "wall_p95_ms": 1000 * percentiles(self.stage_wall[stage])["p95"],
            }
            for stage in (*STAGES, "other", "kb select")
        }
        return {
            "questions": len(self.cpu),
            "cpu_mean_ms": 1000 * float(np.mean(self.cpu)),
            "cpu_p50_ms": 1000 * cpu["p50"],
            "cpu_p95_ms": 1000 * cpu["p95"],
            "wall_p50_ms": 1000 * wall["p50"],
            "wall_p95_ms": 1000 * wall["p95"],
            "queries_per_question": float(np.mean(self.queries)),
            "stages": stages,
            "generation_queries": _per_question(self.template_cpu, self.template_calls, len(self.cpu)),
            "linking_queries": _per_question(self.lookup_cpu, self.lookup_calls, len(self.cpu)),
        }


def _add_counts(cpu: dict[str, float], calls: dict[str, int], more_cpu: Mapping[str, float], more_calls: Mapping[str, int]) -> None:
    """Add one question's CPU seconds and calls per template to the run's."""
    for name, seconds in more_cpu.items():
        cpu[name] += seconds
        calls[name] += more_calls[name]


def _per_question(cpu: Mapping[str, float], calls: Mapping[str, int], questions: int) -> dict[str, dict[str, float]]:
    """CPU ms and calls per question of each template, the costliest first."""
    return {
        name: {"cpu_ms_per_question": 1000 * cpu[name] / questions, "calls_per_question": calls[name] / questions}
        for name in sorted(cpu, key=lambda name: -cpu[name])
    }


def print_summary(name: str, summary: dict[str, Any]) -> None:
    print(
        f"{name}: {summary['questions']} questions; CPU per question mean {summary['cpu_mean_ms']:.1f} ms, "
        f"p50 {summary['cpu_p50_ms']:.1f} ms, p95 {summary['cpu_p95_ms']:.1f} ms; "
        f"latency p50 {summary['wall_p50_ms']:.1f} ms, p95 {summary['wall_p95_ms']:.1f} ms; "
        f"{summary['queries_per_question']:.1f} KB queries per question"
    )
    print(f"  {'stage':<10}  {'CPU mean ms':>11}  {'wall p50 ms':>11}  {'wall p95 ms':>11}")
    for stage, figures in summary["stages"].items():
        print(f"  {stage:<10}  {figures['cpu_mean_ms']:>11.2f}  {figures['wall_p50_ms']:>11.2f}  {figures['wall_p95_ms']:>11.2f}")
    for title, key in (("query generation template", "generation_queries"), ("linking look-up template", "linking_queries")):
        print(f"  {title:<26}  {'CPU ms/question':>15}  {'calls/question':>14}")
        for template, figures in summary[key].items():
            print(f"  {template:<26}  {figures['cpu_ms_per_question']:>15.2f}  {figures['calls_per_question']:>14.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, required=True, help="store of pkubase-bench (made by `coqa load`)")
    parser.add_argument("--large", type=Path, help="a large store with pkubase-bench inside (`coqa load --append`)")
    parser.add_argument("--model", type=Path, help="model directory (default: the shipped model)")
    parser.add_argument(
        "--large-model", type=Path,
        help="model directory for the large store (default: --model): one trained with `coqa train --store LARGE`",
    )  # fmt: skip
    parser.add_argument("--questions", type=Path, default=BENCH / "dev.txt", help="CCKS question file (default: bench dev)")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--rounds", type=int, default=1, help="answer every question this many times per store")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    args = parser.parse_args()
    questions = [q.question for q in read_ccks(args.questions)][: args.limit]
    runs = [Run("bench store", args.store, args.model)]
    if args.large is not None:
        runs.append(Run("large store", args.large, args.large_model or args.model))
    for run in runs:  # warm the model, the caches and the stores' first pages
        run.pipeline.answer(questions[0])
    print(f"code: {Path(coqa.__file__).parent}")
    print(machine_load())
    for _ in range(args.rounds):
        for question in questions:
            for run in runs:
                run.answer(question)
    print(machine_load())
    summaries = {run.name: run.summary() for run in runs}
    for name, summary in summaries.items():
        print_summary(name, summary)
    if len(runs) == 2:
        bench, large = summaries["bench store"], summaries["large store"]
        summaries["large_over_bench_cpu"] = large["cpu_mean_ms"] / bench["cpu_mean_ms"]
        print(f"large store / bench store, CPU per question: {summaries['large_over_bench_cpu']:.2f}x")
    if args.json is not None:
        args.json.write_text(json.dumps(summaries, indent=1), encoding="utf-8")
    for run in runs:
        run.pipeline.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
