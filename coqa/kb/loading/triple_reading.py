"""Reading triples and types files: lines to facts, most of them by a fast path.

A block's *regular* lines (names that are their own IRI encoding but for
inner spaces, plain literals, nothing to repair) are recognized by one regex
pass and handed on as text, in bulk; every other line goes through
`coqa.kb.loading.formats.parse_triple_line`, which repairs it or says why it cannot,
and is handed on as a `Triple`. A `TripleConsumer` receives both once per
block: the store writes them as N-Triples (coqa.kb.loading.bulk_load), the mention
index takes their names and literal values (coqa.kb.loading.index_job).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol, Sequence

from coqa.kb.loading.formats import Triple, parse_triple_line
from coqa.kb.loading.line_reading import LineReader
from coqa.kb.names import IRI_SAFE_CHARS
from coqa.kb.loading.rejects import RejectsWriter

# A name the codec keeps as it is but for inner spaces (escaped as %20):
# IRI-safe characters and spaces, no white space at either end (the codec
# trims it, see coqa.kb.names.canonical_name).
_NAME = rf"<(?!\s)[{IRI_SAFE_CHARS} ]+(?<!\s)>"
_REGULAR_LINE = rf'{_NAME}\t{_NAME}\t(?:{_NAME}|"[^"\\\t\r\n<>]*") \.'
# A run of regular lines: one match takes it whole, so the regex engine
# looks at each character once (a search for the other lines tries every
# position, which costs half as much again).
REGULAR_RUN = re.compile(rf"(?:{_REGULAR_LINE}\n)*")
_SUBJECTS = re.compile(r"^<([^\t]*)>\t", re.M)
_ENTITY_OBJECTS = re.compile(r"\t<([^\t\n]*)> \.$", re.M)
_LITERAL_OBJECTS = re.compile(r'\t"([^\t\n]*)" \.$', re.M)


def regular_names_and_literals(regular: str) -> tuple[list[str], list[str]]:
    """The entity names (subjects and entity objects) and the literal values
    of regular lines; the names are canonical, as regular names are."""
    return _SUBJECTS.findall(regular) + _ENTITY_OBJECTS.findall(regular), _LITERAL_OBJECTS.findall(regular)


class TripleConsumer(Protocol):
    """Whatever takes the facts a `TripleFileReader` reads."""

    def take(self, regular: str, triples: Sequence[Triple]) -> None:
        """Take one block's facts: `regular` holds whole regular lines (each
        with its "\\n"), `triples` the block's other lines, parsed."""


class TripleFileReader(LineReader):
    """A triples or types file, its facts handed to `consumer` block by block."""

    def __init__(self, path: Path, kind: str, rejects: RejectsWriter, consumer: TripleConsumer) -> None:
        super().__init__(path, kind, rejects)
        self.consumer = consumer
        self._regular: list[str] = []
        self._parsed: list[Triple] = []

    def block(self, block: bytes) -> None:
        super().block(block)
        self.consumer.take("".join(self._regular), self._parsed)
        self._regular = []
        self._parsed = []

    def text_block(self, text: str) -> None:
        """Regular lines are collected in runs for `block`, the others go one
        by one through `line`."""
        if not text.endswith("\n"):
            text += "\n"  # the file's last line
        position = 0
        while (start := REGULAR_RUN.match(text, position).end()) < len(text):  # type: ignore[union-attr]
            self._take_regular(text[position:start])
            end = text.index("\n", start)
            self.line(text[start:end], [])
            position = end + 1
        self._take_regular(text[position:])

    def _take_regular(self, lines: str) -> None:
        if not lines:
            return
        count = lines.count("\n")
        self.count_loaded(count)
        self.next_line += count
        self._regular.append(lines)

    def parse(self, text: str) -> list[str]:
        triple, repairs = parse_triple_line(text)
        self._parsed.append(triple)
        return repairs
