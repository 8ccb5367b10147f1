"""The shape of a gold SPARQL query, for the per-shape breakdown of `coqa eval`.

Triple patterns without a variable (`<e1> <p> <e2>`) are facts the query
checks; they restrict nothing the other patterns do not, so they are set
aside before the rules (`<e> <城市> <宁波> . <e> <营业时间> ?x` is a one hop).
"Patterns" below are the remaining ones. Every query gets exactly one shape:
the first rule that matches, in this order.

1. complex: the query has no readable pattern, or uses more than a basic
   graph pattern (FILTER, UNION, OPTIONAL, MINUS, VALUES, BIND, ORDER BY,
   GROUP BY, HAVING, LIMIT, OFFSET, COUNT/SUM/AVG/MIN/MAX), or has 3 or more
   patterns, or 2 patterns sharing no variable.
2. predicate answer: the answer variable is in predicate position
   (`<e1> ?x <e2>`).
3. type constraint: a pattern `?v <类型> <T>` with a constant type T (asking
   for an entity's type, `<e> <类型> ?x`, is a one hop).
4. one hop: one pattern (`<e> <p> ?x`, `?x <p> "literal"`).
5. literal constraint: 2 patterns, one with a literal object
   (`?x <誉称> "万岛之国" . ?x <p> ?y`).
6. star: 2 patterns that both hold the answer variable
   (`?x <p1> <e1> . ?x <p2> <e2>`).
7. chain: 2 patterns joined by another variable (`<e> <p1> ?y . ?y <p2> ?x`).

The answer variable is the first variable after SELECT; for `SELECT *` or
ASK, the first variable of the body.
"""

from __future__ import annotations

import re

from coqa.dataset import gold_triples

ONE_HOP = "one hop"
CHAIN = "chain"
STAR = "star"
TYPE_CONSTRAINT = "type constraint"
LITERAL_CONSTRAINT = "literal constraint"
PREDICATE_ANSWER = "predicate answer"
COMPLEX = "complex"
SHAPES = (ONE_HOP, CHAIN, STAR, TYPE_CONSTRAINT, LITERAL_CONSTRAINT, PREDICATE_ANSWER, COMPLEX)

TYPE_PREDICATE = "<类型>"

_QUOTED = re.compile(r'<[^<>\n]*>|"(?:[^"\\]|\\.)*"|\'[^\']*\'')
_BEYOND_BGP = re.compile(
    r"(?i)(?<![?$\w])(?:filter|union|optional|minus|values|bind|order\s+by|group\s+by|having|limit|offset)\b"
    r"|(?<![?$\w])(?:count|sum|avg|min|max)\s*\("
)
_VARIABLE = re.compile(r"\?\w+")

Triple = tuple[str, str, str]


def _is_variable(term: str) -> bool:
    return term.startswith("?")


def _is_literal(term: str) -> bool:
    return term.startswith(('"', "'"))


def answer_variable(sparql: str, triples: list[Triple]) -> str | None:
    """The first projected variable, else the first variable of the triples."""
    head = _QUOTED.sub(" ", sparql).split("{", 1)[0]
    projected = _VARIABLE.findall(head)
    if projected:
        return projected[0]
    body_variables = [term for triple in triples for term in triple if _is_variable(term)]
    return body_variables[0] if body_variables else None


def _variables(triple: Triple) -> set[str]:
    return {term for term in triple if _is_variable(term)}


def query_shape(sparql: str) -> str:
    """The shape of a gold SPARQL query (one of SHAPES; rules in the module doc)."""
    triples = [triple for triple in gold_triples(sparql) if _variables(triple)]
    if _is_complex(sparql, triples):
        return COMPLEX
    answer = answer_variable(sparql, triples)
    if any(predicate == answer for _, predicate, _ in triples):
        return PREDICATE_ANSWER
    if any(p == TYPE_PREDICATE and not _is_variable(o) for _, p, o in triples):
        return TYPE_CONSTRAINT
    if len(triples) == 1:
        return ONE_HOP
    if any(_is_literal(o) for _, _, o in triples):
        return LITERAL_CONSTRAINT
    if all(answer in _variables(triple) for triple in triples):
        return STAR
    return CHAIN


def _is_complex(sparql: str, triples: list[Triple]) -> bool:
    if not triples or len(triples) >= 3 or _BEYOND_BGP.search(_QUOTED.sub(" ", sparql)):
        return True
    return len(triples) == 2 and not (_variables(triples[0]) & _variables(triples[1]))
