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
ASK, the first variable of the body (coqa.gold reads the query). The
categories are those of coqa.shapes, where each query shape names the
category it expresses.
"""

from __future__ import annotations

from coqa.gold import Triple, is_literal, is_variable, parse_query
from coqa.shapes import (
    GOLD_CATEGORIES, GOLD_CHAIN, GOLD_COMPLEX, GOLD_LITERAL_CONSTRAINT, GOLD_ONE_HOP, GOLD_PREDICATE_ANSWER, GOLD_STAR,
    GOLD_TYPE_CONSTRAINT, TYPE_PREDICATE,
)  # fmt: skip

SHAPES = GOLD_CATEGORIES


def _variables(triple: Triple) -> set[str]:
    return {term for term in triple if is_variable(term)}


def query_shape(sparql: str) -> str:
    """The shape of a gold SPARQL query (one of SHAPES; rules in the module doc)."""
    query = parse_query(sparql)
    triples = [triple for triple in query.triples if _variables(triple)]
    if not triples or len(triples) >= 3 or query.beyond_basic_pattern:
        return GOLD_COMPLEX
    if len(triples) == 2 and not (_variables(triples[0]) & _variables(triples[1])):
        return GOLD_COMPLEX
    answer = query.answer_variable
    if any(predicate == answer for _, predicate, _ in triples):
        return GOLD_PREDICATE_ANSWER
    if any(p == f"<{TYPE_PREDICATE}>" and not is_variable(o) for _, p, o in triples):
        return GOLD_TYPE_CONSTRAINT
    if len(triples) == 1:
        return GOLD_ONE_HOP
    if any(is_literal(o) for _, _, o in triples):
        return GOLD_LITERAL_CONSTRAINT
    if all(answer in _variables(triple) for triple in triples):
        return GOLD_STAR
    return GOLD_CHAIN
