"""Queries sent side by side where a backend takes several at once
(`parallel_queries`: gStore and SPARQL endpoints): the same candidates, cuts and answers as one
at a time; the HTTP client gives each thread its own kept-alive connection;
the kept rows stay within their budget under concurrent use."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from coqa.config import load_settings
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.http_client import HTTPClient
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import QueryResult
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.pipeline import Pipeline

from test_http_client import ONE_ROW, RawServer, answer

QUESTIONS = ["周星驰的身高是多少？", "周星驰主演了哪些电影？", "雪夜行的作者是谁？", "林海的代表作品有哪些？"]


class SideBySide:
    """The real embedded store, declared to take three queries at once, recording the threads that sent them."""

    parallel_queries = 3

    def __init__(self, path: Path) -> None:
        self.kb = OxigraphStore(path)
        self.description = self.kb.description
        self.threads: set[str] = set()

    def select(self, query: str) -> QueryResult:
        self.threads.add(threading.current_thread().name)
        return self.kb.select(query)

    def close(self) -> None:
        self.kb.close()


def test_side_by_side_queries_give_the_same_candidates_cuts_and_answers(kb_store_dir: Path) -> None:
    serial = Pipeline.from_settings(load_settings(flags={"store": str(kb_store_dir)}))
    side_by_side_kb = SideBySide(kb_store_dir / STORE_SUBDIR)
    parallel = Pipeline(side_by_side_kb, serial.index, serial.model, serial.templates, serial.settings)  # type: ignore[arg-type]
    try:
        for question in QUESTIONS:
            one, other = serial.analyse(question), parallel.analyse(question)
            assert one.candidates == other.candidates and one.cuts == other.cuts
            assert serial.answer(question).answers == parallel.answer(question).answers
        assert any(name.startswith("coqa-kb") for name in side_by_side_kb.threads)
    finally:
        serial.close()
        parallel.close()


def test_each_thread_keeps_its_own_connection_and_close_ends_them_all() -> None:
    server = RawServer(answer())
    client = HTTPClient(5)
    try:
        with ThreadPoolExecutor(3) as pool:
            bodies = list(pool.map(lambda _: client.post(server.url, b"x", {}).body, range(60)))
        assert bodies == [ONE_ROW] * 60
        assert 1 <= server.connections <= 3 and len(server.requests) == 60
        client.close()
        assert client.post(server.url, b"x", {}).body == ONE_ROW  # a new connection after close
        assert server.connections <= 4
    finally:
        client.close()
        server.close()


def test_kept_rows_stay_within_their_budget_under_concurrent_queries(kb_store_dir: Path) -> None:
    store = OxigraphStore(kb_store_dir / STORE_SUBDIR)
    cached = CachedKnowledgeBase(store, max_rows=60)
    queries = [f"SELECT ?s ?p ?o WHERE {{ ?s ?p ?o . }} LIMIT 3 OFFSET {k}" for k in range(40)]
    with ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(lambda query: cached.select(query).rows, queries * 5))
    assert rows == [store.select(query).rows for query in queries * 5]
    kept = list(cached._results.values())
    assert cached._rows == sum(len(result.rows) + 1 for result, _ in kept) <= 60
    cached.close()
