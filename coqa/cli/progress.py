"""Progress of long runs (answer, eval, train) on stderr (the loader has its own, coqa.kb.loading.progress_bar).

On a terminal it is a tqdm bar. When stderr is not a terminal (a log file, a
pipe, a CI job) a bar would be noise, so a plain line is written every
`interval` seconds instead, e.g.

    coqa: answered 300/703 (42%), 12.3 q/s, eta 31 s

Items that failed (questions the knowledge base failed) are counted apart:
`answered 300/703 (42%), 4 failed, ...`.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, Iterable, Iterator, TextIO, TypeVar

from tqdm import tqdm

DEFAULT_INTERVAL = 10.0

Item = TypeVar("Item")


class Progress:
    """Counts done items out of `total` and shows it on `stream`.

    `update(done)` sets the count (it only grows); `advance()` adds one.
    Lines (not on a terminal) come at most every `interval` seconds; with
    interval 0, after every update. Close it (or use it as a context manager)
    to remove a terminal bar."""

    def __init__(
        self,
        total: int,
        verb: str,
        interval: float = DEFAULT_INTERVAL,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "q",
    ) -> None:
        self.total = total
        self.verb = verb
        self.unit = unit
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.done = 0
        self.failed = 0  # of the done items, how many failed (set by the caller)
        self.started = clock()
        self.last_line = self.started
        self.bar = tqdm(total=total, desc=verb, unit=unit, file=self.stream, leave=False) if self.stream.isatty() else None

    def update(self, done: int) -> None:
        """Record that `done` items are finished."""
        if done <= self.done:
            return
        if self.bar is not None:
            if self.failed:
                self.bar.set_postfix_str(f"{self.failed} failed", refresh=False)
            self.bar.update(done - self.done)
        self.done = done
        now = self.clock()
        if self.bar is None and now - self.last_line >= self.interval and done < self.total:
            self.last_line = now
            print(f"coqa: {self.line(now)}", file=self.stream, flush=True)

    def advance(self) -> None:
        """Record one more finished item."""
        self.update(self.done + 1)

    def line(self, now: float) -> str:
        """The progress line at time `now`: count, share, rate and time left."""
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        share = self.done / self.total if self.total else 1.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        failed = f", {self.failed} failed" if self.failed else ""
        return f"{self.verb} {self.done}/{self.total} ({share:.0%}){failed}, {rate:.1f} {self.unit}/s, eta {eta:.0f} s"

    def track(self, items: Iterable[Item]) -> Iterator[Item]:
        """Yield the items, advancing after each one."""
        for item in items:
            yield item
            self.advance()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class FitProgress:
    """The progress of the model fits of `coqa train` (called with each
    boosting round through coqa.boosting.round_observer): a line at most every
    `interval` seconds, across fits, e.g.
    `coqa: training: fitting model 7, round 120/300, 95 s since the first fit`."""

    def __init__(self, interval: float = DEFAULT_INTERVAL, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.fits = 0
        self.started: float | None = None
        self.last_line = 0.0

    def __call__(self, done: int, rounds: int) -> None:
        now = self.clock()
        if self.started is None:
            self.started = self.last_line = now
        if done == 1:
            self.fits += 1
        if now - self.last_line >= self.interval:
            self.last_line = now
            line = f"training: fitting model {self.fits}, round {done}/{rounds}, {now - self.started:.0f} s since the first fit"
            print(f"coqa: {line}", file=self.stream, flush=True)


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """The `--progress-every SECONDS` option of the long-running commands."""
    parser.add_argument(
        "--progress-every",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"when stderr is not a terminal, a progress line every SECONDS (default {DEFAULT_INTERVAL:g})",
    )
