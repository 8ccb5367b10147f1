"""Misbehaving servers on 127.0.0.1 against both remote backends (SPARQL
endpoint and gStore): every fault ends as one KBError line in bounded time,
and nothing but a bounded, parsed SELECT/ASK query ever leaves the process.

The fault server speaks raw HTTP over a socket, so it can trickle bytes,
close mid-reply and send any body it likes."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import pytest

from coqa.cli.main import main
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.gstore import GStore
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.admission import admit
from coqa.kb.backends.sparql_endpoint import XML_RESULTS, SparqlEndpoint, results_from_xml
from coqa.kb.base import KBError
from coqa.kb.demo import DEMO_DIR
from coqa.kb.names import NAME_BASE

from conftest import RawBehaviour, RawServer

QUERY = "select ?x ?y where { ?x <作者> ?y }"
TIMEOUT = 1.5
def reply(body: bytes | str, status: str = "200 OK", content_type: str = "application/json") -> RawBehaviour:
    payload = body.encode("utf-8") if isinstance(body, str) else body

    def send(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(
            f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )

    return send


def trickle(every: float) -> RawBehaviour:
    """A reply whose bytes come one at a time, `every` seconds apart, for ever."""

    def send(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
        while not server.stopping.wait(every):
            connection.sendall(b" ")

    return send


def trickle_headers(every: float) -> RawBehaviour:
    def send(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\n")
        while not server.stopping.wait(every):
            connection.sendall(b"X")

    return send


def silent(connection: socket.socket, request: bytes, server: RawServer) -> None:
    server.stopping.wait(30)


def close_mid_reply(connection: socket.socket, request: bytes, server: RawServer) -> None:
    connection.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{"head": {"va')
    connection.shutdown(socket.SHUT_RDWR)


def sparql_json(variables: list[str], bindings: list) -> dict:
    return {"head": {"vars": variables}, "results": {"bindings": bindings}}


def as_backend(backend: str, data: object) -> str:
    """The body a backend expects: SPARQL JSON as it is, or inside a gStore success reply."""
    if backend == "gstore" and isinstance(data, dict):
        data = {**data, "StatusCode": 0, "StatusMsg": "success"}
    return json.dumps(data, ensure_ascii=False)


BACKENDS = ["sparql", "gstore"]


def open_backend(backend: str, url: str, retries: int = 0) -> SparqlEndpoint | GStore:
    if backend == "sparql":
        return SparqlEndpoint(url, timeout=TIMEOUT, retries=retries, backoff=0.01)
    return GStore(url, "pkubase", timeout=TIMEOUT, retries=retries, backoff=0.01)


def fails_with(kb: SparqlEndpoint | GStore, pattern: str, query: str = QUERY) -> str:
    with pytest.raises(KBError, match=pattern) as caught:
        kb.select(query)
    message = str(caught.value)
    assert "\n" not in message
    return message


# --- time: slow, trickling, silent -------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("behaviour", [trickle(0.2), trickle_headers(0.2), silent], ids=["body", "headers", "silent"])
def test_a_request_ends_by_its_deadline_however_the_server_paces_it(
    raw_server: Callable[[RawBehaviour], RawServer], backend: str, behaviour: RawBehaviour
) -> None:
    server = raw_server(behaviour)
    kb = open_backend(backend, server.url, retries=1)
    started = time.monotonic()
    fails_with(kb, rf"no reply within {TIMEOUT:g} s$")  # sent once: a query that timed out is not run again
    assert time.monotonic() - started < TIMEOUT + 1.5
    assert len(server.requests) == 1
    kb.close()


# --- replies that are errors or broken -----------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_server_errors_are_retried_then_reported(raw_server: Callable[[RawBehaviour], RawServer], backend: str) -> None:
    server = raw_server(reply("disk on fire\nmore", "503 Service Unavailable", "text/plain"))
    fails_with(open_backend(backend, server.url, retries=2), r"answered with an error: HTTP 503: disk on fire \(3 attempts\)$")
    assert len(server.requests) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reply_cut_short_is_reported_not_retried(raw_server: Callable[[RawBehaviour], RawServer], backend: str) -> None:
    server = raw_server(close_mid_reply)
    message = fails_with(open_backend(backend, server.url, retries=1), r"^cannot reach the ")
    assert "attempts" not in message
    assert len(server.requests) == 1


HOSTILE_BODIES = {
    "not json": "<html>login</html>",
    "nested 100k deep": "[" * 100_000 + "]" * 100_000,
    "a JSON string": '"hello"',
    "no results": json.dumps({"head": {"vars": ["x", "y"]}}),
    "bindings not a list": json.dumps(sparql_json(["x", "y"], {"x": 1})),
    "a solution not an object": json.dumps(sparql_json(["x", "y"], [["a", "b"]])),
    "a value not a term": json.dumps(sparql_json(["x", "y"], [{"x": "plain"}])),
    "unknown term type": json.dumps(sparql_json(["x", "y"], [{"x": {"type": "weird", "value": "a"}}])),
    "fewer columns than asked": json.dumps(sparql_json(["x"], [{"x": {"type": "uri", "value": NAME_BASE + "a"}}])),
    "bad %-escape in an IRI": json.dumps(
        sparql_json(["x", "y"], [{"x": {"type": "uri", "value": NAME_BASE + "a%FFb"}, "y": {"type": "literal", "value": "1"}}])
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", list(HOSTILE_BODIES))
def test_hostile_replies_are_one_line_errors(
    raw_server: Callable[[RawBehaviour], RawServer], backend: str, case: str
) -> None:
    body = HOSTILE_BODIES[case]
    if backend == "gstore" and body.startswith("{"):
        body = as_backend(backend, json.loads(body))
    if backend == "gstore" and case == "bad %-escape in an IRI":
        body = body.replace(NAME_BASE, "")
    server = raw_server(reply(body))
    fails_with(open_backend(backend, server.url), r"(malformed reply|did not answer with)")
    assert len(server.requests) == 1


def test_gstore_reply_without_status_is_an_error(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(reply(json.dumps(sparql_json(["x", "y"], []))))
    fails_with(open_backend("gstore", server.url), "did not answer with a gStore JSON reply")


@pytest.mark.parametrize("backend", BACKENDS)
def test_well_formed_replies_are_read_by_the_query_variables(
    raw_server: Callable[[RawBehaviour], RawServer], backend: str
) -> None:
    """Columns come in the query's order whatever the reply's order; an unbound value is None."""
    name = "甲 乙" if backend == "sparql" else "甲%20乙"
    value = NAME_BASE + "甲%20乙" if backend == "sparql" else name
    data = sparql_json(["y", "x"], [{"x": {"type": "uri", "value": value}}, {"y": {"type": "typed-literal", "value": "3"}}])
    server = raw_server(reply(as_backend(backend, data)))
    kb = open_backend(backend, server.url)
    rows = kb.select(QUERY).rows
    assert [tuple(None if t is None else str(t) for t in row) for row in rows] == [("<甲 乙>", None), (None, '"3"')]
    kb.select(QUERY)
    assert server.connections == 1, "the session keeps its connection alive"



def sparql_xml(variables: list[str], results: str) -> str:
    """A reply in the SPARQL XML results format: the head's variables and the `results` elements as written."""
    head = "".join(f'<variable name="{name}"/>' for name in variables)
    return f'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>{head}</head><results>{results}</results></sparql>'


LAUGHS = '<!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
HOSTILE_XML = {
    "not XML": "<html>login</html>",
    "entities of a DTD": sparql_xml(["x", "y"], '<result><binding name="x"><literal>&c;</literal></binding></result>').replace("<sparql", LAUGHS + "<sparql", 1),
    "an external entity": sparql_xml(["x", "y"], '<result><binding name="x"><literal>&e;</literal></binding></result>').replace(
        "<sparql", '<!DOCTYPE s [<!ENTITY e SYSTEM "file:///etc/passwd">]><sparql', 1
    ),
    "nested 100k deep": sparql_xml(["x", "y"], '<result><binding name="x">' + "<a>" * 100_000 + "</a>" * 100_000 + "</binding></result>"),
    "fewer columns than asked": sparql_xml(["x"], f'<result><binding name="x"><uri>{NAME_BASE}a</uri></binding></result>'),
    "a boolean for a SELECT": '<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/><boolean>true</boolean></sparql>',
    "bad %-escape in an IRI": sparql_xml(["x", "y"], f'<result><binding name="x"><uri>{NAME_BASE}a%FFb</uri></binding></result>'),
}


@pytest.mark.parametrize("case", list(HOSTILE_XML))
def test_hostile_xml_replies_are_one_line_errors(raw_server: Callable[[RawBehaviour], RawServer], case: str) -> None:
    server = raw_server(reply(HOSTILE_XML[case], content_type=XML_RESULTS))
    fails_with(open_backend("sparql", server.url), "malformed reply")
    assert len(server.requests) == 1



def test_a_malformed_xml_reply_s_error_holds_no_parser_object() -> None:
    """pyoxigraph's parsed results may only be freed on the thread that made
    them: the error a pool thread raises, handed to the thread that waits for
    it, chains no parser error whose traceback would hold them."""
    body = sparql_xml(["x", "y"], f'<result><binding name="x"><uri>{NAME_BASE}a</uri></binding></result><result><bad/></result>')

    def read() -> KBError:
        with pytest.raises(KBError, match="malformed reply") as caught:
            results_from_xml(body.encode(), admit(QUERY), "endpoint")
        return caught.value

    with ThreadPoolExecutor(1) as pool:
        error = pool.submit(read).result()
    assert error.__context__ is None and error.__cause__ is None

def test_well_formed_xml_replies_are_read_by_the_query_variables(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    """As with JSON: columns in the query's order whatever the reply's, an unbound value None, a typed literal's text."""
    integer = "http://www.w3.org/2001/XMLSchema#integer"
    results = f'<result><binding name="x"><uri>{NAME_BASE}甲%20乙</uri></binding></result>'
    results += f'<result><binding name="y"><literal datatype="{integer}">3</literal></binding></result>'
    server = raw_server(reply(sparql_xml(["y", "x"], results), content_type=f"{XML_RESULTS}; charset=utf-8"))
    rows = open_backend("sparql", server.url).select(QUERY).rows
    assert [tuple(None if t is None else str(t) for t in row) for row in rows] == [("<甲 乙>", None), (None, '"3"')]

# --- nothing but bounded SELECT/ASK leaves the process ---------------------------

REFUSED = {
    "DELETE WHERE { ?s ?p ?o }": "updates are refused",
    "insert data { <a> <b> <c> }": "updates are refused",
    "DROP ALL": "updates are refused",
    "CLEAR DEFAULT": "updates are refused",
    "PREFIX x: <http://x/> LOAD <http://x/data>": "updates are refused",
    "construct { ?s ?p ?o } where { ?s ?p ?o }": "only SELECT and ASK queries are accepted",
    "describe <a>": "only SELECT and ASK queries are accepted",
    "select ?x wher { ?x ?p ?o }": "bad SPARQL: error at 1:",
    "select ?x where { ?x ?p ?o filter(" + "(" * 5000 + "?o" + ")" * 5000 + ") }": "too long",
    "select ?x where { ?x ?p ?o filter(" + "(" * 1000 + "?o" + ")" * 1000 + ") }": "nested too deeply: 1002 levels",
    "select ?x where { " + "union".join(["{?x ?p ?o}"] * 200) + " }": "too many UNIONs: 199",
    "select ?x where { " + " . ".join("?x ?p ?o" for _ in range(200)) + " }": "too many triple patterns",
}
REFUSED_IDS = ["delete", "insert", "drop", "clear", "load", "construct", "describe", "bad", "long", "deep", "unions", "patterns"]


@pytest.mark.parametrize("backend", ["embedded", *BACKENDS])
@pytest.mark.parametrize(("query", "reason"), list(REFUSED.items()), ids=REFUSED_IDS)
def test_only_bounded_select_and_ask_leave_the_process(
    raw_server: Callable[[RawBehaviour], RawServer], kb_store_dir: Path, backend: str, query: str, reason: str
) -> None:
    server = raw_server(reply("{}"))
    kb = OxigraphStore(kb_store_dir / STORE_SUBDIR) if backend == "embedded" else open_backend(backend, server.url)
    fails_with(kb, reason, query)
    assert server.requests == []
    kb.close()


def test_huge_queries_from_the_issue_end_in_a_message_not_a_crash(kb_store_dir: Path) -> None:
    """5k parentheses, 10k UNIONs, 20k patterns: refused before the parser (which overflows its stack on them)."""
    kb = OxigraphStore(kb_store_dir / STORE_SUBDIR)
    for query in (
        "select ?x where { ?x ?p ?o filter(" + "(" * 5000 + "?o" + ")" * 5000 + ") }",
        "select ?x where { " + " union ".join(["{ ?x ?p ?o }"] * 10_000) + " }",
        "select ?x where { " + " . ".join(f"?x ?p ?o{i}" for i in range(20_000)) + " }",
    ):
        fails_with(kb, "the query is too long", query)
    kb.close()


@pytest.mark.parametrize("case", ["fewer columns than asked", "bad %-escape in an IRI", "nested 100k deep"])
def test_coqa_answer_survives_hostile_replies(
    raw_server: Callable[[RawBehaviour], RawServer],
    kb_store_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    case: str,
) -> None:
    """Every question is tried and fails on its own (no abort, no traceback);
    a run where the KB failed for all of them ends in one line and exit 1."""
    server = raw_server(reply(HOSTILE_BODIES[case]))
    questions = (DEMO_DIR / "questions.txt").read_text(encoding="utf-8").splitlines()[:3]
    (tmp_path / "q.txt").write_text("\n".join(questions) + "\n", encoding="utf-8")
    options = ["--endpoint", server.url, "--mention-index", str(kb_store_dir / "mentions")]
    assert main(["answer", str(tmp_path / "q.txt"), "-o", str(tmp_path / "r.txt"), *options]) == 1
    error = capsys.readouterr().err
    assert error.startswith("coqa: error: the knowledge base failed for 3 of 3 questions")
    assert error.count("\n") == 1 and "Traceback" not in error
    assert len(server.requests) >= 3
