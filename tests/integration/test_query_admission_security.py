"""Admission against hostile query text, on every backend: SERVICE never runs
(a real listener on 127.0.0.1 records any request that reaches it), nesting
hidden after a comment ending in a lone CR is bounded without a crash."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest

from coqa.kb.base import KBError
from coqa.kb.backends.gstore import GStore
from coqa.testing.gstore_server import GStoreServer
from coqa.testing.local_process import clean_environment
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint

from conftest import Loopback, Reply, Request

NESTING = 4_900


def service_queries(target: str) -> list[str]:
    """SERVICE calls to `target` in the spellings that passed admission once,
    and the usual ones: a comment holding a long-string quote that hides the
    IRI, with LF, CR and CRLF line ends, in any case, through a prefix."""
    hidden = [
        f'SELECT * WHERE {{ # """{end}SERVICE <{target}> {{ ?s ?p ?o }} # """{end}}}' for end in ("\n", "\r", "\r\n")
    ]
    return [
        *hidden,
        f"SELECT * WHERE {{ # '''\nSERVICE <{target}> {{ ?s ?p ?o }} # '''\n}}",
        f"SELECT * WHERE {{ sErViCe <{target}> {{ ?s ?p ?o }} }}",
        f"PREFIX t: <{target}>\nSELECT * WHERE {{ SERVICE t:x {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ SERVICE SILENT <{target}> {{ ?s ?p ?o }} }}",
    ]


def listener(loopback: Callable[[Callable[[Request], Reply]], Loopback]) -> Loopback:
    """A SPARQL endpoint on 127.0.0.1 that would answer a SERVICE call with one row."""
    row = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://x/leak"}}]}}'
    return loopback(lambda request: Reply(200, row, "application/sparql-results+json"))


def test_service_is_refused_and_never_called_on_the_embedded_store_and_endpoint(
    embedded_kb: OxigraphStore, oxigraph_server: str, loopback: Callable[[Callable[[Request], Reply]], Loopback]
) -> None:
    target = listener(loopback)
    endpoint = SparqlEndpoint(oxigraph_server, timeout=5, retries=0)
    try:
        for query in service_queries(target.url + "/x"):
            for kb in (embedded_kb, endpoint):
                with pytest.raises(KBError, match="SERVICE is refused"):
                    kb.select(query)
    finally:
        endpoint.close()
    assert target.requests == []


def test_service_is_refused_on_gstore(
    gstore_server: GStoreServer, loopback: Callable[[Callable[[Request], Reply]], Loopback]
) -> None:
    target = listener(loopback)
    kb = GStore(gstore_server.url, gstore_server.db, timeout=5, retries=0)
    try:
        for query in service_queries(target.url + "/x"):
            with pytest.raises(KBError, match="SERVICE is refused"):
                kb.select(query)
    finally:
        kb.close()
    assert target.requests == []


def test_the_word_service_inside_names_strings_and_variables_is_harmless(embedded_kb: OxigraphStore) -> None:
    query = 'SELECT ?service WHERE { ?service <service> "SERVICE <http://127.0.0.1/>" }'
    assert embedded_kb.select(query).rows == []


def run_sparql(query: str, *options: str) -> subprocess.CompletedProcess[str]:
    env = clean_environment(COQA_TIMEOUT="5", COQA_RETRIES="0")
    return subprocess.run(
        [sys.executable, "-m", "coqa.cli.main", "sparql", "-", *options],
        input=query, capture_output=True, text=True, env=env, timeout=120,
    )


def hidden_nesting(end: str) -> str:
    """4,900 levels of brackets after a comment that ends with `end` (within the size bound)."""
    return f"SELECT * WHERE {{ #{end}" + "{" * NESTING + "?s ?p ?o" + "}" * NESTING + "}"


@pytest.mark.parametrize("end", ["\r", "\n", "\r\n"])
@pytest.mark.parametrize("backend", ["store", "endpoint", "gstore"])
def test_nesting_hidden_after_a_comment_is_refused_without_a_crash(
    request: pytest.FixtureRequest, kb_store_dir: Path, end: str, backend: str
) -> None:
    if backend == "store":
        options = ["--store", str(kb_store_dir)]
    elif backend == "endpoint":
        options = ["--endpoint", request.getfixturevalue("oxigraph_server")]
    else:
        server = request.getfixturevalue("gstore_server")
        options = ["--gstore", server.url, "--db", server.db]
    done = run_sparql(hidden_nesting(end), *options)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("coqa: error: the query is nested too deeply: 4901 levels")
    assert done.stderr.count("\n") == 1


def test_gstore_values_rewrite_is_bounded_before_it_is_sent(gstore_server: GStoreServer) -> None:
    """gStore's VALUES rewrite repeats the group once per value: 200 values
    times 40 patterns is refused once rewritten, before gStore sees it."""
    values = " ".join(f"<e{number}>" for number in range(200))
    patterns = " ".join(f"?e <p{number}> ?o{number} ." for number in range(40))
    query = f"SELECT * WHERE {{ VALUES ?e {{ {values} }} {patterns} }}"
    assert len(query) < 10_000
    kb = GStore(gstore_server.url, gstore_server.db, timeout=10, retries=0)
    try:
        with pytest.raises(KBError, match="^once rewritten for the engine, the query is too long"):
            kb.select(query)
    finally:
        kb.close()


OPENERS = ["", "#", '# """', "# '''", '"""', "'''", '"', "'", "<", "<="]
LINE_ENDS = ["", "\n", "\r", "\r\n"]
CALLS = ["SERVICE <TARGET> { ?s ?p ?o }", "sErViCe SILENT t:x { ?s ?p ?o }"]


def test_no_admitted_query_reaches_a_service_target(embedded_kb: OxigraphStore, service_target: Loopback) -> None:
    """Every SERVICE call between any opener of a comment, string or IRI and
    any line end, before and after it (3,200 queries): the embedded store
    either refuses the query or runs it without calling the target. The
    listener is the oracle, not the tokenizer."""
    surroundings = [opener + end for opener in OPENERS for end in LINE_ENDS]
    for call in CALLS:
        call = call.replace("<TARGET>", f"<{service_target.url}/x>")
        for before in surroundings:
            for after in surroundings:
                query = f"PREFIX t: <{service_target.url}/>\nSELECT * WHERE {{ {before} {call} {after} }}"
                try:
                    embedded_kb.select(query)
                except KBError:
                    pass
                assert service_target.requests == [], repr(query)


@pytest.fixture(scope="module")
def service_target() -> Iterator[Loopback]:
    """A SPARQL endpoint on 127.0.0.1 for the whole module, recording what reaches it."""
    state = Loopback("")
    row = '{"head":{"vars":[]},"results":{"bindings":[{}]}}'

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(Request(self.command, self.path, {}, b"", time.monotonic(), threading.Event()))
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            self.send_header("Content-Length", str(len(row)))
            self.end_headers()
            self.wfile.write(row.encode())

        do_POST = do_GET

        def log_message(self, format: str, *args: object) -> None:
            """Silent."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield state
    server.shutdown()
    server.server_close()
