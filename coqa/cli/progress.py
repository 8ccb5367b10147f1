"""Progress of long runs (answer, eval, train) on stderr.

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
    ) -> None:
        self.total = total
        self.verb = verb
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.done = 0
        self.failed = 0  # of the done items, how many failed (set by the caller)
        self.started = clock()
        self.last_line = self.started
        self.bar = tqdm(total=total, desc=verb, unit="q", file=self.stream, leave=False) if self.stream.isatty() else None

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
        return f"{self.verb} {self.done}/{self.total} ({share:.0%}){failed}, {rate:.1f} q/s, eta {eta:.0f} s"

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


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    """The `--progress-every SECONDS` option of the long-running commands."""
    parser.add_argument(
        "--progress-every",
        type=float,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=f"when stderr is not a terminal, a progress line every SECONDS (default {DEFAULT_INTERVAL:g})",
    )
