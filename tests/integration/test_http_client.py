"""The remote backends' HTTP client against raw HTTP servers of ours on
127.0.0.1: connections kept alive and made afresh when the server dropped
them, redirects followed only within the origin, replies bounded by their
decoded size (a gzip bomb), a reply cut short never sent again, framing
(chunked, close-delimited) read right."""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from typing import Callable

import pytest

from coqa.kb.backends.gstore import GStore
from coqa.kb.backends.http_client import MAX_REPLY_BYTES, HTTPClient
from coqa.kb.backends.http_retry import RemoteFailure
from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.base import KBError
from coqa.kb.names import NAME_BASE

from conftest import RawBehaviour, RawServer

QUERY = "SELECT ?x WHERE { ?x <作者> <林海> }"
ONE_ROW = b'{"head":{"vars":["x"]},"results":{"bindings":[{"x":{"type":"uri","value":"' + NAME_BASE.encode() + b'a"}}]}}'
def answer(body: bytes = ONE_ROW, extra: str = "", status: str = "200 OK") -> RawBehaviour:
    def send(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(
            f"HTTP/1.1 {status}\r\nContent-Type: application/sparql-results+json\r\n{extra}"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    return send


def test_one_kept_alive_connection_serves_every_request(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(answer())
    endpoint = SparqlEndpoint(server.url, timeout=2, retries=0)
    for _ in range(20):
        assert len(endpoint.select(QUERY).rows) == 1
    assert (server.connections, len(server.requests)) == (1, 20)
    endpoint.close()


def test_a_connection_the_server_closed_while_idle_is_made_afresh_and_the_query_sent_once(
    raw_server: Callable[[RawBehaviour], RawServer],
) -> None:
    def answer_then_close(connection: socket.socket, request: bytes, server: RawServer) -> str:
        answer()(connection, request, server)
        return "close"  # without saying so: the client finds out when it reuses the connection

    server = raw_server(answer_then_close)
    endpoint = SparqlEndpoint(server.url, timeout=2, retries=0)
    for _ in range(5):
        assert len(endpoint.select(QUERY).rows) == 1
        time.sleep(0.05)  # idle: the server closes its end meanwhile
    assert (server.connections, len(server.requests)) == (5, 5)
    endpoint.close()


def test_the_client_socket_has_nagle_off(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(answer())
    client = HTTPClient(2)
    client.post(server.url, b"x", {})
    (connection,) = client._connections.values()
    assert connection.sock.sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    client.close()


@pytest.mark.parametrize("status", [307, 308])
def test_a_redirect_within_the_origin_is_followed_with_the_body(raw_server: Callable[[RawBehaviour], RawServer], status: int) -> None:
    def redirect_once(connection: socket.socket, request: bytes, server: RawServer) -> None:
        if request.startswith(b"POST /old "):
            answer(b"", f"Location: {server.url}/new\r\n", f"{status} Moved")(connection, request, server)
        else:
            answer()(connection, request, server)

    server = raw_server(redirect_once)
    gstore = GStore(server.url + "/old", "pkubase", "root", "secret", timeout=2, retries=0)
    with pytest.raises(KBError, match="did not answer with a gStore JSON reply"):  # the body: SPARQL JSON, no StatusCode
        gstore.select(QUERY)
    assert [r.split(b" ")[1] for r in server.requests] == [b"/old", b"/new"]
    assert all(b'"password": "secret"' in r for r in server.requests)


@pytest.mark.parametrize("backend", ["sparql", "gstore"])
def test_a_redirect_to_another_origin_is_refused_and_the_body_never_goes_there(
    raw_server: Callable[[RawBehaviour], RawServer], backend: str
) -> None:
    elsewhere = raw_server(answer())
    # Another port of the same host is another origin.
    server = raw_server(answer(b"", f"Location: {elsewhere.url}/steal\r\n", "307 Temporary Redirect"))
    kb = SparqlEndpoint(server.url, timeout=2, retries=2) if backend == "sparql" else GStore(server.url, "db", timeout=2, retries=2)
    with pytest.raises(KBError, match=r"answered with an error: HTTP 307: a redirect to another origin \(http://127.0.0.1:\d+\) is refused$"):
        kb.select(QUERY)
    assert len(server.requests) == 1 and elsewhere.requests == []


def test_redirects_in_a_loop_end(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(answer(b"", "Location: /again\r\n", "308 Permanent Redirect"))
    with pytest.raises(KBError, match=r"more than 3 redirects$"):
        SparqlEndpoint(server.url, timeout=2, retries=0).select(QUERY)
    assert len(server.requests) == 4


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """About 300 KB that a gzip decoder turns into MAX_REPLY_BYTES + 16 MB of spaces."""
    encoder = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    parts = [encoder.compress(block) for _ in range((MAX_REPLY_BYTES >> 20) + 16)]
    return b"".join(parts) + encoder.flush()


def test_a_gzip_bomb_is_refused_by_its_decoded_size(raw_server: Callable[[RawBehaviour], RawServer], gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 1 << 20
    server = raw_server(answer(gzip_bomb, "Content-Encoding: gzip\r\n"))
    with pytest.raises(KBError, match=r"answered with an error: reply larger than 256 MB$"):
        SparqlEndpoint(server.url, timeout=20, retries=2).select(QUERY)
    assert len(server.requests) == 1


def test_a_chunked_gzip_bomb_is_refused_too(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    bomb = gzip.compress(b" " * (3 << 20))

    def chunked(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in range(0, len(bomb), 1000):
            piece = bomb[start : start + 1000]
            connection.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        connection.sendall(b"0\r\n\r\n")

    server = raw_server(chunked)
    client = HTTPClient(5, max_reply_bytes=2 << 20)
    with pytest.raises(RemoteFailure, match="reply larger than 2 MB"):
        client.post(server.url, b"x", {})


def test_a_gzip_reply_within_the_bound_is_decoded(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(answer(gzip.compress(ONE_ROW), "Content-Encoding: gzip\r\n"))
    assert len(SparqlEndpoint(server.url, timeout=2, retries=0).select(QUERY).rows) == 1


def test_an_encoding_coqa_did_not_ask_for_is_refused(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    server = raw_server(answer(ONE_ROW, "Content-Encoding: br\r\n"))
    with pytest.raises(KBError, match=r"a reply in an encoding coqa did not ask for \(br\)$"):
        SparqlEndpoint(server.url, timeout=2, retries=2).select(QUERY)
    assert b"accept-encoding: identity" in server.requests[0].lower()


@pytest.mark.parametrize("backend", ["sparql", "gstore"])
def test_a_reply_cut_short_is_reported_and_the_query_not_sent_again(
    raw_server: Callable[[RawBehaviour], RawServer], backend: str
) -> None:
    def close_mid_reply(connection: socket.socket, request: bytes, server: RawServer) -> str:
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n" + ONE_ROW[:40])
        connection.shutdown(socket.SHUT_RDWR)
        return "close"

    server = raw_server(close_mid_reply)
    kb = SparqlEndpoint(server.url, timeout=2, retries=3) if backend == "sparql" else GStore(server.url, "db", timeout=2, retries=3)
    with pytest.raises(KBError, match=r"^cannot reach the .*: connection closed in the middle of the reply$"):
        kb.select(QUERY)
    assert len(server.requests) == 1


def test_chunked_and_close_delimited_replies_are_read_whole(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    def chunked(connection: socket.socket, request: bytes, server: RawServer) -> None:
        connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        for start in range(0, len(ONE_ROW), 7):
            piece = ONE_ROW[start : start + 7]
            connection.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        connection.sendall(b"0\r\n\r\n")

    def close_delimited(connection: socket.socket, request: bytes, server: RawServer) -> str:
        connection.sendall(b"HTTP/1.0 200 OK\r\n\r\n" + ONE_ROW)
        return "close"

    for behaviour in (chunked, close_delimited):
        server = raw_server(behaviour)
        endpoint = SparqlEndpoint(server.url, timeout=2, retries=0)
        assert [len(endpoint.select(QUERY).rows) for _ in range(3)] == [1, 1, 1]
        endpoint.close()


def test_a_server_that_is_not_http_is_one_line(raw_server: Callable[[RawBehaviour], RawServer]) -> None:
    def garbage(connection: socket.socket, request: bytes, server: RawServer) -> str:
        connection.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")
        return "close"

    server = raw_server(garbage)
    with pytest.raises(KBError, match=r"answered with an error: not a valid HTTP reply"):
        SparqlEndpoint(server.url, timeout=2, retries=2).select(QUERY)
    assert len(server.requests) == 1
