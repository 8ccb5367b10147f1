"""Lookups of several nodes in one query (`coqa.shapes.BATCHED_BY_LOOKUP`):
split back per node, their rows are those of each node's own lookup on the
embedded store, a real `oxigraph serve` and a real gStore (which gets the
VALUES block as a UNION), with or without the rows kept across questions;
query generation reading them gives the same candidates, cuts and answers
as with one lookup per node, in fewer queries. (The same on pkubase-bench
and Virtuoso too: tests/integration/test_same_answers.py.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterator

import pytest
from conftest import WRITER, CountingKnowledgeBase

from coqa.config import default_settings, load_settings
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.gstore import GStore
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.pipeline import Pipeline
from coqa.querygen.neighbourhood import NeighbourhoodReader
from coqa.resources import QUERIES_DIR
from coqa.shapes import BATCHED_BY_LOOKUP, DISCOVER_IN
from coqa.templates import load_templates
from coqa.testing.gstore_server import GStoreServer

# Entities with edges both ways, names the engines hold in other forms (quotes, `|`, a trailing space), one
# without any edge; literals only where a lookup reads edges arriving at its nodes.
ENTITIES = [Term.entity(name) for name in (WRITER, "雪夜行", "周星驰", '"红线"行动', "甲|乙", "云溪市", "无此实体")]
LITERALS = [Term.literal("千湖之城"), Term.literal("320")]
QUESTIONS = ["周星驰的身高是多少？", "周星驰主演了哪些电影？", "雪夜行的作者是谁？", "林海的代表作品有哪些？", "雪夜行的出版社在哪里？"]


@pytest.fixture(params=["embedded", "oxigraph serve", "gStore"])
def engine(request: pytest.FixtureRequest, kb_store_dir: Path) -> Iterator[KnowledgeBase]:
    kb: KnowledgeBase
    if request.param == "embedded":
        kb = OxigraphStore(kb_store_dir / STORE_SUBDIR)
    elif request.param == "oxigraph serve":
        kb = SparqlEndpoint(request.getfixturevalue("oxigraph_server"), timeout=10, retries=0)
    else:
        server: GStoreServer = request.getfixturevalue("gstore_server")
        kb = GStore(server.url, server.db, timeout=10, retries=0)
    yield kb
    kb.close()


def nodes_of(lookup: str) -> list[Term]:
    return ENTITIES + LITERALS if lookup == DISCOVER_IN else ENTITIES


@pytest.mark.parametrize("lookup", sorted(BATCHED_BY_LOOKUP))
def test_rows_split_per_node_are_each_nodes_own_lookup(engine: KnowledgeBase, lookup: str) -> None:
    templates = load_templates(QUERIES_DIR)
    nodes = nodes_of(lookup)
    own = {node: sorted(engine.select(templates[lookup].render({"e": node})).rows) for node in nodes}
    assert sum(map(bool, own.values())) >= 4  # most nodes have rows: the split is tested on something
    counting = CountingKnowledgeBase(engine)
    reader = NeighbourhoodReader(counting, templates, default_settings().query_generation, nodes_per_query=4)
    split = reader.rows_per_node(lookup, [*nodes, nodes[0]])  # a node named twice is asked once
    assert {node: sorted(rows) for node, rows in split.items()} == own
    assert counting.sent == -(-len(ENTITIES) // 4) + (lookup == DISCOVER_IN)  # entities and literals apart


@pytest.mark.parametrize("lookup", sorted(BATCHED_BY_LOOKUP))
def test_split_rows_are_kept_as_each_nodes_own_lookup(engine: KnowledgeBase, lookup: str) -> None:
    templates = load_templates(QUERIES_DIR)
    nodes = nodes_of(lookup)
    counting = CountingKnowledgeBase(engine)
    cached = CachedKnowledgeBase(counting, max_rows=10_000)
    reader = NeighbourhoodReader(cached, templates, default_settings().query_generation, nodes_per_query=8)
    first = reader.rows_per_node(lookup, nodes[:3])
    assert counting.sent == 1
    for node in nodes[:3]:
        assert cached.select(templates[lookup].render({"e": node})).rows == first[node]
    assert counting.sent == 1
    again = reader.rows_per_node(lookup, nodes)  # three kept, the other entities in one query, the literals in another
    assert counting.sent == 2 + (lookup == DISCOVER_IN)
    assert {node: sorted(rows) for node, rows in again.items()} == {
        node: sorted(engine.select(templates[lookup].render({"e": node})).rows) for node in nodes
    }


def test_query_generation_reads_the_same_neighbourhoods_in_fewer_queries(kb_store_dir: Path) -> None:
    """Batched lookups (kb_nodes_per_query 8) against one lookup per node (the
    default): the same candidates, cuts and answers, fewer queries."""
    per_node = Pipeline.from_settings(load_settings(flags={"store": str(kb_store_dir)}))
    batched = replace(per_node.settings, kb_nodes_per_query=8)
    counted = {name: CountingKnowledgeBase(OxigraphStore(kb_store_dir / STORE_SUBDIR)) for name in ("per node", "batched")}
    pipelines = {
        name: Pipeline(kb, per_node.index, per_node.model, per_node.templates, batched if name == "batched" else per_node.settings)  # type: ignore[arg-type]
        for name, kb in counted.items()
    }
    assert pipelines["per node"].generator.reader.nodes_per_query == 1
    try:
        for question in QUESTIONS:
            one, other = (pipelines[name].analyse(question) for name in ("per node", "batched"))
            assert one.candidates == other.candidates and one.cuts == other.cuts
            assert pipelines["per node"].answer(question).answers == pipelines["batched"].answer(question).answers
        assert counted["batched"].sent < counted["per node"].sent
    finally:
        for pipeline in (per_node, *pipelines.values()):
            pipeline.close()
