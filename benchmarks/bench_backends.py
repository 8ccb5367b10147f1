"""The pipeline on pkubase-bench dev questions through every backend, side by
side in one run: embedded store, `oxigraph serve`, a real gStore (loaded with
`coqa export --to gstore`) and a real Virtuoso (`coqa export --to ntriples`).

Each question is answered by every backend in turn before the next question
(each question starting with the next backend), so all backends see the same
machine load (this machine is shared and noisy). Two variants of one server
are not independent: the one listed second mostly sends its queries just
after the first sent the same, and Virtuoso answers a repeat sooner (15-25
ms a question at p50), so compare such variants in both orders.
Prints, per backend: averaged F1, latency p50/p95 per question, SPARQL
queries per question and their median time, and the ratio of each p50 to the
embedded store's.

    python benchmarks/bench_backends.py [--data ../shared/data/pkubase-bench] [--limit N]
        [--backends embedded,oxigraph-serve,gstore,virtuoso] [--show N]

Variants, to compare settings side by side in one run (any backend list):
`gstore-nolog` is a second gStore with its query log off (conf.ini
querylog_mode=0), `gstore-quiet` one with its debug log off too (log4cplus
root logger at WARN; shipped: TRACE, every request to logs/debug.log);
`virtuoso-noestimate` is a second Virtuoso with its query cost estimation
off (virtuoso.ini [SPARQL] MaxQueryCostEstimationTime = 0; packaged: 400,
an estimate made for every query); a name ending in `/per-question` keeps the rows of a
query for the question that asked only (kb_cache_seconds 0 under `coqa
serve`; what coqa did with remote engines before rows were kept for a run),
one ending in `/serial` sends a question's queries one at a time (what does
not depend on each other otherwise goes to a server 3 at a time), one ending in
`/batched` counts the predicates around up to 8 linked nodes in one query
(kb_nodes_per_query 8; default: a query per node), e.g.
`--backends embedded,gstore,gstore/per-question,gstore/serial,gstore/batched`.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coqa.batch import answer_safely  # noqa: E402
from coqa.config import load_settings  # noqa: E402
from coqa.dataset import read_ccks  # noqa: E402
from coqa.evaluation.validate import assess, summarize  # noqa: E402
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR  # noqa: E402
from coqa.kb.loading.export import GSTORE, NTRIPLES, export_kb  # noqa: E402
from coqa.testing.gstore_server import serve_gstore  # noqa: E402
from coqa.kb.loading.loader import load_kb  # noqa: E402
from coqa.testing.oxigraph_server import serve_store_copy  # noqa: E402
from coqa.testing.virtuoso_server import serve_virtuoso  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
BACKENDS = ("embedded", "oxigraph-serve", "gstore", "gstore-nolog", "gstore-quiet", "virtuoso", "virtuoso-noestimate")
PER_QUESTION = "/per-question"
SERIAL = "/serial"
BATCHED = "/batched"
VARIANTS = (PER_QUESTION, SERIAL, BATCHED)


class Rows(NamedTuple):
    """What a query gave: how many rows, and the distinct ones."""

    count: int
    distinct: frozenset


class CountingKB:
    """Wraps a knowledge base: counts and times its queries, and keeps each
    query's text with its Rows (None when it failed), so that the queries
    behind a difference in answers can be named."""

    def __init__(self, kb: object, parallel_queries: int | None = None) -> None:
        self.kb = kb
        self.description = kb.description  # type: ignore[attr-defined]
        self.parallel_queries = getattr(kb, "parallel_queries", 1) if parallel_queries is None else parallel_queries
        self.seconds: list[float] = []
        self.results: list[tuple[str, Rows | None]] = []

    def select(self, query: str):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        rows = None
        try:
            result = self.kb.select(query)  # type: ignore[attr-defined]
            rows = Rows(len(result.rows), frozenset(result.rows))
            return result
        finally:
            self.seconds.append(time.perf_counter() - started)
            self.results.append((query, rows))

    def close(self) -> None:
        self.kb.close()  # type: ignore[attr-defined]


def start_backends(names: list[str], data: Path, work: Path, stack: ExitStack) -> dict[str, dict[str, object]]:
    """Settings flags per backend, starting the servers they need."""
    store = work / "store"
    load_kb([data], store, progress=False)
    index = str(store / INDEX_SUBDIR)
    flags: dict[str, dict[str, object]] = {}
    for name in dict.fromkeys(_server(name) for name in names):
        if name == "embedded":
            flags[name] = {"backend": "oxigraph", "store": str(store)}
        elif name == "oxigraph-serve":
            url = stack.enter_context(serve_store_copy(store / STORE_SUBDIR, work))
            flags[name] = {"backend": "sparql", "endpoint": url, "mention_index": index}
        elif name in ("gstore", "gstore-nolog", "gstore-quiet"):
            if not (work / "pkubase-gstore.nt").exists():
                export_kb([data], GSTORE, work / "pkubase-gstore.nt", progress=False)
            conf = None if name == "gstore" else {"querylog_mode": "0"}
            level = "WARN" if name == "gstore-quiet" else None
            (work / name).mkdir()
            server = stack.enter_context(
                serve_gstore(SHARED / "tools" / "gstore-1.2", work / "pkubase-gstore.nt", work / name, conf=conf, log_level=level)
            )
            flags[name] = {"backend": "gstore", "gstore_url": server.url, "gstore_db": server.db, "mention_index": index}
        elif name in ("virtuoso", "virtuoso-noestimate"):
            if not (work / "virtuoso-load").exists():
                (work / "virtuoso-load").mkdir()
                export_kb([data], NTRIPLES, work / "virtuoso-load" / "pkubase.nt", progress=False)
            settings = {"MaxQueryCostEstimationTime": "0"} if name == "virtuoso-noestimate" else {}
            (work / name).mkdir()
            url = stack.enter_context(
                serve_virtuoso(SHARED / "tools" / "virtuoso" / "start-virtuoso.sh", work / "virtuoso-load", work / name, settings)
            )
            flags[name] = {"backend": "sparql", "endpoint": url, "mention_index": index}
        else:
            raise SystemExit(f"unknown backend {name!r}: choose from {', '.join(BACKENDS)}")
    return {name: flags[_server(name)] for name in names}


def _server(name: str) -> str:
    """The backend a variant runs on."""
    for variant in VARIANTS:
        name = name.removesuffix(variant)
    return name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "pkubase-bench")
    parser.add_argument("--limit", type=int, default=0, help="first N dev questions (default: all)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--show", type=int, default=0, help="for N differing questions per backend, print the queries whose rows differ")
    args = parser.parse_args()
    names = args.backends.split(",")
    questions = read_ccks(args.data / "dev.txt")
    if args.limit:
        questions = questions[: args.limit]
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as temp, ExitStack() as stack:
        work = Path(temp)
        flags = start_backends(names, args.data, work, stack)
        pipelines: dict[str, Pipeline] = {}
        counters: dict[str, CountingKB] = {}
        for name in names:
            nodes_per_query = {"kb_nodes_per_query": 8} if name.endswith(BATCHED) else {}
            opened = Pipeline.from_settings(load_settings(flags={**flags[name], **nodes_per_query}))
            # Under the pipeline's result cache: the queries sent.
            counters[name] = CountingKB(opened.kb.kb, 1 if name.endswith(SERIAL) else None)
            lifetime = 0.0 if name.endswith(PER_QUESTION) else None
            pipelines[name] = Pipeline(
                counters[name], opened.index, opened.model, opened.templates, opened.settings, opened.extra_spans, lifetime  # type: ignore[arg-type]
            )
        outcomes: dict[str, list] = {name: [] for name in names}
        queries: dict[str, list[dict[str, Rows | None]]] = {name: [] for name in names}
        started = time.perf_counter()
        for number, question in enumerate(questions):
            # Each question starts with the next backend: none always runs first, or just after a variant
            # of itself that warmed the same server.
            for name in names[number % len(names) :] + names[: number % len(names)]:
                first = len(counters[name].results)
                begin = time.perf_counter()
                answer = answer_safely(pipelines[name], question.question)
                outcomes[name].append(assess(question, answer, time.perf_counter() - begin))  # type: ignore[arg-type]
                queries[name].append(dict(counters[name].results[first:]))
        wall = time.perf_counter() - started
        report_table(names, outcomes, counters, len(questions), wall)
        report_differences(names, outcomes, questions, queries, args.show)


def report_table(names: list[str], outcomes: dict[str, list], counters: dict[str, CountingKB], count: int, wall: float) -> None:
    print(f"{count} dev questions, every backend in turn per question; {wall:.0f} s in all")
    width = max(16, *(len(name) + 1 for name in names))
    print(f"{'backend':<{width}}{'avg F1':>8}{'p50 ms':>9}{'p95 ms':>9}{'x embedded':>12}{'queries/q':>11}{'query p50 ms':>14}")
    base = None
    for name in names:
        report = summarize(outcomes[name], wall)
        base = base or report.latency_p50
        queries = counters[name].seconds
        print(
            f"{name:<{width}}{report.scores.f1:>8.4f}{report.latency_p50 * 1000:>9.1f}{report.latency_p95 * 1000:>9.1f}"
            f"{report.latency_p50 / base:>12.2f}{len(queries) / count:>11.1f}{statistics.median(queries) * 1000:>14.2f}"
        )


def report_differences(
    names: list[str], outcomes: dict[str, list], questions: list, queries: dict[str, list], show: int
) -> None:
    """The questions where a backend's answers differ from the first backend's
    and, for the first `show` of them, every query both ran whose rows differ."""
    for name in names[1:]:
        differ = [
            index
            for index, (mine, base) in enumerate(zip(outcomes[name], outcomes[names[0]]))
            if set(mine.given_answers) != set(base.given_answers)
        ]
        print(f"{name}: answers differ from {names[0]} on {len(differ)} questions {[questions[i].number for i in differ]}")
        only_cut = 0
        for shown, index in enumerate(differ):
            base_queries, my_queries = queries[names[0]][index], queries[name][index]
            differing = [
                (text, base_queries[text], rows)
                for text, rows in my_queries.items()
                if text in base_queries and (base_queries[text] and base_queries[text].distinct) != (rows and rows.distinct)
            ]
            only_cut += bool(differing) and all(cut_by_limit(text, base) for text, base, _ in differing)
            if shown >= show:
                continue
            print(f"  question {questions[index].number}: {questions[index].question}")
            for text, base, rows in differing:
                cut = " (cut by its LIMIT)" if cut_by_limit(text, base) else ""
                failed = " (failed)" if rows is None else ""
                counts = " vs ".join(f"{r.count} rows ({len(r.distinct)} distinct)" if r else "-" for r in (base, rows))
                print(f"    {counts}{cut}{failed}: {' '.join(text.split())}")
            print(f"    queries only here: {len(set(my_queries) - set(base_queries))}")
        print(f"{name}: on {only_cut} of the {len(differ)}, every query whose rows differ is cut by its LIMIT")


def cut_by_limit(query: str, rows: Rows | None) -> bool:
    """Whether the query ends in LIMIT N and gave N rows (so which rows it kept is the engine's choice)."""
    match = re.search(r"LIMIT\s+(\d+)\s*$", query, re.I)
    return bool(match) and rows is not None and rows.count == int(match.group(1))


if __name__ == "__main__":
    main()
