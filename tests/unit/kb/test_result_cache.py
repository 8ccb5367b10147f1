"""The rows of recent queries kept in front of a backend: the same rows as the
store, the store asked once per query while it is kept, the row budget held."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

import pytest
from conftest import CountingKnowledgeBase, CountingStore

from coqa.config import load_settings
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.base import KBError
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase, split_rows
from coqa.pipeline import Pipeline

EDGES = "SELECT ?s ?p ?o WHERE { ?s ?p ?o . } LIMIT {n}"


@pytest.fixture
def store(kb_store_dir: Path) -> Iterator[CountingStore]:
    counting = CountingStore(kb_store_dir / STORE_SUBDIR)
    yield counting
    counting.close()


def edges(n: int) -> str:
    return EDGES.replace("{n}", str(n))


def test_a_repeated_query_gets_the_same_rows_without_reaching_the_store(store: CountingStore) -> None:
    cached = CachedKnowledgeBase(store, max_rows=1000)
    first = cached.select(edges(5))
    first.rows.clear()  # each caller gets its own row list
    again = cached.select(edges(5))
    assert again.rows == store.select(edges(5)).rows and len(again.rows) == 5
    assert store.sent == [edges(5), edges(5)]  # the second was the test's own


def page(k: int) -> str:
    return f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o . }} LIMIT 3 OFFSET {k}"


def test_the_least_recently_used_results_leave_when_the_row_budget_is_full(store: CountingStore) -> None:
    cached = CachedKnowledgeBase(store, max_rows=40)  # room for 10 results of 3 rows (+1 each)
    for k in range(10):
        cached.select(page(k))
    cached.select(page(0))  # used again: page 1 is now the least recently used
    cached.select(page(10))
    store.sent.clear()
    cached.select(page(0))
    cached.select(page(2))
    cached.select(page(10))
    assert store.sent == []
    cached.select(page(1))
    assert store.sent == [page(1)]


def test_a_result_larger_than_a_tenth_of_the_budget_is_not_kept(store: CountingStore) -> None:
    cached = CachedKnowledgeBase(store, max_rows=40)
    cached.select(edges(5))
    cached.select(edges(5))
    assert store.sent == [edges(5), edges(5)]


def test_a_budget_of_zero_keeps_nothing(store: CountingStore) -> None:
    cached = CachedKnowledgeBase(store, max_rows=0)
    cached.select(edges(0))
    cached.select(edges(0))
    assert store.sent == [edges(0), edges(0)]


def test_rows_kept_for_one_question_are_forgotten_when_the_next_starts(store: CountingStore) -> None:
    for lifetime, sent_again in ((0.0, [edges(3)]), (None, [])):
        cached = CachedKnowledgeBase(store, max_rows=1000, lifetime=lifetime)
        cached.start_question()
        cached.select(edges(3))
        cached.select(edges(3))  # the same question asks again: from memory either way
        store.sent.clear()
        cached.start_question()
        cached.select(edges(3))
        assert store.sent == sent_again




def test_a_pipeline_keeps_rows_across_questions_for_a_run_and_a_server_for_its_lifetime(oxigraph_server: str, kb_store_dir: Path) -> None:
    """The same question twice: in a run the second sends no query, on the
    embedded store and through a SPARQL endpoint alike; with rows that serve
    one question only (kb_cache_seconds 0 under `coqa serve`) an endpoint is
    sent them all again, the embedded store (a snapshot) still none."""
    remote = {"backend": "sparql", "endpoint": oxigraph_server, "mention_index": str(kb_store_dir / INDEX_SUBDIR)}
    for flags, lifetime, sent_again in (
        ({"store": str(kb_store_dir)}, None, lambda first: 0),
        ({"store": str(kb_store_dir)}, 0.0, lambda first: 0),
        (remote, None, lambda first: 0),
        (remote, 0.0, lambda first: first),
    ):
        opened = Pipeline.from_settings(load_settings(flags=flags))
        counting = CountingKnowledgeBase(opened.kb.kb)
        pipeline = Pipeline(counting, opened.index, opened.model, opened.templates, opened.settings, rows_lifetime=lifetime)  # type: ignore[arg-type]
        try:
            pipeline.answer("周星驰的身高是多少？")
            first, counting.sent = counting.sent, 0
            assert pipeline.answer("周星驰的身高是多少？").answers == ['"174cm"']
            assert first > 1 and counting.sent == sent_again(first)
        finally:
            pipeline.close()


EXPAND = "SELECT ?p ?o WHERE { VALUES ?p { {{predicates}} } <周星驰> ?p ?o . }"


def expand(predicates: list[Term]) -> str:
    return EXPAND.replace("{{predicates}}", " ".join(f"<{p.value}>" for p in predicates))


def test_rows_by_value_are_those_of_the_whole_query_and_a_kept_value_is_not_asked_again(store: CountingStore) -> None:
    """`select_by_value`: the rows of the query over all values, grouped by
    value in their order; the next call asks the store only for the values
    no recent call asked (a predicate without rows is kept too)."""
    works, height, born, none = (Term.entity(p) for p in ("代表作品", "身高", "出生地", "配偶"))
    cached = CachedKnowledgeBase(store, max_rows=1000)
    rows = cached.select_by_value(expand, [height, works, none])
    assert sorted(rows) == sorted(store.select(expand([height, works, none])).rows)
    assert [row[0] for row in rows] == [height, works, works]
    store.sent.clear()
    rows = cached.select_by_value(expand, [born, none, works])
    assert store.sent == [expand([born])]
    assert sorted(rows) == sorted(store.select(expand([born, none, works])).rows) and len(rows) == 3


def test_rows_by_value_for_one_question_send_the_whole_query(store: CountingStore) -> None:
    """A knowledge base whose rows serve one question (a server) gets the query over all the values, as without a cache."""
    works, height = Term.entity("代表作品"), Term.entity("身高")
    cached = CachedKnowledgeBase(store, max_rows=1000, lifetime=0)
    cached.select_by_value(expand, [works])
    store.sent.clear()
    assert len(cached.select_by_value(expand, [works, height])) == 3
    assert store.sent == [expand([works, height])]


EXPAND_WITHIN = EXPAND + " LIMIT 3"


def expand_within(predicates: list[Term]) -> str:
    return expand(predicates) + " LIMIT 3"


def test_rows_by_value_within_a_limit_are_used_and_kept_only_when_fewer_came_back(store: CountingStore) -> None:
    """`select_by_value_within`: a query that reached its LIMIT gives None and
    leaves nothing kept (which rows an engine returns then is its choice);
    one below it gives its rows, kept per value like `select_by_value`."""
    works, height = Term.entity("代表作品"), Term.entity("身高")
    cached = CachedKnowledgeBase(store, max_rows=1000)
    assert cached.select_by_value_within(expand_within, [height, works], limit=3) is None  # 1 + 2 rows: the limit
    whole = store.select(expand([works])).rows
    store.sent.clear()
    rows = cached.select_by_value_within(expand_within, [works], limit=3)
    assert rows is not None and sorted(rows) == sorted(whole) and len(rows) == 2
    assert store.sent == [expand_within([works])]  # not kept from the query that reached the limit
    store.sent.clear()
    assert cached.select_by_value_within(expand_within, [works], limit=3) == rows and store.sent == []
    for_one_question = CachedKnowledgeBase(store, max_rows=1000, lifetime=0)
    assert for_one_question.select_by_value_within(expand_within, [height, works], limit=3) is None


COUNTS_OF = "SELECT ?p (COUNT(?o) AS ?n) WHERE { <{e}> ?p ?o . } GROUP BY ?p"
COUNTS_OF_ALL = "SELECT ?e ?p (COUNT(?o) AS ?n) WHERE { VALUES ?e { {entities} } ?e ?p ?o . } GROUP BY ?e ?p"


def counts_of(node: Term) -> str:
    return COUNTS_OF.replace("{e}", node.value)


def counts_of_all(nodes: Sequence[Term]) -> str:
    return COUNTS_OF_ALL.replace("{entities}", " ".join(f"<{node.value}>" for node in nodes))


def test_rows_split_per_node_are_kept_as_each_nodes_own_query(store: CountingStore) -> None:
    """`select_split`: one query over the nodes no recent query asked, its rows
    split per node (without the node column) equal to each node's own query,
    and kept as that query's result; a single missing node is asked alone."""
    star, writer, nobody = Term.entity("周星驰"), Term.entity("林海_（虚构作家）"), Term.entity("无此人")
    cached = CachedKnowledgeBase(store, max_rows=1000)
    parts = cached.select_split(counts_of_all, [star, writer, nobody], counts_of, projected=True)
    assert store.sent == [counts_of_all([star, writer, nobody])]
    for node in (star, writer, nobody):
        assert sorted(parts[node]) == sorted(store.select(counts_of(node)).rows)
    assert parts[star] and parts[writer] and parts[nobody] == []
    store.sent.clear()
    assert sorted(cached.select(counts_of(writer)).rows) == sorted(parts[writer]) and store.sent == []
    other = Term.entity("雪夜行")
    again = cached.select_split(counts_of_all, [writer, other, star], counts_of, projected=True)
    assert store.sent == [counts_of(other)]
    assert again[writer] == parts[writer] and sorted(again[other]) == sorted(store.select(counts_of(other)).rows)


def test_a_row_for_a_node_not_asked_about_is_an_error() -> None:
    with pytest.raises(KBError, match="not asked about"):
        split_rows([(Term.entity("B"), Term.literal("1"))], [Term.entity("A")], projected=True)
