"""Reading a PKU BASE file line by line with full accounting.

`LineReader` is the part of loading that does not depend on where the facts
go: it streams a file in blocks of whole lines, decodes them (repairing text
that is not UTF-8), numbers them, counts every line as exactly one of
*loaded*, *repaired*, *rejected* or *blank* in a `FileReport`, and writes
each rejected line to a `RejectsWriter`. Subclasses (coqa.kb.loading.triple_reading,
coqa.kb.loading.mention_reading) say how a block and a line parse and hand what they
read to whatever writes it: the store, the mention index, an export.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import IO, Iterator

from tqdm import tqdm

from coqa.kb.base import KBError
from coqa.kb.loading.formats import LineError, decode_line, is_blank
from coqa.kb.loading.rejects import RejectsWriter
from coqa.kb.loading.report import FileReport

BLOCK_BYTES = 8 << 20


def read_blocks(path: Path) -> Iterator[bytes]:
    """The file as blocks of whole lines (the last one may lack its "\\n")."""
    try:
        stream = open(path, "rb")
    except OSError as error:
        raise KBError(f"cannot read {path}: {error.strerror or error}") from None
    with stream:
        rest = b""
        while chunk := _read(stream, path):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                yield data[:cut]
        if rest:
            yield rest


def _read(stream: IO[bytes], path: Path) -> bytes:
    try:
        return stream.read(BLOCK_BYTES)
    except OSError as error:
        raise KBError(f"cannot read {path}: {error.strerror or error}") from None


class LineReader:
    """Reads one file block by block and accounts for every line.

    Subclasses implement `text_block` (a block of whole lines decoded as
    UTF-8: take the lines a fast path can and call `count_loaded` for them,
    send the others one by one through `line`) and `parse` (one line: hand it
    on, return its repairs or raise LineError), and may extend `block` (to
    hand on what a block produced) and `finish`."""

    def __init__(self, path: Path, kind: str, rejects: RejectsWriter) -> None:
        self.path = path
        self.report = FileReport(str(path), kind)
        self.rejects = rejects
        self.next_line = 1

    def run(self, progress: tqdm) -> FileReport:
        """Read the whole file; its report."""
        started = time.perf_counter()
        for block in read_blocks(self.path):
            self.block(block)
            progress.update(len(block))
        self.finish()
        self.report.seconds = time.perf_counter() - started
        return self.report

    def block(self, block: bytes) -> None:
        """Read one block of whole lines. A line that is not UTF-8 is cut out
        and decoded on its own; the lines around it stay on the fast path, so
        a bad line costs what that line costs (each byte is decoded at most
        twice), not a slow pass over its whole block."""
        view = memoryview(block)
        position = 0
        while position < len(block):
            try:
                text = str(view[position:], "utf-8")
            except UnicodeDecodeError as error:
                bad = position + error.start
                line_start = block.rfind(b"\n", position, bad) + 1 or position
                line_end = block.find(b"\n", bad)
                line_end = len(block) if line_end < 0 else line_end
                if line_start > position:
                    self.text_block(str(view[position:line_start], "utf-8"))
                self._undecoded_line(block[line_start:line_end])
                position = line_end + 1
            else:
                self.text_block(text)
                return

    def _undecoded_line(self, raw: bytes) -> None:
        try:
            line, repairs = decode_line(raw)
        except LineError as error:
            self.line(raw.decode("utf-8", errors="backslashreplace"), [], str(error))
        else:
            self.line(line, repairs)

    def text_block(self, text: str) -> None:
        """Read a block of whole lines decoded as UTF-8."""
        raise NotImplementedError

    def line(self, text: str, repairs: list[str], error: str | None = None) -> None:
        """Count and read one line (decoded, without its "\\n"); `error`
        rejects it outright (bytes that could not be decoded)."""
        report = self.report
        report.lines += 1
        try:
            if error:
                raise LineError(error)
            if is_blank(text):
                report.blank += 1
            else:
                repairs = repairs + self.parse(text)
                if repairs:
                    report.repaired += 1
                    report.repairs.update(repairs)
                else:
                    report.loaded += 1
        except LineError as reason:
            report.rejected += 1
            report.rejects[str(reason)] += 1
            self.rejects.write(self.path, self.next_line, str(reason), text)
        self.next_line += 1

    def parse(self, text: str) -> list[str]:
        """Read one non-blank line; return its repairs or raise LineError."""
        raise NotImplementedError

    def count_loaded(self, count: int) -> None:
        """Count `count` lines that a fast path read as they were."""
        self.report.lines += count
        self.report.loaded += count

    def finish(self) -> None:
        """Called after the last block."""
