"""Rows kept across questions in front of a remote engine: for a run, and for
`kb_cache_seconds` under `coqa serve`, so that an engine whose data changes
is read again once the rows are older than that."""

from __future__ import annotations

import signal
import urllib.parse
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest

from conftest import CountingKnowledgeBase
from coqa.config import default_settings
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.names import Term, name_to_iri
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.serve import service
from coqa.testing.oxigraph_server import serve_store_copy

QUERY = "SELECT ?o WHERE { <雪夜行> <页数> ?o }"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now




def change_pages(update_url: str, old: str, new: str) -> None:
    """Change the page count of 雪夜行 on the server, as its owner would."""
    subject, predicate = (f"<{name_to_iri(name)}>" for name in ("雪夜行", "页数"))
    update = f'DELETE DATA {{ {subject} {predicate} "{old}" }} ; INSERT DATA {{ {subject} {predicate} "{new}" }}'
    data = urllib.parse.urlencode({"update": update}).encode()
    with urllib.request.urlopen(urllib.request.Request(update_url, data=data), timeout=10) as reply:
        assert reply.status in (200, 204)


def test_a_changed_engine_is_read_again_once_the_rows_outlive_their_lifetime(kb_store_dir: Path, tmp_path: Path) -> None:
    clock = Clock()
    with serve_store_copy(kb_store_dir / STORE_SUBDIR, tmp_path) as url:
        remote = CountingKnowledgeBase(SparqlEndpoint(url, timeout=5, retries=0))
        cached = CachedKnowledgeBase(remote, max_rows=1000, lifetime=60, clock=clock)
        assert cached.select(QUERY).rows == [(Term.literal("320"),)]
        change_pages(url.rsplit("/", 1)[0] + "/update", "320", "321")
        clock.now += 59
        cached.start_question()
        assert cached.select(QUERY).rows == [(Term.literal("320"),)]  # within its lifetime: from memory
        assert remote.sent == 1
        clock.now += 2
        assert cached.select(QUERY).rows == [(Term.literal("321"),)]  # older than 60 s: the engine again
        assert remote.sent == 2
        assert cached.select(QUERY).rows == [(Term.literal("321"),)]
        assert remote.sent == 2
        cached.close()


def test_rows_by_value_older_than_their_lifetime_are_asked_again(kb_store_dir: Path, tmp_path: Path) -> None:
    clock = Clock()
    pages, publisher = Term.entity("页数"), Term.entity("出版社")

    def query_for(values: list[Term]) -> str:
        return f"SELECT ?p ?o WHERE {{ VALUES ?p {{ {' '.join(f'<{v.value}>' for v in values)} }} <雪夜行> ?p ?o }}"

    with serve_store_copy(kb_store_dir / STORE_SUBDIR, tmp_path) as url:
        remote = CountingKnowledgeBase(SparqlEndpoint(url, timeout=5, retries=0))
        cached = CachedKnowledgeBase(remote, max_rows=1000, lifetime=60, clock=clock)
        first = cached.select_by_value(query_for, [pages, publisher])
        assert sorted(first) == sorted(remote.kb.select(query_for([pages, publisher])).rows)
        clock.now += 30
        cached.select_by_value(query_for, [publisher])
        assert remote.sent == 1
        clock.now += 31  # pages and publisher read 61 s ago
        again = cached.select_by_value(query_for, [pages, publisher])
        assert again == first and remote.sent == 2
        cached.close()


def test_a_lifetime_below_zero_is_refused(embedded_kb: OxigraphStore) -> None:
    with pytest.raises(ValueError, match="lifetime"):
        CachedKnowledgeBase(embedded_kb, max_rows=10, lifetime=-1)


def test_coqa_serve_keeps_remote_rows_for_kb_cache_seconds(kb_store_dir: Path, oxigraph_server: str) -> None:
    """The pipeline of a `coqa serve` process reads a remote engine again after
    kb_cache_seconds; `coqa answer`/`eval` (from_settings alone) keep rows for the run."""
    settings = replace(
        default_settings(), backend="sparql", endpoint=oxigraph_server, mention_index=str(kb_store_dir / "mentions"), kb_cache_seconds=42.0
    )
    interrupt = signal.getsignal(signal.SIGINT)
    service._open_pipeline(settings)  # as each pipeline process of `coqa serve` starts
    try:
        pipeline = service._pipeline()
        assert pipeline.kb.lifetime == 42.0
        assert pipeline.answer("周星驰的身高是多少？").answers == ['"174cm"']
        pipeline.close()
    finally:
        signal.signal(signal.SIGINT, interrupt)
        service._worker_pipeline = None
