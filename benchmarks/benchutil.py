"""Small helpers shared by the benchmark scripts: timing, memory, tables."""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np


class Stopwatch:
    """`lap()` returns the seconds since the previous lap (or the start)."""

    def __init__(self) -> None:
        self._last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        elapsed, self._last = now - self._last, now
        return elapsed


def memory() -> dict[str, float]:
    """This process's resident set in MiB (Linux /proc): now, at its peak, and
    now split into anonymous memory and pages of mapped files (a memory-mapped
    index counts in the latter as far as it was touched)."""
    fields = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) / 1024
    return {
        "rss_mb": fields["VmRSS"],
        "peak_mb": fields["VmHWM"],
        "anon_mb": fields["RssAnon"],
        "file_mb": fields["RssFile"],
    }


def percentiles(samples: Sequence[float]) -> dict[str, float]:
    """p50, p95 and the maximum of `samples` (same unit)."""
    values = np.asarray(samples, dtype=float)
    return {
        "p50": float(np.percentile(values, 50)),
        "p95": float(np.percentile(values, 95)),
        "max": float(values.max()),
    }


def machine_load() -> str:
    """Load averages, core count and a speed probe, to note what else was
    running and how fast a core was (on a shared virtual machine the same
    work can take a third longer from one hour to the next)."""
    one, five, fifteen = os.getloadavg()
    started = time.perf_counter()
    total = 0
    for number in range(5_000_000):
        total += number
    probe = time.perf_counter() - started
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores; 5M-step Python loop {probe:.2f} s"


def format_table(header: tuple[str, str], rows: Iterable[tuple[str, str]]) -> str:
    """Two aligned columns with a rule under the header."""
    rows = [header, *rows]
    width = max(len(label) for label, _ in rows)
    lines = [f"{label:<{width}}  {value}" for label, value in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(lines)


def run_in_work_dir(args: argparse.Namespace, run: Callable[[argparse.Namespace, Path], int]) -> int:
    """Call `run(args, work)` with `args.work` (created if needed), or with a
    temporary directory removed afterwards when no --work was given."""
    if args.work is None:
        with tempfile.TemporaryDirectory(prefix="coqa-bench-") as work:
            return run(args, Path(work))
    args.work.mkdir(parents=True, exist_ok=True)
    return run(args, args.work)
