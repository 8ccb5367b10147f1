"""Admission's one-pass check and rewrite (`standard_text`) against the three
steps it replaces: the bounds of the query, the name codec's rewrite, the
bounds of the rewritten text."""

from __future__ import annotations

import pytest

from coqa.kb.backends.admission import (
    MAX_NESTING,
    MAX_QUERY_CHARS,
    MAX_REWRITTEN_CHARS,
    MAX_TRIPLE_PATTERNS,
    check_bounds,
    check_rewritten,
    standard_text,
)
from coqa.kb.base import KBError
from coqa.kb.names import to_standard_sparql
from coqa.kb.sparql_text import structure_text

QUERIES = [
    "SELECT ?x WHERE { <李白 (诗人)> <代表作品> ?x . }",
    "select distinct ?y where { ?y <类型> <城市> . FILTER(?y != <上海>) } LIMIT 5",
    'SELECT ?x WHERE { ?x <名字> "a # not a comment" . } # a comment\n',
    "SELECT ?x WHERE { # comment ending in a lone CR\r?x <p> <o> . }",
    "ASK { <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> ?p ?o }",
    "SELECT (COUNT(?x) AS ?n) WHERE { ?x <年龄> ?a . FILTER(?a <=5 && ?a >= 1) }",
    "SELECT ?x WHERE { VALUES ?p { <出生地> <籍贯> } <鲁迅> ?p ?x . }",
    "SELECT ?x WHERE { ?x <p> \"\"\"long\nstring <not a name>\"\"\" . }",
    "SELECT * WHERE { ?s ?p ?o }#end without a line end",
]


@pytest.mark.parametrize("query", QUERIES)
def test_one_pass_gives_the_rewrite_of_the_three_steps(query: str) -> None:
    check_bounds(query)
    check_rewritten(to_standard_sparql(query))
    assert standard_text(query) == to_standard_sparql(query)


@pytest.mark.parametrize("query", QUERIES)
def test_the_rewrite_keeps_the_structure_of_the_query(query: str) -> None:
    original, _ = structure_text(query.replace("\r", "\n"))
    rewritten, _ = structure_text(standard_text(query))
    assert rewritten.split() == original.split()


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("SELECT * WHERE { " + "?s ?p ?o . " * 10 + "}" + " " * MAX_QUERY_CHARS, "too long"),
        ("SELECT * WHERE { #x\r" + "{" * (MAX_NESTING + 1) + "}" * (MAX_NESTING + 1) + " }", "nested too deeply"),
        ("SELECT * WHERE { " + "?s ?p ?o . " * (MAX_TRIPLE_PATTERNS + 1) + "}", "too many triple patterns"),
        ("SELECT * WHERE { SeRvIcE <http://127.0.0.1:9/> { ?s ?p ?o } }", "SERVICE is refused"),
        ("PREFIX t: <http://127.0.0.1:9/>\nSELECT * WHERE { t:service ?p ?o }", "SERVICE is refused"),
    ],
)
def test_one_pass_refuses_what_the_bounds_refuse(query: str, reason: str) -> None:
    with pytest.raises(KBError, match=reason):
        check_bounds(query)
    with pytest.raises(KBError, match=reason):
        standard_text(query)


def test_the_longest_rewrite_of_an_admitted_query_is_within_the_rewritten_bound() -> None:
    # The shortest name gains the most: `<x>` becomes an absolute IRI.
    query = "SELECT ?x WHERE { VALUES ?x { " + "<x>" * ((MAX_QUERY_CHARS - 40) // 3) + " } }"
    assert len(standard_text(query)) <= MAX_REWRITTEN_CHARS
