"""gStore's memory while it answers queries: a real gStore 1.2 over
pkubase-bench (`coqa export --to gstore`), sent N one-hop queries through
coqa's gStore backend; prints the resident memory of the ghttp processes
(anonymous and file-backed) and the size of gStore's log folder every
`--every` queries.

Two query mixes tell a leak per request from a cache of distinct queries:
`--mix repeat` sends the same 20 queries over and over, `--mix distinct`
one query per entity of the data (cycling when there are fewer entities
than queries). `--querylog off` sets conf.ini querylog_mode=0.

    python benchmarks/bench_gstore_memory.py [--queries 20000] [--every 2000]
        [--mix distinct|repeat] [--querylog on|off]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coqa.kb.backends.gstore import GStore  # noqa: E402
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
    parser.add_argument("--mix", choices=("distinct", "repeat"), default="distinct")
    parser.add_argument("--querylog", choices=("on", "off"), default="on")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-gstore-memory-") as temp:
        work = Path(temp)
        nt_file = work / "pkubase-gstore.nt"
        export_kb([args.data], GSTORE, nt_file, progress=False)
        names = subjects(nt_file, 20 if args.mix == "repeat" else args.queries)
        conf = {"querylog_mode": "0"} if args.querylog == "off" else None
        with serve_gstore(SHARED / "tools" / "gstore-1.2", nt_file, work, conf=conf) as server:
            home = work / "gstore-home"
            gstore = GStore(server.url, server.db, timeout=30, retries=0)
            print(f"gStore 1.2, {len(names)} distinct queries cycled, querylog {args.querylog}")
            print(f"{'queries':>8}{'seconds':>9}  {'per ghttp process: anon MB / file MB':<40}{'logs/ MB':>9}")
            started = time.perf_counter()
            for sent, name in enumerate(itertools.islice(itertools.cycle(names), args.queries + 1)):
                if sent % args.every == 0:
                    usage = "  ".join(f"{anon:7.1f} / {mapped:5.1f}" for anon, mapped in map(memory_mb, ghttp_processes(home)))
                    print(f"{sent:>8}{time.perf_counter() - started:>9.1f}  {usage:<40}{folder_mb(home / 'logs'):>9.1f}", flush=True)
                gstore.select(QUERY.format(entity=name))
            gstore.close()


if __name__ == "__main__":
    main()
