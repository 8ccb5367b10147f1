"""`coqa export`: PKU BASE triple files as one N-Triples file another engine loads.

Two targets, one name codec each (coqa.kb.names), the same codec the
matching backend uses for queries:

- ``gstore``: names bare, as gStore holds them, except the characters gStore
  cannot hold (white space, <>"{}|^`\\, control characters), percent-encoded
  by `name_to_gstore`; the gstore backend encodes names in queries and decodes
  results the same way.
- ``ntriples``: absolute IRIs (`name_to_iri`), what the embedded store holds;
  for any SPARQL 1.1 engine (Virtuoso, Fuseki, QLever) behind `--endpoint`.

Literals are written as plain strings holding the PKU BASE literal verbatim
(N-Triples escapes for backslash, quote and line breaks), so every engine
gives back the text the file had. Lines are read, repaired and counted by the
loader's file reader (coqa.kb.loader): every input line is loaded, repaired,
rejected (into the rejects file, with file, line number and reason) or
blank, and the counts add up as for `coqa load`. Mention files are not
exported: the mention index stays on the coqa side (`coqa load --index-only`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Sequence

from tqdm import tqdm

from coqa.kb.base import KBError
from coqa.kb.formats import MENTIONS, Triple, parse_triple_line
from coqa.kb.loader import FileReport, RejectsWriter, _FileLoader, _show_progress, find_sources
from coqa.kb.names import name_to_gstore, name_to_iri

GSTORE, NTRIPLES = "gstore", "ntriples"
TARGETS = {GSTORE: name_to_gstore, NTRIPLES: name_to_iri}


def escape_literal(value: str) -> str:
    """A literal value as the content of an N-Triples string."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")


def render_triple(triple: Triple, target: str) -> str:
    """One N-Triples line (with "\\n") for `triple`, names in `target`'s form."""
    name = TARGETS[target]
    obj = triple.object
    rendered = f'"{escape_literal(obj.value)}"' if obj.is_literal else f"<{name(obj.value)}>"
    return f"<{name(triple.subject)}>\t<{name(triple.predicate)}>\t{rendered} .\n"


@dataclass
class ExportReport:
    """The outcome of `export_kb`: per-file counts (as `coqa load` reports
    them; duplicates are not counted), the triples written, where things went."""

    files: list[FileReport]
    skipped: list[Path]
    output: Path
    triples_written: int
    rejects_path: Path | None
    seconds: float

    @property
    def total(self) -> FileReport:
        total = FileReport("total", "", duplicates=None)
        for report in self.files:
            total.add(report)
        return total


class _ExportFileLoader(_FileLoader):
    """The loader's line reader and accounting, writing each triple to `out`."""

    def __init__(self, path: Path, kind: str, rejects: RejectsWriter, write: Callable[[Triple], None]) -> None:
        super().__init__(path, kind, rejects)
        self.report.duplicates = None
        self.write = write

    def text_block(self, text: str) -> None:
        lines = text.split("\n")
        if lines[-1] == "":
            lines.pop()
        for line in lines:
            self.line(line, [])

    def parse(self, text: str) -> list[str]:
        triple, repairs = parse_triple_line(text)
        self.write(triple)
        return repairs


def export_kb(
    sources: Sequence[str | Path],
    target: str,
    output: str | Path,
    rejects_path: str | Path | None = None,
    progress: bool | None = None,
) -> ExportReport:
    """Export the triples and types files among `sources` to `output` for
    `target` (gstore or ntriples). Rejected lines go to `rejects_path`
    (default: OUTPUT.rejects.tsv), created only when there are any."""
    if target not in TARGETS:
        raise KBError(f"unknown export target {target!r}: choose one of {', '.join(TARGETS)}")
    started = time.perf_counter()
    output = Path(output).expanduser()
    files = find_sources(sources)
    triple_files = [(path, kind) for path, kind in files if kind != MENTIONS]
    if not triple_files:
        raise KBError("nothing to export: no pkubase-triples* or pkubase-types* file among the sources")
    rejects = RejectsWriter(Path(rejects_path) if rejects_path else output.with_name(output.name + ".rejects.tsv"))
    written = 0
    try:
        out = open(output, "w", encoding="utf-8", newline="\n")
    except OSError as error:
        raise KBError(f"cannot write {output}: {error.strerror or error}") from None
    reports = []
    size = sum(path.stat().st_size for path, _ in triple_files)
    with out, tqdm(total=size, unit="B", unit_scale=True, disable=not _show_progress(progress), leave=False) as bar:
        for path, kind in triple_files:
            writer = _Writer(out, target)
            reports.append(_ExportFileLoader(path, kind, rejects, writer).run(bar))
            written += writer.count
    rejects.close()
    return ExportReport(
        reports,
        [path for path, kind in files if kind == MENTIONS],
        output,
        written,
        rejects.path if rejects.count else None,
        time.perf_counter() - started,
    )


class _Writer:
    """Writes triples to an open file and counts them."""

    def __init__(self, out: IO[str], target: str) -> None:
        self.out = out
        self.target = target
        self.count = 0

    def __call__(self, triple: Triple) -> None:
        self.out.write(render_triple(triple, self.target))
        self.count += 1
