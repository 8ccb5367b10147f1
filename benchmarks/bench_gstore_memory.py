"""gStore's memory while it answers queries: a real gStore 1.2 over
pkubase-bench (`coqa export --to gstore`), sent N one-hop queries through
coqa's gStore backend; prints the resident memory of the ghttp processes
(anonymous and file-backed) and the size of gStore's log folder every
`--every` queries.

Query mixes, to tell a leak per request from a cache of distinct queries
and find the kind of query that grows it: `--mix repeat` sends the same 20
one-hop queries over and over, `--mix distinct` one one-hop query per
entity of the data (cycling when there are fewer entities than queries),
`--mix kinds` the queries coqa sends for the first `--questions` dev
questions (recorded on the embedded store), kind after kind (a kind: the
text with its names and numbers blanked), `--queries` of each kind, with
the memory before and after each. `--querylog off` sets conf.ini
querylog_mode=0.

    python benchmarks/bench_gstore_memory.py [--queries 20000] [--every 2000]
        [--mix distinct|repeat|kinds] [--questions 200] [--querylog on|off]
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coqa.config import load_settings  # noqa: E402
from coqa.dataset import read_ccks  # noqa: E402
from coqa.kb.backends.gstore import GStore  # noqa: E402
from coqa.kb.base import KBError, KnowledgeBase, QueryResult  # noqa: E402
from coqa.kb.loading.loader import load_kb  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402
from coqa.kb.loading.export import GSTORE, export_kb  # noqa: E402
from coqa.kb.names import gstore_to_name  # noqa: E402
from coqa.testing.gstore_server import serve_gstore  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared"
QUERY = "SELECT ?p (COUNT(?o) AS ?n) WHERE {{ <{entity}> ?p ?o }} GROUP BY ?p"


def subjects(nt_file: Path, limit: int) -> list[str]:
    """Distinct subject names (PKU BASE form) of the export, in file order (at most `limit`)."""
    names: dict[str, None] = {}
    with nt_file.open(encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("<"):
                names.setdefault(gstore_to_name(line[1 : line.index(">")]), None)
                if len(names) >= limit:
                    break
    return list(names)


class Recording:
    """A knowledge base keeping the text of every query sent to it."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb, self.description, self.sent = kb, kb.description, []

    def select(self, query: str) -> QueryResult:
        self.sent.append(query)
        return self.kb.select(query)

    def close(self) -> None:
        self.kb.close()


def dev_queries_by_kind(data: Path, store: Path, questions: int) -> dict[str, list[str]]:
    """The distinct queries coqa sends for the first dev questions, by kind, most frequent kinds first."""
    opened = Pipeline.from_settings(load_settings(flags={"store": str(store)}))
    recording = Recording(opened.kb.kb)
    pipeline = Pipeline(recording, opened.index, opened.model, opened.templates, opened.settings, rows_lifetime=0)  # type: ignore[arg-type]
    for question in read_ccks(data / "dev.txt")[:questions]:
        pipeline.answer(question.question)
    pipeline.close()
    kinds: dict[str, list[str]] = defaultdict(list)
    for query in dict.fromkeys(recording.sent):
        blank = re.sub(r"\d+", "N", re.sub(r'<[^<>]*>|"[^"]*"', "<>", query))
        kinds[" ".join(blank.split())].append(query)
    return dict(sorted(kinds.items(), key=lambda kind: -len(kind[1])))


def usage(home: Path) -> str:
    """Memory of each ghttp process and the size of the log folder, for one line of the table."""
    processes = "  ".join(f"{anon:7.1f} / {mapped:5.1f}" for anon, mapped in map(memory_mb, ghttp_processes(home)))
    return f"{processes:<40}{folder_mb(home / 'logs'):>9.1f}"


def ghttp_processes(home: Path) -> list[int]:
    """PIDs of the ghttp processes running from the work folder `home` (monitor and server)."""
    binary = str((home / "bin" / "ghttp").resolve())
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "exe") == binary:
                    found.append(int(entry.name))
            except OSError:
                continue
    return sorted(found)


def memory_mb(pid: int) -> tuple[float, float]:
    """Resident anonymous and file-backed memory of `pid`, MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("RssAnon", "RssFile"):
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("RssAnon", 0.0), fields.get("RssFile", 0.0)


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / (1 << 20) if path.exists() else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SHARED / "data" / "pkubase-bench")
    parser.add_argument("--queries", type=int, default=20000)
    parser.add_argument("--every", type=int, default=2000)
    parser.add_argument("--mix", choices=("distinct", "repeat", "kinds"), default="distinct")
    parser.add_argument("--questions", type=int, default=200, help="dev questions whose queries --mix kinds sends")
    parser.add_argument("--querylog", choices=("on", "off"), default="on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-gstore-memory-") as temp:
        work = Path(temp)
        nt_file = work / "pkubase-gstore.nt"
        export_kb([args.data], GSTORE, nt_file, progress=False)
        if args.mix == "kinds":
            load_kb([args.data], work / "store", progress=False)
            kinds = dev_queries_by_kind(args.data, work / "store", args.questions)
        else:
            names = subjects(nt_file, 20 if args.mix == "repeat" else args.queries)
            kinds = {"one-hop predicate counts": [QUERY.format(entity=name) for name in names]}
        conf = {"querylog_mode": "0"} if args.querylog == "off" else None
        with serve_gstore(SHARED / "tools" / "gstore-1.2", nt_file, work, conf=conf) as server:
            home = work / "gstore-home"
            gstore = GStore(server.url, server.db, timeout=30, retries=0)
            print(f"gStore 1.2, querylog {args.querylog}, mix {args.mix}")
            print(f"{'queries':>8}{'seconds':>9}  {'per ghttp process: anon MB / file MB':<40}{'logs/ MB':>9}  kind (distinct queries)")
            started = time.perf_counter()
            for kind, queries in kinds.items():
                for sent, query in enumerate(itertools.islice(itertools.cycle(queries), args.queries)):
                    if sent % args.every == 0:
                        print(f"{sent:>8}{time.perf_counter() - started:>9.1f}  {usage(home)}", flush=True)
                    try:
                        gstore.select(query)
                    except KBError:
                        pass  # a query gStore refuses or fails still goes through its code
                print(f"{args.queries:>8}{time.perf_counter() - started:>9.1f}  {usage(home)}  {kind[:90]} ({len(queries)})", flush=True)
            gstore.close()


if __name__ == "__main__":
    main()
