"""The same queries give the same answers on every backend, and remote
failures end as one-line KBErrors in bounded time."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Callable

import pytest
from conftest import WRITER, Loopback, Reply, never_in_time

from coqa.kb.backends.gstore import GStore
from coqa.kb.backends.http_retry import (
    RemoteFailure,
    RetryPolicy,
    call_with_retries,
)
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.base import KBError, QueryResult
from coqa.kb.names import Term, name_to_iri
from coqa.testing.local_process import free_port

E, L = Term.entity, Term.literal
XSD = "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

# (query in PKU BASE style, expected rows; None: any non-empty result)
QUERIES: list[tuple[str, list[tuple[Term | None, ...]] | None]] = [
    (f"select ?x where {{ <{WRITER}> <代表作品> ?x . }}", [(E("北河记"),), (E("雪夜行"),)]),
    (f"select ?x where {{ ?x <作者> <{WRITER}> }}", [(E("北河记"),), (E("雪夜行"),)]),
    ("select ?y where { <雪夜行> <出版社> ?x . ?x <所在地> ?y }", [(E("云溪市"),)]),
    (
        f"select ?z where {{ <{WRITER}> <代表作品> ?x . ?x <出版社> ?y . ?y <所在地> ?z }}",
        [(E("云溪市"),)],
    ),
    (
        "select ?x where { ?x <类型> <虚构长篇小说> . ?x <出版社> <青石出版社> }",
        [(E("雪夜行"),), (E("青石志"),)],
    ),
    ('select ?x where { ?x <誉称> "千湖之城" }', [(E("云溪市"),)]),
    ('select ?x where { ?x <别名> "又名\\"雪行\\"" }', [(E("雪夜行"),)]),
    ("select ?y where { <雪夜行> <别名> ?y }", [(L('又名"雪行"'),)]),
    ("select ?x where { <2030年云溪运动会 > <举办城市> ?x }", [(E("云溪市"),)]),
    ("select ?x where { ?x <举办城市> <云溪市> }", [(E("2030年云溪运动会"),)]),
    ('select ?x where { <"红线"行动> <发起者> ?x }', [(E(WRITER),)]),
    ("select ?x where { <甲|乙> <组成> ?x }", [(E("乙"),), (E("甲"),)]),
    ("select ?y where { <A^B {C}\\D> <备注> ?y }", [(L("制表\t符"),)]),
    (f"select ?x where {{ <{WRITER}> ?x <雪夜行> }}", [(E("代表作品"),)]),
    (f"select (count(?x) as ?n) where {{ <{WRITER}> <代表作品> ?x }}", [(L("2"),)]),
    (XSD + "select ?x where { ?x <页数> ?n . filter(xsd:integer(?n) < 400) }", [(E("雪夜行"),), (E("青石志"),)]),
    ('select ?x where { ?x <页数> ?n . FILTER (?n < "400" && ?n >= "100") }', [(E("雪夜行"),)]),
    (
        XSD + "select ?x ?n where { ?x <页数> ?n } order by desc(xsd:integer(?n)) limit 2",
        [(E("北河记"), L("512")), (E("雪夜行"), L("320"))],
    ),
    (
        "select ?x ?a where { ?x <类型> <虚构长篇小说> optional { ?x <别名> ?a } }",
        [(E("北河记"), None), (E("雪夜行"), L('又名"雪行"')), (E("青石志"), None)],
    ),
    (f"select ?x where {{ <{name_to_iri(WRITER)}> <代表作品> ?x }}", [(E("北河记"),), (E("雪夜行"),)]),
    ("select distinct ?p where { ?s ?p ?o }", None),
    ("select ?p (count(*) as ?n) where { ?s ?p ?o } group by ?p", None),
    ("select ?s ?p ?o where { ?s ?p ?o }", None),
]
QUERY_IDS = [f"q{number}" for number in range(len(QUERIES))]


def comparable(query: str, result: QueryResult) -> tuple[list[str], list[tuple[Term | None, ...]]]:
    """Variables and rows; rows sorted unless the query fixes their order."""
    if "order by" in query.lower():
        return result.variables, result.rows
    return result.variables, sorted(result.rows, key=lambda row: [(t is None, str(t)) for t in row])


@pytest.fixture(scope="module")
def endpoint(oxigraph_server: str) -> SparqlEndpoint:
    return SparqlEndpoint(oxigraph_server, timeout=10, retries=0, backoff=0)


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=QUERY_IDS)
def test_embedded_store_gives_expected_rows(embedded_kb: OxigraphStore, query: str, expected: list | None) -> None:
    rows = comparable(query, embedded_kb.select(query))[1]
    assert rows if expected is None else rows == expected


@pytest.mark.parametrize(("query", "expected"), QUERIES, ids=QUERY_IDS)
def test_server_matches_embedded_store(
    embedded_kb: OxigraphStore, endpoint: SparqlEndpoint, query: str, expected: list | None
) -> None:
    assert comparable(query, endpoint.select(query)) == comparable(query, embedded_kb.select(query))


def test_ask_queries_answer_true_or_false(embedded_kb: OxigraphStore, endpoint: SparqlEndpoint) -> None:
    for kb in (embedded_kb, endpoint):
        assert kb.select(f"ask {{ <{WRITER}> <代表作品> <雪夜行> }}").boolean is True
        assert kb.select(f"ask {{ <{WRITER}> <代表作品> <青石志> }}").boolean is False


# --- remote failures ---------------------------------------------------------


def closed_port_url(path: str = "/query") -> str:
    return f"http://127.0.0.1:{free_port()}{path}"


def test_server_down_fails_fast_with_one_line() -> None:
    url = closed_port_url()
    started = time.monotonic()
    with pytest.raises(KBError) as caught:
        SparqlEndpoint(url, timeout=2, retries=2, backoff=0.01).select("select ?x where { ?x ?p ?o }")
    assert str(caught.value) == f"cannot reach the SPARQL endpoint {url}: connection refused (3 attempts)"
    assert time.monotonic() - started < 2


def test_server_error_is_reported_not_retried(loopback: Callable[..., Loopback]) -> None:
    """The server got the query (it may have run it): it is not sent again."""
    server = loopback(lambda request: Reply(500, "disk on fire\nmore detail", "text/plain"))
    url = server.url + "/query"
    with pytest.raises(KBError) as caught:
        SparqlEndpoint(url, timeout=2, retries=2, backoff=0.01).select("select ?x where { ?x ?p ?o }")
    assert str(caught.value) == f"the SPARQL endpoint {url} answered with an error: HTTP 500: disk on fire"
    assert len(server.requests) == 1


def test_unavailable_server_retries_with_growing_backoff(loopback: Callable[..., Loopback]) -> None:
    server = loopback(lambda request: Reply(503, "busy", "text/plain"))
    with pytest.raises(KBError, match=r"HTTP 503: busy \(4 attempts\)$"):
        SparqlEndpoint(server.url, timeout=2, retries=3, backoff=0.05).select("select ?x where { ?x ?p ?o }")
    gaps = [later.time - earlier.time for earlier, later in zip(server.requests, server.requests[1:])]
    assert len(gaps) == 3
    for number, gap in enumerate(gaps):
        assert 0.05 * 2**number <= gap < 0.05 * 2**number + 0.5


def test_client_error_is_not_retried(loopback: Callable[..., Loopback]) -> None:
    server = loopback(lambda request: Reply(400, "Parse error: unexpected token", "text/plain"))
    with pytest.raises(KBError, match=r"HTTP 400: Parse error: unexpected token$"):
        SparqlEndpoint(server.url, timeout=2, retries=3, backoff=0.01).select("select ?x where { ?x ?p ?o }")
    assert len(server.requests) == 1


def test_slow_server_hits_the_timeout(loopback: Callable[..., Loopback]) -> None:
    server = loopback(never_in_time)
    started = time.monotonic()
    with pytest.raises(KBError) as caught:
        SparqlEndpoint(server.url, timeout=0.3, retries=1, backoff=0.05).select("select ?x where { ?x ?p ?o }")
    assert str(caught.value).endswith(": no reply within 0.3 s")  # sent once: a query that timed out is not run again
    assert time.monotonic() - started < 2
    assert len(server.requests) == 1


def test_endpoint_sends_standard_iris_by_post(loopback: Callable[..., Loopback]) -> None:
    reply = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "uri", "value": name_to_iri("甲|乙")}}]}}
    server = loopback(lambda request: Reply(200, json.dumps(reply), "application/sparql-results+json"))
    result = SparqlEndpoint(server.url).select("select ?x where { ?x <组成> <甲> }")
    assert result.rows == [(E("甲|乙"),)]
    (request,) = server.requests
    assert request.method == "POST"
    assert request.params["query"] == [f"select ?x where {{ ?x <{name_to_iri('组成')}> <{name_to_iri('甲')}> }}"]


def test_endpoint_reports_a_reply_that_is_not_json(loopback: Callable[..., Loopback]) -> None:
    server = loopback(lambda request: Reply(200, "<html>login</html>", "text/html"))
    with pytest.raises(KBError, match="did not answer with JSON$"):
        SparqlEndpoint(server.url).select("select ?x where { ?x ?p ?o }")


def test_a_url_without_scheme_is_refused_at_once() -> None:
    with pytest.raises(KBError, match="must look like http://HOST:PORT"):
        SparqlEndpoint("127.0.0.1:7878/query")


def test_backoff_doubles_and_retries_are_bounded() -> None:
    delays: list[float] = []
    attempts: list[int] = []

    def always_down() -> None:
        attempts.append(1)
        raise RemoteFailure("connection refused", retryable=True, reached=False)

    with pytest.raises(KBError, match=r"connection refused \(4 attempts\)$"):
        policy = RetryPolicy(timeout=1, retries=3, backoff=0.5)
        call_with_retries(always_down, service="test server", url="http://x", policy=policy, sleep=delays.append)
    assert delays == [0.5, 1.0, 2.0]
    assert len(attempts) == 4


# --- real data: the pkubase-bench dev set --------------------------------------


@pytest.mark.parametrize("backend", ["sparql", "gstore"])
def test_connection_closed_without_reply_is_not_sent_again(backend: str) -> None:
    """A server that dies under a query (gStore killed for memory) is not sent it again."""
    accepted: list[int] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"

        def hang_up() -> None:
            for _ in range(1):
                connection, _ = listener.accept()
                connection.recv(65536)
                accepted.append(1)  # before the close the client waits for, so the count is never late
                connection.close()

        threading.Thread(target=hang_up, daemon=True).start()
        kb = SparqlEndpoint(url, retries=1, backoff=0) if backend == "sparql" else GStore(url, "db", retries=1, backoff=0)
        # A hang-up reads as "closed without a reply", or as a reset when it beats the request's last bytes.
        # (the server got the query: it may have died running it, and must not be made to run it again)
        message = rf"^cannot reach the .* {url}: connection (closed without a reply|reset by peer)$"
        with pytest.raises(KBError, match=message):
            kb.select("select ?x where { ?x ?p ?o }")
    time.sleep(0.1)
    assert len(accepted) == 1
