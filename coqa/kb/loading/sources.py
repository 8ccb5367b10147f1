"""Which knowledge-base files a `coqa load` reads, and in which order."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from coqa.kb.base import KBError
from coqa.kb.loading.formats import FILE_PREFIXES, MENTIONS, NLPCC_KB, TRIPLES, TYPES, kind_of_file
from coqa.kb.loading.nlpcc_reading import is_nlpcc_kb_file

_KIND_ORDER = {TRIPLES: 0, NLPCC_KB: 0, TYPES: 1, MENTIONS: 2}
# Values of `kb_format`: tell each file's kind from its name, then its content
# (None); PKU BASE names only; every named file is an NLPCC KB file.
PKUBASE, NLPCC = "pkubase", "nlpcc"
FORMATS = (PKUBASE, NLPCC)


def _expected() -> str:
    return ", ".join(f"{prefix}*" for prefix in FILE_PREFIXES) + " or NLPCC `subject ||| predicate ||| object` files"


def _kind(path: Path, kb_format: str | None) -> str | None:
    """The kind of one file: NLPCC when `kb_format` says so, else what its
    name announces, else (unless PKU BASE is asked for) NLPCC when its
    content is; None when neither."""
    if kb_format == NLPCC:
        return NLPCC_KB
    kind = kind_of_file(path.name)
    if kind is None and kb_format != PKUBASE and is_nlpcc_kb_file(path):
        return NLPCC_KB
    return kind


def _directory_files(path: Path, kb_format: str | None) -> list[tuple[Path, str]]:
    """The knowledge-base files of a directory: PKU BASE files by name; when
    there are none (or `kb_format` is NLPCC), the NLPCC KB files by content."""
    files = [f for f in sorted(path.iterdir()) if f.is_file()]
    if kb_format != NLPCC:
        named = [(f, kind) for f in files if (kind := kind_of_file(f.name))]
        if named or kb_format == PKUBASE:
            return named
    return [(f, NLPCC_KB) for f in files if is_nlpcc_kb_file(f)]


def find_sources(sources: Sequence[str | Path], kb_format: str | None = None) -> list[tuple[Path, str]]:
    """The knowledge-base files named by `sources` (directories or files) with
    their kinds, triples (PKU BASE or NLPCC) and types before mention files;
    KBError when there are none or a file's kind cannot be told.
    `kb_format`: None (by name, then by content), PKUBASE or NLPCC."""
    found: dict[Path, str] = {}
    for source in sources:
        path = Path(source).expanduser()
        if path.is_dir():
            matched = _directory_files(path, kb_format)
            if not matched:
                raise KBError(f"no knowledge-base files in {path} (expected {_expected()})")
            for file, kind in matched:
                found.setdefault(file, kind)
        elif path.is_file():
            file_kind = _kind(path, kb_format)
            if file_kind is None:
                raise KBError(f"cannot tell what {path} holds from its name or content: expected {_expected()}")
            found.setdefault(path, file_kind)
        else:
            raise KBError(f"no such file or directory: {path}")
    if not found:
        raise KBError("nothing to load: name a knowledge-base directory or files")
    return sorted(found.items(), key=lambda item: (_KIND_ORDER[item[1]], str(item[0])))
