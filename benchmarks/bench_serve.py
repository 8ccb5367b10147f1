"""Load benchmark of `coqa serve`: N concurrent clients on 127.0.0.1.

    coqa load ../shared/data/pkubase-bench --store /tmp/serve-s
    python benchmarks/bench_serve.py --store /tmp/serve-s [--workers 2] [--clients 1 4 16]
                                     [--requests 200] [--seconds 60]

Starts `coqa serve --workers W` over the store (it answers once its W
pipeline processes are up), warms them up, then for each client count runs that many threads,
each with its own kept-alive HTTP connection, posting questions of
pkubase-bench's dev.txt (read at run time; each client count starts at a
different question) to POST /answer until `--requests` requests are done or
`--seconds` have passed. Prints requests/s, latency p50/p95/p99, errors (any
reply but 200, or no reply), how many cores the server kept busy (CPU
seconds of its processes over the wall time: on a machine shared with
other work, fewer than its processes could use) and how many pipeline
processes were running or waiting for a core on average (what it would run
at once with the cores free), and the memory of the HTTP
process and of each pipeline process, with the machine's load and a
core-speed probe.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchutil import format_table, machine_load  # noqa: E402

from coqa.dataset import read_ccks  # noqa: E402
from coqa.testing.coqa_serve import coqa_serve  # noqa: E402
from coqa.testing.local_process import clean_environment  # noqa: E402

DEV_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "pkubase-bench" / "dev.txt"
REQUEST_TIMEOUT = 60.0


@dataclass
class LevelResult:
    clients: int
    seconds: float
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    server_cpu_seconds: float = 0.0
    runnable: float = 0.0  # pipeline processes running or waiting for a core, on average

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.seconds


def run_level(url: str, questions: list[str], clients: int, max_requests: int, max_seconds: float) -> LevelResult:
    """`clients` threads posting questions until `max_requests` are done or `max_seconds` passed."""
    pending = itertools.count()
    lock = threading.Lock()
    result = LevelResult(clients, 0.0)
    started = time.perf_counter()
    deadline = started + max_seconds

    def client() -> None:
        with requests.Session() as session:
            while time.perf_counter() < deadline:
                number = next(pending)
                if number >= max_requests:
                    return
                question = questions[number % len(questions)]
                sent = time.perf_counter()
                try:
                    reply = session.post(url + "/answer", json={"question": question}, timeout=REQUEST_TIMEOUT)
                    error = None if reply.status_code == 200 else f"{reply.status_code} {reply.text[:200]}"
                except requests.RequestException as failure:
                    error = f"no reply: {failure}"
                elapsed = time.perf_counter() - sent
                with lock:
                    (result.errors.append(error) if error else result.latencies.append(elapsed))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.seconds = time.perf_counter() - started
    return result


def rotated(items: list[str], start: int) -> list[str]:
    start %= len(items)
    return items[start:] + items[:start]


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used so far (Linux /proc)."""
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def sample_runnable(pids: list[int], stop: threading.Event, samples: list[int]) -> None:
    """Every 10 ms until `stop`, how many of `pids` are running or runnable
    (state R): what the server would run at once if it had the cores."""
    while not stop.wait(0.01):
        samples.append(sum(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "R" for pid in pids))


def process_memory(pid: int) -> tuple[float, float]:
    """Resident and peak resident memory of a process in MiB (Linux /proc)."""
    values = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(value.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def children(pid: int) -> list[int]:
    """Child processes of `pid` started by multiprocessing's spawn (its pipeline processes)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return [child for child in found if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def memory_report(server_pid: int) -> list[tuple[str, str]]:
    rows = []
    for label, pid in [("HTTP process", server_pid)] + [("pipeline process", child) for child in children(server_pid)]:
        rss, peak = process_memory(pid)
        rows.append((f"{label} {pid}", f"{rss:.0f} MiB resident (peak {peak:.0f} MiB)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path("/tmp/serve-s"), help="store made by `coqa load` (default /tmp/serve-s)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--requests", type=int, default=200, help="requests per client count (default 200)")
    parser.add_argument("--seconds", type=float, default=60.0, help="at most this long per client count (default 60)")
    parser.add_argument("--questions", type=Path, default=DEV_FILE, help="CCKS-format file whose questions are asked")
    args = parser.parse_args(argv)
    if not (args.store / "manifest.json").is_file():
        print(f"no store at {args.store}: coqa load ../shared/data/pkubase-bench --store {args.store}", file=sys.stderr)
        return 2
    questions = [q.question for q in read_ccks(args.questions)]
    print(f"machine before: {machine_load()}")
    with tempfile.TemporaryDirectory(prefix="coqa-bench-serve-") as work:
        env = clean_environment()
        options = ["--store", str(args.store), "--workers", str(args.workers)]
        with coqa_serve(options, Path(work) / "serve.log", env=env) as server:
            run_level(server.url, questions[::-1], max(args.clients), 4 * max(args.clients), args.seconds)  # warm-up
            # Each client count asks its own slice of the questions, so that no level
            # profits from what the pipeline cached while answering the one before.
            pipelines = children(server.process.pid)
            processes = [server.process.pid, *pipelines]
            results = []
            for index, clients in enumerate(args.clients):
                cpu_before = cpu_seconds(processes)
                stop, samples = threading.Event(), []
                sampler = threading.Thread(target=sample_runnable, args=(pipelines, stop, samples))
                sampler.start()
                level = run_level(server.url, rotated(questions, index * args.requests), clients, args.requests, args.seconds)
                stop.set()
                sampler.join()
                level.server_cpu_seconds = cpu_seconds(processes) - cpu_before
                level.runnable = sum(samples) / max(1, len(samples))
                results.append(level)
            memory = memory_report(server.process.pid)
    print(f"machine after:  {machine_load()}")
    print(f"coqa serve --workers {args.workers} --store {args.store}; {len(questions)} questions of {args.questions.name}, POST /answer")
    rows = []
    for level in results:
        lat = np.asarray(level.latencies) * 1000
        p50, p95, p99 = (np.percentile(lat, q) if len(lat) else float("nan") for q in (50, 95, 99))
        rows.append(
            (
                f"{level.clients} clients",
                f"{len(level.latencies)} requests in {level.seconds:.1f} s: {level.throughput:.1f} requests/s; "
                f"p50 {p50:.0f} ms, p95 {p95:.0f} ms, p99 {p99:.0f} ms; errors {len(level.errors)}; "
                f"server busy {level.server_cpu_seconds / level.seconds:.2f} cores, "
                f"{level.runnable:.2f} pipeline processes runnable",
            )
        )
    print(format_table(("clients", "result"), rows))
    base = results[0].throughput
    for level in results[1:]:
        print(f"throughput at {level.clients} clients = {level.throughput / base:.2f}x that of {results[0].clients} client(s)")
    print(format_table(("process", "memory"), memory))
    for level in results:
        for error in level.errors[:3]:
            print(f"error at {level.clients} clients: {error}")
    return 1 if any(level.errors for level in results) else 0


if __name__ == "__main__":
    sys.exit(main())
