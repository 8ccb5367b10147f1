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
loader's file reader (coqa.kb.loading.loader): every input line is loaded, repaired,
rejected (into the rejects file, with file, line number and reason) or
blank, and the counts add up as for `coqa load`. Mention files are not
exported: the mention index stays on the coqa side (`coqa load --index-only`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Sequence


from coqa.kb.base import KBError
from coqa.kb.loading.formats import MENTIONS, Triple
from coqa.kb.loading.ntriples import regular_lines_to_gstore, regular_lines_to_ntriples, triple_to_gstore, triple_to_ntriples
from coqa.kb.loading.rejects import RejectsWriter
from coqa.kb.loading.report import FileReport
from coqa.kb.loading.sources import find_sources
from coqa.kb.loading.nlpcc_reading import triple_file_reader
from coqa.kb.loading.progress_bar import progress_bar

GSTORE, NTRIPLES = "gstore", "ntriples"
# Per target: how regular lines (see coqa.kb.loading.triple_reading) and parsed triples are written.
WRITERS: dict[str, tuple[Callable[[str], str], Callable[[Triple], str]]] = {
    GSTORE: (regular_lines_to_gstore, triple_to_gstore),
    NTRIPLES: (regular_lines_to_ntriples, triple_to_ntriples),
}


def render_triple(triple: Triple, target: str) -> str:
    """One N-Triples line (with "\\n") for `triple`, names in `target`'s form."""
    return WRITERS[target][1](triple)


@dataclass
class ExportReport:
    """The outcome of `export_kb`: per-file counts (as `coqa load` reports
    them, without duplicates: the export keeps every line), the mention
    files left out, the triples written and where the rejects went."""

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


class _ExportWriter:
    """A TripleConsumer writing each block's facts to an open file for one target."""

    def __init__(self, out: IO[str], target: str) -> None:
        self.out = out
        self.regular, self.triple = WRITERS[target]
        self.count = 0

    def take(self, regular: str, triples: Sequence[Triple]) -> None:
        self.out.write(self.regular(regular))
        self.out.writelines(map(self.triple, triples))
        self.count += regular.count("\n") + len(triples)


def export_kb(
    sources: Sequence[str | Path],
    target: str,
    output: str | Path,
    rejects_path: str | Path | None = None,
    progress: bool | None = None,
) -> ExportReport:
    """Export the triples and types files among `sources` to `output` for
    `target` (gstore or ntriples). Rejected lines go to `rejects_path`
    (default: OUTPUT.rejects.tsv), created only when there are any; one left
    by an earlier export of the same output is removed first."""
    if target not in WRITERS:
        raise KBError(f"unknown export target {target!r}: choose one of {', '.join(WRITERS)}")
    started = time.perf_counter()
    output = Path(output).expanduser()
    files = find_sources(sources)
    triple_files = [(path, kind) for path, kind in files if kind != MENTIONS]
    if not triple_files:
        raise KBError("nothing to export: no pkubase-triples* or pkubase-types* file among the sources")
    rejects_file = Path(rejects_path).expanduser() if rejects_path else output.with_name(output.name + ".rejects.tsv")
    try:
        rejects_file.unlink(missing_ok=True)
        out = open(output, "w", encoding="utf-8", newline="\n")
    except OSError as error:
        raise KBError(f"cannot write {error.filename}: {error.strerror or error}") from None
    rejects = RejectsWriter(rejects_file)
    writer = _ExportWriter(out, target)
    size = sum(path.stat().st_size for path, _ in triple_files)
    with out, progress_bar(size, "export", progress) as bar:
        try:
            # The reader of each file's own format: an NLPCC KB file's `s ||| p ||| o` lines are no PKU BASE triples.
            reports = [triple_file_reader(path, kind, rejects, writer).run(bar) for path, kind in triple_files]
        finally:
            rejects.close()
    for report in reports:
        report.duplicates = None
    return ExportReport(
        reports,
        [path for path, kind in files if kind == MENTIONS],
        output,
        writer.count,
        rejects_file if rejects.count else None,
        time.perf_counter() - started,
    )
