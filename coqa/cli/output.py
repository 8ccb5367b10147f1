"""Where commands write their results: a file replaced only when the run
succeeds, or stdout for `-o -`; report directories checked before a run.

An output never replaces what it must not: the input file of the run is
refused, a symbolic link is written through (the file it points to is
replaced, the link stays), and a FIFO or a device is written to as it is
(as root, `-o /dev/null` must not turn /dev/null into a regular file)."""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Sequence, TextIO

STDOUT = "-"


class ResultOutput:
    """A text output for `-o PATH`, opened at once so that a path that cannot
    be written fails before any work (OSError); PATH naming one of `inputs`
    (the same file, by any name) is refused the same way.

    For a file, the text goes to a temporary file in the same directory as
    the file PATH resolves to, which `commit()` renames over it in one step;
    closing without a commit (a failed run) removes it, and an existing file
    stays as it was. For a FIFO or a device, the text is written straight to
    it. For PATH `-` the text goes to stdout and `commit()` flushes it."""

    def __init__(self, path: str, inputs: Sequence[str] = ()) -> None:
        self.path = path
        self.temporary: Path | None = None
        self.target: Path | None = None
        if path == STDOUT:
            self.stream: TextIO = sys.stdout
            return
        target = Path(os.path.realpath(path))
        if target.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        for source in inputs:
            if source != STDOUT and target.exists() and os.path.exists(source) and os.path.samefile(source, target):
                raise OSError(errno.EINVAL, f"it is the input file {source}: the results would replace it")
        if target.exists() and not target.is_file():  # a FIFO, a device: written as it is
            self.stream = open(target, "w", encoding="utf-8", newline="\n")
            return
        handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        self.temporary, self.target = Path(name), target
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
        if self.temporary is None or self.target is None:
            self.stream.flush()
            return
        self.stream.close()
        os.chmod(self.temporary, 0o666 & ~_umask())
        os.replace(self.temporary, self.target)
        self.temporary = None

    def discard(self) -> None:
        """Drop what was written unless it was committed (what went to a FIFO
        or a device is gone: that stream is only closed)."""
        if self.temporary is not None:
            self.stream.close()
            self.temporary.unlink(missing_ok=True)
            self.temporary = None
        elif not self.to_stdout and not self.stream.closed:
            self.stream.close()

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
