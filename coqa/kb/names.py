"""The one codec between PKU BASE names and absolute IRIs, and the term type.

PKU BASE names are bare (`<李白_（唐朝著名诗人）>`, `<2008年北京奥运会 >`) and may
hold characters an IRI cannot (space, `"`, `|`, `^`, `{`, `\\`, ...). Standard
SPARQL engines need absolute IRIs, so every name is stored as
``NAME_BASE + encode(name)``. Encoding percent-escapes exactly the characters
an IRI path cannot hold plus `%` itself, so ``decode(encode(n)) == canonical_name(n)``
for every string ``n``. The loader and every query go through this module; the
rest of coqa only ever sees PKU BASE names. Names are canonical: surrounding
white space is dropped (see `canonical_name`), so `<2008年北京奥运会 >` in a
query finds the entity however the loaded file spelled it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, NamedTuple
from urllib.parse import unquote

from coqa.kb.sparql_text import COMMENT, IRI, Token, is_reference, tokens

NAME_BASE = "http://pkubase.org/r/"

# Characters that may stand unescaped in the path of an absolute IRI
# (RFC 3987 iunreserved / sub-delims / ':' '@' '/'), minus '%' which escapes;
# a regex character-class body. A name made only of these is its own encoding
# (the loader's fast path relies on that).
IRI_SAFE_CHARS = (
    r"A-Za-z0-9\-._~!$&'()*+,;=:@/"
    "\u00a0-\ud7ff\uf900-\ufdcf\ufdf0-\uffef"
    "\U00010000-\U0001fffd\U00020000-\U0002fffd\U00030000-\U0003fffd"
)
_NEEDS_ESCAPE = re.compile(f"[^{IRI_SAFE_CHARS}]")


def _escape_char(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group(0).encode("utf-8"))


def canonical_name(name: str) -> str:
    """A name without surrounding white space: PKU BASE writes some names both
    ways (`<2008年北京奥运会 >`, `<2008年北京奥运会>`), and they are one entity."""
    return name.strip()


def name_to_iri(name: str) -> str:
    """Absolute IRI for a PKU BASE name (without its angle brackets), of its
    canonical form: names differing only in surrounding white space share one IRI."""
    return NAME_BASE + _NEEDS_ESCAPE.sub(_escape_char, canonical_name(name))


@lru_cache(maxsize=1 << 17)
def iri_to_name(iri: str) -> str | None:
    """PKU BASE name of an IRI made by `name_to_iri`, or None for any other IRI."""
    if not iri.startswith(NAME_BASE):
        return None
    return unquote(iri[len(NAME_BASE):], encoding="utf-8", errors="strict")


# --- gStore's form of a name ------------------------------------------------
#
# gStore holds names bare (`<莫妮卡·贝鲁奇>`), but its N-Triples parser rejects
# a name holding white space or a backslash, and its SPARQL parser any name
# holding one of <>"{}|^`\ or a control character (measured on gStore 1.2).
# Those characters are percent-encoded, and so is a '%' that an escape could
# be mistaken for (followed by two hex digits); every other name is written
# as it is, so a gStore built from the raw PKU BASE files still answers for
# all the names it could load.
_GSTORE_ESCAPE = re.compile(r'[\x00-\x20<>"{}|^`\\\x7f]|%(?=[0-9A-Fa-f]{2})')
_PERCENT_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def name_to_gstore(name: str) -> str:
    """gStore's form of a PKU BASE name (without angle brackets), of its canonical form."""
    return _GSTORE_ESCAPE.sub(_escape_char, canonical_name(name))


def gstore_to_name(value: str) -> str:
    """The PKU BASE name of a gStore IRI written by `name_to_gstore`.

    Raises ValueError when an escape does not decode to UTF-8 text (only a
    name that `name_to_gstore` did not write can hold one).
    """
    if "%" not in value:
        return value
    return _PERCENT_ESCAPES.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8"), value)


class Term(NamedTuple):
    """A knowledge-base term as PKU BASE writes it: an entity name or a literal value.

    `str(term)` is the answer format of the task: `<name>` or `"value"`.
    Literal values are kept verbatim (PKU BASE literals may contain quotes).
    """

    value: str
    is_literal: bool = False

    def __str__(self) -> str:
        return f'"{self.value}"' if self.is_literal else f"<{self.value}>"

    @staticmethod
    def entity(name: str) -> "Term":
        return Term(name, False)

    @staticmethod
    def literal(value: str) -> "Term":
        return Term(value, True)


def sparql_string(text: str) -> str:
    """`text` as a SPARQL string literal, quoted and escaped.

    The only way question text reaches a literal in a generated query: any
    character sequence yields one well-formed literal that means `text`.
    """
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )
    return f'"{escaped}"'


def sparql_name(name: str) -> str:
    """`name` as a SPARQL IRI reference: `<name>` in PKU BASE style when possible.

    A name that cannot stand between angle brackets as it is (it holds `<`,
    `>`, a line break, starts with white space or `=`, which would read as
    a comparison, or looks like an IRI that `to_standard_sparql` keeps) is
    written as its absolute IRI instead; every backend accepts that form
    (see `to_standard_sparql` and `to_gstore_sparql`).
    """
    if _UNSAFE_BARE_NAME.search(name) or not name or name[0] in " \t=" or name.startswith((NAME_BASE, _W3C)):
        return "<" + name_to_iri(name) + ">"
    return f"<{name}>"


# --- rewriting PKU-BASE-style queries for standard SPARQL engines -----------

_UNSAFE_BARE_NAME = re.compile(r"[<>\n\r]")
_W3C = "http://www.w3.org/"


def _kept_as_it_is(token: Token) -> bool:
    """True for an IRI reference an engine may be sent unchanged: a well-formed
    one (no escapes) under NAME_BASE or the W3C vocabularies."""
    content = token.text[1:-1]
    return token.kind == IRI and "\\" not in content and content.startswith((NAME_BASE, _W3C))


@lru_cache(maxsize=1 << 16)
def standard_reference(token: Token) -> str:
    """The standard-SPARQL form of one IRI reference or bare name token, as
    `to_standard_sparql` writes it (cached: a
    run's queries name the same entities and predicates again and again)."""
    if _kept_as_it_is(token):
        return token.text
    return f"<{name_to_iri(token.text[1:-1])}>"


def to_gstore_sparql(query: str) -> str:
    """Rewrite a query in PKU BASE style for gStore: every `<name>` in gStore's
    form (`name_to_gstore`); absolute `NAME_BASE` IRIs back to that form too;
    W3C vocabulary IRIs kept; comments dropped."""
    return _map_iris(query, _rewrite_for_gstore)


def _rewrite_for_gstore(token: Token) -> str:
    content = token.text[1:-1]
    if not _kept_as_it_is(token):
        return f"<{name_to_gstore(content)}>"
    if content.startswith(_W3C):
        return token.text
    try:
        name = iri_to_name(content)
    except UnicodeDecodeError:  # an escape that is not UTF-8: no name of ours, kept as text
        name = None
    return f"<{name_to_gstore(content if name is None else name)}>"


def to_standard_sparql(query: str) -> str:
    """Rewrite a query in PKU BASE style (bare `<name>`s) into standard SPARQL.

    Every IRI reference or bare name (as `coqa.kb.sparql_text` reads them:
    not inside a string or a comment) is taken as a PKU BASE name and
    replaced by its absolute IRI, except well-formed IRIs already under
    `NAME_BASE` and W3C vocabulary IRIs (datatypes such as xsd:integer). A
    `<` followed by white space or `=` is a comparison operator, not a name
    (unless the engine would read it as an IRI: then it is rewritten as one).
    Comments are dropped, so the engine reads no text the tokenizer did not.
    """
    return _map_iris(query, standard_reference)


def _map_iris(query: str, rewrite: Callable[[Token], str]) -> str:
    """`query` with `rewrite` applied to every IRI reference and bare name, without its comments."""
    return "".join(
        rewrite(token) if is_reference(token) else token.text for token in tokens(query) if token.kind != COMMENT
    )
