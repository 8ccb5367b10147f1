"""The progress of a load or an export on stderr: a tqdm bar on a terminal,
plain lines elsewhere (a log file, a pipe, a CI job), where a bar's carriage
returns would make one unreadable line. A line comes at most every
`LINE_INTERVAL` seconds and whenever the phase (the bar's postfix: the file
read, "compacting the store", "mention index") changes, e.g.

    coqa: load 41.9MB/83.8MB (50%), 20.1MB/s, eta 00:02, mention index
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

LINE_INTERVAL = 10.0
_LINE_FORMAT = "{desc} {n_fmt}{unit}/{total_fmt}{unit} ({percentage:.0f}%), {rate_fmt}, eta {remaining}{postfix}"


class LineBar(tqdm):
    """tqdm writing whole lines instead of redrawing a bar."""

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if self.n or msg:  # tqdm displays once before anything is done: nothing to say yet
            self.fp.write(f"coqa: {msg or self.__str__()}\n")
            self.fp.flush()
        return True

    def clear(self, *_: Any, **__: Any) -> None:
        """Nothing to clear: the lines stay."""

    def close(self) -> None:
        self.sp = None  # tqdm's close then skips erasing the bar with a carriage return (what it does without `sp`)
        super().close()


def progress_bar(total: int, desc: str, show: bool | None, interval: float = LINE_INTERVAL) -> tqdm:
    """A byte-counting progress display of `desc` (e.g. "load"): with `show`
    None, a bar on a terminal and lines every `interval` seconds elsewhere;
    True: a bar; False: nothing."""
    if show is False:
        return tqdm(total=total, disable=True)
    if show or sys.stderr.isatty():
        return tqdm(total=total, unit="B", unit_scale=True, desc=f"coqa {desc}")
    return LineBar(total=total, unit="B", unit_scale=True, desc=desc, file=sys.stderr, mininterval=interval,
                   maxinterval=interval, bar_format=_LINE_FORMAT, leave=False)  # fmt: skip
