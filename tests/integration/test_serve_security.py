"""`coqa serve` and its SPARQL runner under hostile and heavy use: the row
cap cannot be commented away and leaves aggregates right."""

from __future__ import annotations

import pytest

from coqa.kb.gstore import GStore
from coqa.kb.gstore_server import GStoreServer
from coqa.kb.oxigraph_store import OxigraphStore
from coqa.serve.sparql import with_row_cap


def test_a_limit_in_a_comment_is_no_limit(embedded_kb: OxigraphStore) -> None:
    for comment in ("#LIMIT 1", "# x\rLIMIT 1", "#LIMIT 1\r"):
        capped = with_row_cap(f"SELECT * WHERE {{ ?s ?p ?o }} {comment}", 3)
        rows = embedded_kb.select(capped).rows
        assert len(rows) == (1 if "\rLIMIT" in comment else 3), (comment, capped)
    assert with_row_cap("SELECT * WHERE { ?s ?p ?o } LIMIT 500 # LIMIT 1", 11).split() == [
        "SELECT", "*", "WHERE", "{", "?s", "?p", "?o", "}", "LIMIT", "11"
    ]


COUNT_ALL = "SELECT (COUNT(?s) AS ?n) WHERE { ?s ?p ?o }"


@pytest.mark.parametrize(
    "query",
    [COUNT_ALL, COUNT_ALL + " LIMIT 3", "SELECT ?p (COUNT(?s) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p"],
)
def test_the_row_cap_leaves_counts_right_on_gstore_and_the_store(
    gstore_server: GStoreServer, embedded_kb: OxigraphStore, query: str
) -> None:
    kb = GStore(gstore_server.url, gstore_server.db, timeout=10, retries=0)
    try:
        whole = kb.select(query.replace(" LIMIT 3", "")).rows
        capped = kb.select(with_row_cap(query, 3)).rows
    finally:
        kb.close()
    assert capped == whole[:3]
    if "GROUP BY" not in query:
        assert capped == [(embedded_kb.select(COUNT_ALL).rows[0][0],)] and int(capped[0][0].value) > 3
