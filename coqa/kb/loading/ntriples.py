"""N-Triples for the embedded store (names as absolute IRIs) and for gStore
(names in gStore's form): PKU BASE facts with names through the codec."""

from __future__ import annotations

import re

from coqa.kb.loading.formats import Triple
from coqa.kb.names import NAME_BASE, name_to_gstore, name_to_iri

_SPACED_NAME = re.compile(r"<[^>\n ]* [^>\n]*>")


def escape_literal(value: str) -> str:
    """A literal value as the content of an N-Triples string."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")


def triple_to_ntriples(triple: Triple) -> str:
    """One N-Triples line (with "\\n") for a triple, names through the codec,
    terms separated by tabs as in PKU BASE (N-Triples allows tabs)."""
    obj = triple.object
    rendered = f'"{escape_literal(obj.value)}"' if obj.is_literal else f"<{name_to_iri(obj.value)}>"
    return f"<{name_to_iri(triple.subject)}>\t<{name_to_iri(triple.predicate)}>\t{rendered} .\n"


def triple_to_gstore(triple: Triple) -> str:
    """One N-Triples line (with "\\n") for gStore: names in gStore's form
    (`name_to_gstore`), literals as for the embedded store."""
    obj = triple.object
    rendered = f'"{escape_literal(obj.value)}"' if obj.is_literal else f"<{name_to_gstore(obj.value)}>"
    return f"<{name_to_gstore(triple.subject)}>\t<{name_to_gstore(triple.predicate)}>\t{rendered} .\n"


def _escape_spaces(name: re.Match[str]) -> str:
    return name.group(0).replace(" ", "%20")


def regular_lines_to_ntriples(text: str) -> str:
    """N-Triples for lines that all match the fast path's regular form (see
    coqa.kb.loading.triple_reading): their names are their own IRI encoding but for
    inner spaces, so escaping those and adding the IRI base is the whole
    conversion."""
    return regular_lines_to_gstore(text).replace("<", "<" + NAME_BASE)


def regular_lines_to_gstore(text: str) -> str:
    """gStore N-Triples for regular lines: their names hold nothing gStore
    refuses but inner spaces, so escaping those is the whole conversion."""
    return _SPACED_NAME.sub(_escape_spaces, text)
