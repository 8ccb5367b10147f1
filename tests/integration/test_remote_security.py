"""The remote backends against servers on 127.0.0.1 that time out, die
under a query, redirect or send a gzip bomb: a query the server got is never
sent again (only a request that never left is retried); the request body
(gStore's credentials) never goes to another origin; a reply is bounded by
its decoded size while it streams."""

from __future__ import annotations

import socket
import subprocess
import sys
import zlib
from typing import Callable

import pytest

from coqa.kb.base import KBError
from coqa.kb.backends.gstore import GStore
from coqa.testing.local_process import clean_environment, free_port
from coqa.kb.names import Term
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint

from conftest import Loopback, RawBehaviour, RawServer, Reply, Request, never_in_time

QUERY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"


def run_sparql(*options: str, timeout: str = "1", retries: str = "2") -> subprocess.CompletedProcess[str]:
    env = clean_environment(COQA_TIMEOUT=timeout, COQA_RETRIES=retries, COQA_RETRY_BACKOFF="0.01")
    return subprocess.run(
        [sys.executable, "-m", "coqa.cli.main", "sparql", QUERY, *options],
        capture_output=True, text=True, env=env, timeout=60,
    )


def close_without_reply(connection: socket.socket, request: bytes, server: RawServer) -> str:
    """Read the request and close the connection without a reply, as gStore
    does when a query is killed for memory."""
    return "close"


def backend_options(kind: str, url: str) -> list[str]:
    return ["--gstore", url, "--db", "pkubase"] if kind == "gstore" else ["--endpoint", url + "/query"]


@pytest.mark.parametrize("kind", ["gstore", "sparql"])
def test_a_query_that_timed_out_is_sent_once(
    loopback: Callable[[Callable[[Request], Reply]], Loopback], kind: str
) -> None:
    server = loopback(never_in_time)
    done = run_sparql(*backend_options(kind, server.url))
    assert done.returncode == 1
    assert done.stderr.endswith("no reply within 1 s\n") and done.stderr.count("\n") == 1, done.stderr
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", ["gstore", "sparql"])
def test_a_query_whose_server_died_under_it_is_sent_once(raw_server: Callable[[RawBehaviour], RawServer], kind: str) -> None:
    dying_server = raw_server(close_without_reply)
    done = run_sparql(*backend_options(kind, dying_server.url), timeout="5")
    assert done.returncode == 1
    assert "connection closed without a reply" in done.stderr and "attempts" not in done.stderr, done.stderr
    assert len(dying_server.requests) == 1


def test_a_refused_connection_is_retried() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = run_sparql(*backend_options("gstore", url))
    assert done.returncode == 1
    assert done.stderr.endswith("connection refused (3 attempts)\n"), done.stderr


# --- redirects: the credentials in gStore's body never go to another origin ---


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_to_another_origin_gets_no_credentials(
    loopback: Callable[[Callable[[Request], Reply]], Loopback], status: int
) -> None:
    elsewhere = loopback(lambda request: Reply(200, '{"StatusCode": 0}'))
    redirecting = loopback(lambda request: Reply(status, "", "text/plain", {"Location": elsewhere.url + "/"}))
    kb = GStore(redirecting.url, "pkubase", user="root", password="s3cret", timeout=5, retries=2)
    try:
        with pytest.raises(KBError, match=f"HTTP {status}: a redirect to another origin .* is refused$"):
            kb.select("SELECT ?x WHERE { ?x ?p ?o }")
    finally:
        kb.close()
    assert len(redirecting.requests) == 1 and b"s3cret" in redirecting.requests[0].body
    assert elsewhere.requests == []


def test_a_redirect_within_the_origin_is_followed(loopback: Callable[[Callable[[Request], Reply]], Loopback]) -> None:
    rows = '{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"literal","value":"1"}}]}}'
    server = loopback(
        lambda request: Reply(307, "", "text/plain", {"Location": "/real"})
        if request.path != "/real"
        else Reply(200, rows, "application/sparql-results+json")
    )
    kb = SparqlEndpoint(server.url + "/query", timeout=5, retries=0)
    try:
        assert kb.select("SELECT ?x WHERE { ?x ?p ?o }").rows == [(Term.literal("1"),)]
    finally:
        kb.close()
    assert [request.path for request in server.requests] == ["/query", "/real"]


# --- a compressed reply is bounded by its decoded size, while it streams ------


def gzipped_zeros(megabytes: int, layers: int) -> bytes:
    """`megabytes` MB of zeros, gzip-compressed `layers` times (streamed: never held whole)."""
    block = b"0" * (1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = b"".join(compressor.compress(block) for _ in range(megabytes)) + compressor.flush()
    for _ in range(layers - 1):
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        body = compressor.compress(body) + compressor.flush()
    return body


PEAK_MEMORY_BOUND = 600 << 20  # the 256 MB cap, the interpreter, and one decoded read


def test_a_gzip_bomb_is_refused_within_bounded_memory(
    loopback: Callable[[Callable[[Request], Reply]], Loopback]
) -> None:
    bomb = gzipped_zeros(1024, layers=2)
    assert len(bomb) < 5_000
    server = loopback(lambda request: Reply(200, bomb, "application/sparql-results+json", {"Content-Encoding": "gzip, gzip"}))
    # Measured in a child of a child: RUSAGE_CHILDREN of this test process would count earlier children too.
    measure = (
        "import resource, subprocess, sys;"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10);"
        "print(done.returncode); print(done.stderr, end='')"
    )
    env = clean_environment(COQA_TIMEOUT="30", COQA_RETRIES="0")
    command = [sys.executable, "-c", measure, sys.executable, "-m", "coqa.cli.main", "sparql", QUERY, "--endpoint", server.url]
    peak, returncode, stderr = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120).stdout.split("\n", 2)
    # Refused either for its decoded size or, as coqa's client does, for a layered encoding it never asks for.
    assert returncode == "1" and ("reply larger than 256 MB" in stderr or "an encoding coqa did not ask for" in stderr), stderr
    assert int(peak) < PEAK_MEMORY_BOUND, f"{int(peak) >> 20} MB"
