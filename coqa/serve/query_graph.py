"""The graph of a SPARQL query's triple patterns, for the picture on the web page.

Nodes are the entities, literals and variables of the patterns (the first
projected variable is the answer); edges are the patterns, labelled with
their predicate. The queries are the pipeline's templates, in PKU BASE
style: bare `<name>`s, which no SPARQL parser among coqa's dependencies
accepts, so this module reads the patterns with a small tokenizer. It
understands triples joined by `.`, `;` and `,` inside the WHERE braces and
skips FILTER/BIND expressions and keywords; anything else is left out of
the picture, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from coqa.kb.names import iri_to_name

_TOKEN = re.compile(
    r"""
    (?P<literal>"(?:[^"\\\n]|\\.)*"(?:\^\^<[^<>\s]*>|@[A-Za-z][A-Za-z0-9-]*)?)
  | (?P<iri><(?![\s=])[^<>\n]*>)
  | (?P<variable>[?$]\w+)
  | (?P<word>[A-Za-z_][\w-]*(?::[\w.-]*)?)
  | (?P<number>[+-]?\d+(?:\.\d+)?)
  | (?P<mark>\S)
    """,
    re.VERBOSE,
)
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
RDF_TYPE = "rdf:type"


@dataclass
class GraphNode:
    """A term of the query: `kind` is entity, literal or variable; `answer`
    marks the variable the query returns."""

    id: str
    label: str
    kind: str
    answer: bool = False


@dataclass
class GraphEdge:
    """One triple pattern: subject -> object, labelled with the predicate
    (`variable` when the predicate itself is a variable, i.e. the answer is a relation)."""

    source: str
    target: str
    label: str
    variable: bool = False


@dataclass
class QueryGraph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)


@dataclass(frozen=True)
class _Term:
    id: str
    label: str
    kind: str


def _term(kind: str, text: str) -> _Term:
    if kind == "variable":
        return _Term("?" + text[1:], "?" + text[1:], "variable")
    if kind == "iri":
        content = text[1:-1]
        name = iri_to_name(content)
        label = content if name is None else name
        return _Term(f"<{label}>", label, "entity")
    if kind == "literal":
        body = text[1 : text.rindex('"')]
        value = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)
        return _Term(f'"{value}"', value, "literal")
    if kind == "number":
        return _Term(f'"{text}"', text, "literal")
    return _Term(text, text, "entity")  # a prefixed name


def _tokens(query: str) -> list[tuple[str, str]]:
    return [(match.lastgroup or "mark", match.group(0)) for match in _TOKEN.finditer(query)]


def query_graph(query: str) -> QueryGraph:
    """The triple patterns of `query` as a graph (empty when it has none)."""
    tokens = _tokens(query)
    start = next((i for i, (kind, text) in enumerate(tokens) if kind == "mark" and text == "{"), None)
    if start is None:
        return QueryGraph()
    answer = next((text for kind, text in tokens[:start] if kind == "variable"), None)
    triples = _triples(tokens, start + 1)
    graph = QueryGraph()
    nodes: dict[str, GraphNode] = {}
    for subject, predicate, obj in triples:
        for term in (subject, obj):
            if term.id not in nodes:
                nodes[term.id] = GraphNode(term.id, term.label, term.kind, term.id == _answer_id(answer))
        graph.edges.append(GraphEdge(subject.id, obj.id, predicate.label, predicate.kind == "variable"))
    graph.nodes = list(nodes.values())
    return graph


def _answer_id(variable: str | None) -> str | None:
    return None if variable is None else "?" + variable[1:]


def _triples(tokens: list[tuple[str, str]], position: int) -> list[tuple[_Term, _Term, _Term]]:
    """Triple patterns from `position` (just inside the WHERE brace) to its closing brace."""
    triples: list[tuple[_Term, _Term, _Term]] = []
    terms: list[_Term] = []
    depth = 1
    while position < len(tokens) and depth:
        kind, text = tokens[position]
        position += 1
        if kind == "mark":
            if text == "{":
                depth += 1
                terms = []
            elif text == "}":
                depth -= 1
                terms = []
            elif text == ".":
                terms = []
            elif text == ";":
                terms = terms[:1]
            elif text == ",":
                terms = terms[:2]
            elif text == "(":
                position = _skip_group(tokens, position)
                terms = []
            continue
        if kind == "word" and text != "a":
            terms = []  # FILTER, BIND, OPTIONAL, ...: not a term of a pattern
            continue
        terms.append(_Term(RDF_TYPE, RDF_TYPE, "entity") if text == "a" else _term(kind, text))
        if len(terms) == 3:
            triples.append((terms[0], terms[1], terms[2]))
            terms = terms[:2]  # a following `,` keeps them; `.` or `;` resets
    return triples


def _skip_group(tokens: list[tuple[str, str]], position: int) -> int:
    """The position after the `)` closing the group opened just before `position`."""
    depth = 1
    while position < len(tokens) and depth:
        text = tokens[position][1]
        depth += {"(": 1, ")": -1}.get(text, 0) if tokens[position][0] == "mark" else 0
        position += 1
    return position
