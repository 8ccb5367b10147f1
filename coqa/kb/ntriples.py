"""N-Triples for the embedded store: PKU BASE facts with names through the codec."""

from __future__ import annotations

import re

from coqa.kb.formats import Triple
from coqa.kb.names import NAME_BASE, name_to_iri

_SPACED_NAME = re.compile(r"<[^>\n ]* [^>\n]*>")


def _escape_literal(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")


def triple_to_ntriples(triple: Triple) -> str:
    """One N-Triples line (with "\\n") for a triple, names through the codec,
    terms separated by tabs as in PKU BASE (N-Triples allows tabs)."""
    obj = triple.object
    rendered = f'"{_escape_literal(obj.value)}"' if obj.is_literal else f"<{name_to_iri(obj.value)}>"
    return f"<{name_to_iri(triple.subject)}>\t<{name_to_iri(triple.predicate)}>\t{rendered} .\n"


def _escape_spaces(name: re.Match[str]) -> str:
    return name.group(0).replace(" ", "%20")


def regular_lines_to_ntriples(text: str) -> str:
    """N-Triples for lines that all match the fast path's regular form (see
    coqa.kb.triple_reading): their names are their own IRI encoding but for
    inner spaces, so escaping those and adding the IRI base is the whole
    conversion."""
    return _SPACED_NAME.sub(_escape_spaces, text).replace("<", "<" + NAME_BASE)
