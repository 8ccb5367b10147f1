"""The one tokenizer of SPARQL text in coqa: where its comments, strings and
IRI references are, read the way the engines read them.

Admission (bounds, SERVICE), the name codec's rewriting and the row cap of
the HTTP API all look at a query through `tokens`, so none of them can be
shown a different query than the one the engine will run. The rules are
those of the SPARQL 1.1 grammar as pyoxigraph implements them (checked on
pyoxigraph 0.5): white space is space, tab, CR and LF; a comment runs from
`#` to the next CR or LF (a lone CR ends it); a short string holds no raw CR
or LF; an IRI reference is `<` then no white space, `<>"{}|^\\`` or control
character, then `>` (so `<=5&&?y>` is an IRI to the engine, not a
comparison). PKU BASE style adds one form: a bare name `<李白 (诗人)>`, a `<`
not followed by white space or `=` up to the next `>` on the same line,
which the codec rewrites into an absolute IRI before any engine sees it.

`without_comments` drops every comment, and every backend sends its query
through it: what this tokenizer took for a comment never reaches an engine,
so an engine cannot be shown text that admission did not see.

A regex scan, not a parser: the grammar's lexical level is regular, and no
well-kept Python library parses SPARQL 1.1 the way pyoxigraph does (rdflib's
parser differs from it on exactly these corner cases).
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, NamedTuple

STRING = "string"
IRI = "iri"
NAME = "name"
COMMENT = "comment"
SPACE = "space"
WORD = "word"
PUNCT = "punct"

_ECHAR_OR_UCHAR = r"\\."
_TOKEN = re.compile(
    rf'(?P<{STRING}>"""(?:[^"\\]|{_ECHAR_OR_UCHAR}|"(?!""))*"""'
    rf"|'''(?:[^'\\]|{_ECHAR_OR_UCHAR}|'(?!''))*'''"
    rf'|"(?:[^"\\\n\r]|{_ECHAR_OR_UCHAR})*"'
    rf"|'(?:[^'\\\n\r]|{_ECHAR_OR_UCHAR})*')"
    rf'|(?P<{IRI}><(?:[^<>"{{}}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{{4}}|\\U[0-9A-Fa-f]{{8}})*>)'
    rf"|(?P<{NAME}><(?![ \t\r\n=])[^<>\r\n]*>)"
    rf"|(?P<{COMMENT}>#[^\r\n]*)"
    rf"|(?P<{SPACE}>[ \t\r\n]+)"
    rf"|(?P<{WORD}>[^ \t\r\n{{}}()\[\].;,<>\"'#=!&|*/+\-^]+)"
    rf"|(?P<{PUNCT}>.)",
    re.S,
)


class Token(NamedTuple):
    """One token: its kind (STRING, IRI, NAME, COMMENT, SPACE, WORD, PUNCT) and
    text (a named tuple: every query coqa sends is tokenized, so tokens are cheap)."""

    kind: str
    text: str

    @property
    def is_structure(self) -> bool:
        """True for what the engine reads as syntax (not a string, IRI, name, comment or space)."""
        return self.kind in (WORD, PUNCT)


def tokens(query: str) -> Iterator[Token]:
    """The tokens of `query`, in order; their texts joined give `query` back."""
    for match in _TOKEN.finditer(query):
        yield Token(match.lastgroup or PUNCT, match.group(0))


def without_comments(query: str) -> str:
    """`query` with its comments removed (the line ends after them kept)."""
    if "#" not in query:
        return query
    return "".join(token.text for token in tokens(query) if token.kind != COMMENT)


def structure(query: str) -> list[Token]:
    """The tokens of `query` that the engine reads as syntax (words and punctuation)."""
    return [token for token in tokens(query) if token.is_structure]


def is_reference(token: Token) -> bool:
    """True for an IRI reference or a PKU BASE name."""
    return token.kind in (IRI, NAME)


_SERVICE = re.compile(r"service", re.I)


def names_service(token: Token) -> bool:
    """True for a word token that holds SERVICE in any case (also inside a
    prefixed name or a longer word), not a variable."""
    return token.kind == WORD and not token.text.startswith(("?", "$")) and _SERVICE.search(token.text) is not None


def structure_text(query: str) -> tuple[str, bool]:
    """In one pass over `query`: its text with every string, IRI, name, comment
    and space replaced by one space (what is left is syntax), and whether it
    holds the SERVICE keyword in any case or spelling outside strings, IRIs
    and comments (also as part of a prefixed name or a longer word: refusing
    those too costs nothing a PKU BASE query needs)."""
    _, structure, service = rewrite_references(query, _as_written)
    return structure, service


def _as_written(token: Token) -> str:
    return token.text


def rewrite_references(query: str, rewrite: Callable[[Token], str]) -> tuple[str, str, bool]:
    """In one pass over `query`: its text with every IRI reference and name
    replaced by `rewrite(token)` and every comment dropped, and what
    `structure_text(query)` gives (its structure text and whether it holds
    SERVICE). Every query a backend runs passes here (admission), so the
    loop reads the matches itself instead of going through `tokens`."""
    standard: list[str] = []
    parts: list[str] = []
    service = False
    for match in _TOKEN.finditer(query):
        kind, text = match.lastgroup, match.group(0)
        if kind == WORD or kind == PUNCT or kind is None:
            parts.append(text)
            standard.append(text)
            service = service or (kind == WORD and names_service(Token(WORD, text)))
        else:
            parts.append(" ")
            if kind == IRI or kind == NAME:
                standard.append(rewrite(Token(kind, text)))
            elif kind != COMMENT:
                standard.append(text)
    return "".join(standard), "".join(parts), service
