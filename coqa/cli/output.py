"""Where commands write their results: a file replaced only when the run
succeeds, or stdout for `-o -`; report directories checked before a run."""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import TextIO

STDOUT = "-"


class ResultOutput:
    """A text output for `-o PATH`, opened at once so that a path that cannot
    be written fails before any work (OSError).

    For a file, the text goes to a temporary file in the same directory,
    which `commit()` renames over PATH in one step; closing without a commit
    (a failed run) removes it, and an existing PATH stays as it was. For
    PATH `-` the text goes to stdout and `commit()` flushes it."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.temporary: Path | None = None
        if path == STDOUT:
            self.stream: TextIO = sys.stdout
            return
        target = Path(path)
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        self.temporary = Path(name)
        self.stream = open(handle, "w", encoding="utf-8", newline="\n")

    @property
    def to_stdout(self) -> bool:
        return self.path == STDOUT

    @property
    def name(self) -> str:
        """How to name the output to the user."""
        return "stdout" if self.path == STDOUT else self.path

    def write(self, text: str) -> None:
        self.stream.write(text)

    def commit(self) -> None:
        """Make the written text the content of PATH (or flush stdout)."""
        if self.temporary is None:
            self.stream.flush()
            return
        self.stream.close()
        os.chmod(self.temporary, 0o666 & ~_umask())
        os.replace(self.temporary, self.path)
        self.temporary = None

    def discard(self) -> None:
        """Drop what was written unless it was committed."""
        if self.temporary is not None:
            self.stream.close()
            self.temporary.unlink(missing_ok=True)
            self.temporary = None

    def __enter__(self) -> "ResultOutput":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.discard()


def _umask() -> int:
    """The process umask (mkstemp creates files readable by the owner only;
    a result file gets the permissions any new file would get)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def writable_directory(path: Path) -> Path:
    """Create `path` (and its parents) if needed and check that files can be
    created in it; OSError otherwise. Run before a long run that ends by
    writing reports there."""
    path.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=".coqa-probe-", dir=path)
    os.close(handle)
    os.unlink(name)
    return path
