"""Load throughput and one-hop lookup latency, embedded and over HTTP.

    python benchmarks/bench_load.py [--triples 1000000] [--data DIR] [--no-server] [--format nlpcc]

Generates N synthetic PKU BASE triples (benchmarks/synthetic.py; with
`--format nlpcc`, N lines of an NLPCC KB file) unless --data names a
directory of such files, loads them with coqa's loader
into a fresh store, then times `select ?x where { <e> <p> ?x }` for random
(e, p) pairs that occur in the data: on the embedded store
(OxigraphStore.select) and on a real `oxigraph serve` process on 127.0.0.1
over a copy of the store (SparqlEndpoint.select).

Targets: >= 100k triples/s end to end at 10M triples; one-hop p50
<= 1 ms on the embedded store; the same throughput for NLPCC KB lines at 10M.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import random
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

from benchutil import Stopwatch, format_table, machine_load, memory, percentiles, run_in_work_dir

from coqa.kb import STORE_SUBDIR
from coqa.kb.base import KnowledgeBase
from coqa.kb.loading.loader import LoadReport, load_kb
from coqa.kb.names import sparql_name
from coqa.testing.oxigraph_server import serve_store_copy
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint

SERVER_START_TIMEOUT = 120.0
# The files loaded, and the one lookups are sampled from, per format.
_SOURCES = {"pkubase": "pkubase-*", "nlpcc": "nlpcc*"}
_TRIPLE_FILES = {"pkubase": "pkubase-triples*", "nlpcc": "nlpcc*"}


def generate(out: Path, triples: int, seed: int, kb_format: str) -> float:
    """Write synthetic files into `out` in a separate process; the seconds it took."""
    clock = Stopwatch()
    script = Path(__file__).resolve().parent / "synthetic.py"
    command = [sys.executable, str(script), "--triples", str(triples), "--out", str(out), "--seed", str(seed)]
    command += ["--format", kb_format]
    subprocess.run(command, check=True)
    return clock.lap()


def count_lines(path: Path) -> int:
    """Number of lines in a file (a last line without `\\n` counts)."""
    lines, last = 0, b"\n"
    with open(path, "rb") as source:
        while block := source.read(1 << 24):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def _pkubase_pair(line: str) -> tuple[str, str] | None:
    fields = line.split("\t")
    if len(fields) < 3 or not fields[0].startswith("<") or not fields[1].startswith("<"):
        return None
    return fields[0][1:-1], fields[1][1:-1]


def _nlpcc_pair(line: str) -> tuple[str, str] | None:
    fields = line.split(" ||| ")
    return (fields[0].strip(), fields[1].strip()) if len(fields) == 3 else None


def sample_pairs(triples_file: Path, count: int, seed: int) -> list[tuple[str, str]]:
    """`count` (subject, predicate) name pairs drawn uniformly from the lines
    of a PKU BASE triples file or an NLPCC KB file (reservoir sampling; lines
    that do not parse are skipped)."""
    pair_of = _nlpcc_pair if triples_file.name.startswith("nlpcc") else _pkubase_pair
    rng = random.Random(seed)
    reservoir: list[tuple[str, str]] = []
    seen = 0
    with open(triples_file, encoding="utf-8", errors="replace") as source:
        for line in source:
            pair = pair_of(line)
            if pair is None:
                continue
            if len(reservoir) < count:
                reservoir.append(pair)
            elif (slot := rng.randrange(seen + 1)) < count:
                reservoir[slot] = pair
            seen += 1
    return reservoir


def one_hop_queries(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"select ?x where {{ {sparql_name(e)} {sparql_name(p)} ?x }}" for e, p in pairs]


def time_queries(kb: KnowledgeBase, queries: list[str]) -> list[tuple[dict[str, float], int]]:
    """Latency percentiles (ms) of two passes over `queries` and how many
    queries had an answer: the first pass meets cold caches (the store was
    just opened, each pair is asked for the first time), the second is warm."""
    passes = []
    for _ in range(2):
        latencies, answered = [], 0
        clock = Stopwatch()
        for query in queries:
            clock.lap()
            rows = kb.select(query).rows
            latencies.append(clock.lap() * 1000)
            answered += bool(rows)
        passes.append((percentiles(latencies), answered))
    return passes


def profiled(function: Callable[[], object], top: int) -> tuple[object, str]:
    """Run `function` under cProfile; its result and the top functions by own time."""
    profile = cProfile.Profile()
    result = profile.runcall(function)
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return result, text.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark loading and one-hop lookups.")
    parser.add_argument("--triples", type=int, default=1_000_000, help="synthetic triples to generate (default 1M)")
    parser.add_argument("--data", type=Path, help="load this directory of PKU BASE (or NLPCC) files instead of generating")
    parser.add_argument(
        "--format", choices=("pkubase", "nlpcc"), default="pkubase", help="PKU BASE files or an NLPCC KB file (nlpcc*)"
    )
    parser.add_argument("--work", type=Path, help="working directory (default: a temporary one, removed at the end)")
    parser.add_argument("--lookups", type=int, default=1000, help="one-hop queries per backend (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed for data and samples (default 0)")
    parser.add_argument("--no-server", action="store_true", help="skip the oxigraph serve measurement")
    parser.add_argument(
        "--no-mentions", action="store_true", help="load only the triples and types files (no mention2ent file)"
    )
    parser.add_argument("--profile", type=int, metavar="N", default=0, help="cProfile the load, print the top N functions")
    args = parser.parse_args(argv)
    if args.data is not None and not any(args.data.glob(_TRIPLE_FILES[args.format])):
        parser.error(f"no {_TRIPLE_FILES[args.format]} file in {args.data}")
    return run_in_work_dir(args, run)


def run(args: argparse.Namespace, work: Path) -> int:
    rows: list[tuple[str, str]] = [("machine (before)", machine_load())]
    data = args.data
    if data is None:
        data = work / "data"
        rows.append(("generate (separate process)", f"{generate(data, args.triples, args.seed, args.format):.1f} s"))
    sources = sorted(data.glob(_SOURCES[args.format]))
    if args.no_mentions:
        sources = [path for path in sources if "mention2ent" not in path.name]
    inputs = {path.name: count_lines(path) for path in sources}
    for name, lines in inputs.items():
        rows.append((f"input {name}", f"{lines:,} lines"))
    store_dir = work / "store"
    shutil.rmtree(store_dir, ignore_errors=True)
    note(f"loading {sum(inputs.values()):,} lines from {data}")
    cpu_before = cpu_seconds()
    clock = Stopwatch()
    kb_format = "nlpcc" if args.format == "nlpcc" else None
    load = functools.partial(load_kb, sources, store_dir, mode="new", progress=False, kb_format=kb_format)
    report, profile_text = profiled(load, args.profile) if args.profile else (load(), "")
    seconds = clock.lap()
    rows += load_rows(report, inputs, seconds)
    own, children = (after - before for after, before in zip(cpu_seconds(), cpu_before))
    rows.append(
        (
            "load: CPU time, this process / index process",
            f"{own:.0f} s / {children:.0f} s ({(own + children) / seconds:.2f} cores busy on average)",
        )
    )
    rows.append(("load: peak RSS of this process", f"{memory()['peak_mb']:,.0f} MB"))
    child_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rows.append(("load: peak RSS of the largest child process", f"{child_peak:,.0f} MB (generator, index builder)"))
    rows.append(("machine (after load)", machine_load()))
    note("timing one-hop lookups")
    queries = one_hop_queries(sample_pairs(next(data.glob(_TRIPLE_FILES[args.format])), args.lookups, args.seed))
    embedded = OxigraphStore(store_dir / STORE_SUBDIR)
    rows += latency_rows("one-hop embedded (OxigraphStore)", time_queries(embedded, queries), len(queries))
    embedded.close()
    if not args.no_server:
        with serve_store_copy(store_dir / STORE_SUBDIR, work) as url:
            endpoint = SparqlEndpoint(url, timeout=30.0)
            rows += latency_rows("one-hop oxigraph serve (SparqlEndpoint)", time_queries(endpoint, queries), len(queries))
    print(format_table(("benchmark", "result"), rows))
    if profile_text:
        print(profile_text)
    return 0


def cpu_seconds() -> tuple[float, float]:
    """User + system CPU seconds of this process (all its threads) and of its
    finished child processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def note(message: str) -> None:
    print(f"bench_load: {message}", file=sys.stderr, flush=True)


def load_rows(report: LoadReport, inputs: dict[str, int], seconds: float) -> list[tuple[str, str]]:
    """Table rows for the load: time per file, counts and throughput."""
    triple_lines = sum(lines for name, lines in inputs.items() if "mention2ent" not in name)
    rows = [(f"load: {Path(f.path).name}", f"{f.seconds:.1f} s") for f in report.files]
    total = report.total
    rows += [
        ("load: wall time (end to end)", f"{seconds:.1f} s"),
        (
            "load: lines loaded / repaired / rejected / blank",
            f"{total.loaded:,} / {total.repaired:,} / {total.rejected:,} / {total.blank:,}"
            f" (sum {total.loaded + total.repaired + total.rejected + total.blank:,} of {total.lines:,})",
        ),
        ("load: triples in store / mention index entries", f"{report.triples:,} / {report.index_entries:,}"),
        ("load: triples/s (triple + type lines / wall time)", f"{triple_lines / seconds:,.0f}   [target >= 100,000]"),
        ("load: input lines/s (all files)", f"{sum(inputs.values()) / seconds:,.0f}"),
    ]
    if total.repairs or total.rejects:
        rows.append(("load: repairs, rejects", f"{dict(total.repairs)}, {dict(total.rejects)}"))
    return rows


def latency_rows(label: str, passes: list[tuple[dict[str, float], int]], total: int) -> list[tuple[str, str]]:
    return [
        (
            f"{label}, {name}",
            f"p50 {latency['p50']:.3f} ms  p95 {latency['p95']:.3f} ms  max {latency['max']:.1f} ms"
            f"  answered {answered}/{total}",
        )
        for name, (latency, answered) in zip(("cold", "warm"), passes)
    ]


if __name__ == "__main__":
    sys.exit(main())
