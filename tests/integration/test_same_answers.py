"""Same answers everywhere: all pkubase-bench dev gold queries (read from
../shared at run time) on the embedded store, a real `oxigraph serve`, a real
gStore loaded with `coqa export --to gstore` and a real Virtuoso loaded with
`coqa export --to ntriples` give identical result sets, and the embedded
store's first column is the published gold answer set. So do the discovery
and expansion queries query generation sends around the gold entities (none
is cut by a LIMIT, so no engine may keep rows of its own choosing)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from conftest import BENCH_DIR

from coqa.config import default_settings
from coqa.dataset import read_ccks
from coqa.gold import parse_query
from coqa.edges import IN_READ_WHOLE, OUT_READ_WHOLE
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.gstore import GStore
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.querygen.neighbourhood import NeighbourhoodReader
from coqa.templates import load_templates
from coqa.resources import QUERIES_DIR
from coqa.shapes import (
    BATCHED_BY_LOOKUP,
    CHAIN,
    DISCOVER_IN,
    DISCOVER_OUT,
    EDGES_IN,
    EDGES_OUT,
    EXPAND_IN,
    EXPAND_OUT,
    IN_DEGREE,
    TYPED,
    shapes_of,
)
from coqa.testing.gstore_server import GStoreServer

GENERATION_ENTITIES = 40  # gold entities of the first dev questions whose neighbourhoods are queried
DEGREE_LIMIT = 5  # a cap most of those entities exceed, so the capped counts and reads are compared where they cut


@pytest.fixture(scope="module")
def engines(
    bench_store_dir: Path, bench_server: str, bench_gstore: GStoreServer, bench_virtuoso: str
) -> Iterator[tuple[OxigraphStore, dict[str, KnowledgeBase]]]:
    """The embedded bench store and the three remote engines holding the same data."""
    embedded = OxigraphStore(bench_store_dir / STORE_SUBDIR)
    remotes: dict[str, KnowledgeBase] = {
        "oxigraph serve": SparqlEndpoint(bench_server, timeout=30, retries=0),
        "gStore": GStore(bench_gstore.url, bench_gstore.db, timeout=30, retries=0),
        "Virtuoso": SparqlEndpoint(bench_virtuoso, timeout=30, retries=0),
    }
    yield embedded, remotes
    for kb in (embedded, *remotes.values()):
        kb.close()


@pytest.mark.slow
def test_dev_gold_queries_give_identical_results_on_four_engines(engines: tuple[OxigraphStore, dict[str, KnowledgeBase]]) -> None:
    embedded, remotes = engines
    questions = read_ccks(BENCH_DIR / "dev.txt")
    differ: dict[str, list[int]] = {name: [] for name in remotes}
    wrong = []
    for question in questions:
        local = embedded.select(question.sparql)
        expected = (local.variables, set(local.rows))
        for name, kb in remotes.items():
            result = kb.select(question.sparql)
            if (result.variables, set(result.rows)) != expected:
                differ[name].append(question.number)
        if sorted(str(term) for term in local.column(0)) != sorted(question.answers):
            wrong.append(question.number)
    assert len(questions) == 703
    assert (differ, wrong) == ({name: [] for name in remotes}, [])


def _generation_queries(embedded: OxigraphStore) -> Iterator[str]:
    """Every discovery and expansion template, rendered for gold entities of
    the first dev questions with all the predicates around them, and their
    arriving edges counted up to a cap."""
    templates = load_templates(QUERIES_DIR)
    entities = list(dict.fromkeys(e for q in read_ccks(BENCH_DIR / "dev.txt") for e in parse_query(q.sparql).entities()))
    for name in entities[:GENERATION_ENTITIES]:
        entity = Term.entity(name.strip("<>"))
        for batched in BATCHED_BY_LOOKUP.values():  # the entity beside another (the last of the gold entities)
            yield templates[batched].render({"entities": [entity, Term.entity(entities[len(entities) - 1].strip("<>"))]})
        yield templates[IN_DEGREE].render({"entities": [entity], "limit": DEGREE_LIMIT})
        around = {}
        for direction in (DISCOVER_OUT, DISCOVER_IN):
            query = templates[direction].render({"e": entity})
            yield query
            around[direction] = [row[0] for row in embedded.select(query).rows]
        for template, direction in ((EXPAND_OUT, DISCOVER_OUT), (EXPAND_IN, DISCOVER_IN)):
            if around[direction]:
                yield templates[template].render({"e": entity, "predicates": around[direction]})
        for shape in shapes_of(CHAIN):
            first = around[DISCOVER_OUT if shape.outward else DISCOVER_IN][:20]
            if first:
                for template in (shape.discovery, shape.fetch):  # a discovery's walk bound that cuts nothing: coqa uses no cut count
                    yield templates[template].render({"e": entity, "predicates": first, "limit": 1_000_000})
        for shape in shapes_of(TYPED):
            predicates = around[DISCOVER_OUT if shape.outward else DISCOVER_IN]
            if predicates:
                yield templates[shape.discovery].render({"e": entity, "predicates": predicates, "t": Term.entity("人物")})


@pytest.mark.slow
def test_query_generation_queries_give_identical_rows_on_four_engines(
    engines: tuple[OxigraphStore, dict[str, KnowledgeBase]],
) -> None:
    embedded, remotes = engines
    differ: dict[str, list[str]] = {name: [] for name in remotes}
    sent = 0
    for query in _generation_queries(embedded):
        expected = _read_as_coqa_does(embedded.select(query).rows)
        sent += 1
        for name, kb in remotes.items():
            if _read_as_coqa_does(kb.select(query).rows) != expected:
                differ[name].append(query)
    assert sent > 5 * GENERATION_ENTITIES
    assert differ == {name: [] for name in remotes}


@pytest.mark.slow
def test_edges_read_whole_agree_on_four_engines(engines: tuple[OxigraphStore, dict[str, KnowledgeBase]]) -> None:
    """A node's edges one way (`coqa.edges`, at most a LIMIT of rows): every
    engine agrees whether they are all there and, where they are, on the
    rows; where a read reaches its limit (a cap most gold entities exceed),
    only on that, which is all coqa reads from it (the rows are each engine's choice)."""
    embedded, remotes = engines
    templates = load_templates(QUERIES_DIR)
    entities = list(dict.fromkeys(e for q in read_ccks(BENCH_DIR / "dev.txt") for e in parse_query(q.sparql).entities()))
    differ: dict[str, list[str]] = {name: [] for name in remotes}
    cut = 0
    for name in entities[:GENERATION_ENTITIES]:
        for template, whole in ((EDGES_OUT, OUT_READ_WHOLE), (EDGES_IN, IN_READ_WHOLE)):
            for limit in (DEGREE_LIMIT, whole + 1):
                query = templates[template].render({"e": Term.entity(name.strip("<>")), "limit": limit})
                rows = embedded.select(query).rows
                expected = sorted(rows) if len(rows) < limit else limit
                cut += len(rows) >= limit
                for engine, kb in remotes.items():
                    found = kb.select(query).rows
                    if (sorted(found) if len(found) < limit else limit) != expected:
                        differ[engine].append(query)
    assert cut > GENERATION_ENTITIES / 2
    assert differ == {name: [] for name in remotes}


@pytest.mark.slow
def test_batched_lookups_split_per_node_give_each_nodes_own_rows_on_four_engines(
    engines: tuple[OxigraphStore, dict[str, KnowledgeBase]],
) -> None:
    """The lookups of several nodes in one query (BATCHED_BY_LOOKUP), split back
    per node, give each node the rows of its own lookup on every engine, for
    entities and literals alike."""
    embedded, remotes = engines
    templates = load_templates(QUERIES_DIR)
    entities = list(dict.fromkeys(e for q in read_ccks(BENCH_DIR / "dev.txt") for e in parse_query(q.sparql).entities()))
    literals = [row[0] for row in embedded.select('SELECT DISTINCT ?o WHERE { ?s <类别> ?o . FILTER(isLiteral(?o)) } LIMIT 5').rows]
    nodes = [t for t in literals if t is not None] + [Term.entity(name.strip("<>")) for name in entities[:GENERATION_ENTITIES]]
    differ: dict[str, list[str]] = {}
    for name, kb in {"embedded": embedded, **remotes}.items():
        reader = NeighbourhoodReader(kb, templates, default_settings().query_generation, nodes_per_query=8)
        for lookup in BATCHED_BY_LOOKUP:
            split = reader.rows_per_node(lookup, nodes)
            for node in nodes:
                if sorted(split[node]) != sorted(kb.select(templates[lookup].render({"e": node})).rows):
                    differ.setdefault(name, []).append(f"{lookup} {node}")
    assert differ == {}


def _read_as_coqa_does(rows: list[tuple[Term | None, ...]]) -> list[tuple[Term | None, ...]]:
    """The rows in order; gStore answers a COUNT of nothing with no row where
    the others give 0, and the bounded counts read no row as 0
    (`NeighbourhoodReader.bounded_count`)."""
    return sorted(rows) or [(Term.literal("0"),)]
