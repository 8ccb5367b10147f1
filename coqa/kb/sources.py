"""Which PKU BASE files a `coqa load` reads, and in which order."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from coqa.kb.base import KBError
from coqa.kb.formats import FILE_PREFIXES, MENTIONS, TRIPLES, TYPES, kind_of_file

_KIND_ORDER = {TRIPLES: 0, TYPES: 1, MENTIONS: 2}


def find_sources(sources: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """The PKU BASE files named by `sources` (directories or files) with their
    kinds, triples and types before mention files; KBError when there are none
    or a file name does not say its kind."""
    found: dict[Path, str] = {}
    expected = ", ".join(f"{prefix}*" for prefix in FILE_PREFIXES)
    for source in sources:
        path = Path(source).expanduser()
        if path.is_dir():
            matched = [(f, kind_of_file(f.name)) for f in sorted(path.iterdir()) if f.is_file()]
            matched = [(f, kind) for f, kind in matched if kind]
            if not matched:
                raise KBError(f"no PKU BASE files in {path} (expected {expected})")
            for file, kind in matched:
                found.setdefault(file, kind)
        elif path.is_file():
            kind = kind_of_file(path.name)
            if kind is None:
                raise KBError(f"cannot tell what {path} holds from its name: PKU BASE files are named {expected}")
            found.setdefault(path, kind)
        else:
            raise KBError(f"no such file or directory: {path}")
    if not found:
        raise KBError("nothing to load: name a PKU BASE directory or files")
    return sorted(found.items(), key=lambda item: (_KIND_ORDER[item[1]], str(item[0])))
