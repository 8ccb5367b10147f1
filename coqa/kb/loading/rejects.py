"""The rejects file: every line a load (or an export) could not take, with
where it was and why."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

REJECTS_FILE = "rejects.tsv"


class RejectsWriter:
    """Writes rejected lines as TSV (`file, line, reason, raw`); the raw line is
    the last column and may itself hold tabs. The file is created on the first
    reject, so a load without rejects leaves none."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._out: IO[str] | None = None

    def write(self, file: Path, line_number: int, reason: str, raw: str) -> None:
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self.path, "w", encoding="utf-8", newline="\n")
            self._out.write("file\tline\treason\traw\n")
        self._out.write(f"{file}\t{line_number}\t{reason}\t{raw}\n")
        self.count += 1

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


class RejectsCounter(RejectsWriter):
    """Counts rejected lines without writing them: for a second pass over
    files whose rejects another pass writes."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull))

    def write(self, file: Path, line_number: int, reason: str, raw: str) -> None:
        self.count += 1
