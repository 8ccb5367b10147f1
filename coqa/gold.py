"""Gold SPARQL: the one reader of the queries in CCKS files.

CCKS gold queries are written by hand and are often sloppy (missing dots,
names with spaces, single-quoted literals). `parse_query` reads what the other
stages need from one: its triple patterns as term strings (`<name>`, `?var`,
`"literal"`), the answer variable, whether it counts, and whether it uses
more than a basic graph pattern. Training (supervision), coverage (which
template expresses it), evaluation (its shape, its entities) all read gold
queries through it; coverage reads the templates through it as well.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from coqa.kb.names import Term

Triple = tuple[str, str, str]

_TERM = re.compile(r'<[^<>\n]*>|\?\w+|"(?:[^"\\]|\\.)*"(?:\^\^<[^>]*>"?|@[\w-]+)?|\'[^\']*\'')
_BODY = re.compile(r"\{(.*)\}", re.S)
_FILTER = re.compile(r"(?i)\bfilter\s*\(.*?\)\s*\.?")
_QUOTED = re.compile(r'<[^<>\n]*>|"(?:[^"\\]|\\.)*"|\'[^\']*\'')
_VARIABLE = re.compile(r"\?\w+")
_COUNT = re.compile(r"(?i)\bcount\s*\(")
_BEYOND_BGP = re.compile(
    r"(?i)(?<![?$\w])(?:filter|union|optional|minus|values|bind|order\s+by|group\s+by|having|limit|offset)\b"
    r"|(?<![?$\w])(?:count|sum|avg|min|max)\s*\("
)


def is_variable(term: str) -> bool:
    return term.startswith("?")


def is_literal(term: str) -> bool:
    return term.startswith(('"', "'"))


def is_name(term: str) -> bool:
    return term.startswith("<")


def as_term(term: str) -> Term | None:
    """A constant term string as a Term (`<name>` an entity, a quoted string
    its literal value without quotes, datatype or language tag); None for a variable."""
    if is_name(term):
        return Term.entity(term[1:-1])
    if is_literal(term):
        return Term.literal(term[1 : term.rfind(term[0])])
    return None


@dataclass(frozen=True)
class GoldQuery:
    """What a SPARQL query says, read leniently (see the module doc)."""

    triples: tuple[Triple, ...]
    answer_variable: str | None  # the first projected variable, else the first variable of the triples
    is_count: bool
    beyond_basic_pattern: bool  # FILTER, UNION, OPTIONAL, ..., ORDER BY, LIMIT, aggregates

    def entities(self) -> list[str]:
        """Distinct `<names>` in subject or object position, in order."""
        terms = [term for s, _, o in self.triples for term in (s, o) if is_name(term)]
        return list(dict.fromkeys(terms))

    def constants(self) -> set[Term]:
        """Entities and literal values in subject or object position."""
        return {term for s, _, o in self.triples for term in (as_term(s), as_term(o)) if term is not None}


def parse_query(sparql: str) -> GoldQuery:
    """Read a (possibly sloppy) SPARQL query. Missing dots are tolerated;
    FILTER clauses are skipped when collecting the triples."""
    return GoldQuery(
        triples=tuple(_triples(sparql)),
        answer_variable=_answer_variable(sparql),
        is_count=bool(_COUNT.search(sparql)),
        beyond_basic_pattern=bool(_BEYOND_BGP.search(_QUOTED.sub(" ", sparql))),
    )


def _triples(sparql: str) -> list[Triple]:
    match = _BODY.search(sparql)
    if not match:
        return []
    terms = [t.group(0) for t in _TERM.finditer(_FILTER.sub(" ", match.group(1)))]
    return [(terms[i], terms[i + 1], terms[i + 2]) for i in range(0, len(terms) - len(terms) % 3, 3)]


def _answer_variable(sparql: str) -> str | None:
    head, _, body = _QUOTED.sub(" ", sparql).partition("{")
    variables = _VARIABLE.findall(head) or _VARIABLE.findall(body)
    return variables[0] if variables else None
