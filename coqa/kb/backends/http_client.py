"""The HTTP client of the remote backends: POST over a kept-alive connection,
each request ended by a total deadline, its reply bounded by its decoded size.

Built on the standard library's `http.client` (HTTP/1.1 framing, chunked
replies, header limits) with what no well-kept library gives together, and
cheaply, so it is written here:
- A total deadline per request without a thread per request: the socket is
  wrapped so that every read first checks a monotonic deadline and waits on
  the socket no longer than the time left. A server that trickles one byte
  a second (headers or body) is cut off when the time is up. (requests and
  urllib3 bound each wait on the socket, not the request; a timer thread per
  request, used before, cost about 0.2 ms of CPU a request.)
- Cheap: about 0.15 ms of CPU per request against `oxigraph serve`, where
  requests cost 0.65 ms and the timer thread another 0.2 ms
  (benchmarks/bench_http_client.py).
- TCP_NODELAY (set by http.client) and, on Linux, TCP_QUICKACK before every
  read: a kept-alive connection otherwise meets the server's Nagle with the
  client's delayed ACK and stalls about 40 ms on replies of a few segments
  (Virtuoso, 100-500 rows).
- Safety, as for the backends' retries (`http_retry`): only a failure before
  the request was sent (no connection, refused, unknown host) is marked
  retryable; a request that timed out, or whose connection closed before or
  in the middle of the reply, is never sent again (the server got it: a
  query killed for memory would be run again beside the first). Redirects
  are followed only within the same origin (307/308, at most
  MAX_REDIRECTS), so the body, gStore's credentials included, never goes
  elsewhere. A reply larger than `max_reply_bytes` once decoded is refused
  while it streams in, whatever its Content-Encoding claims (gzip and
  deflate are decoded a bounded piece at a time; coqa asks for none).
"""

from __future__ import annotations

import http.client
import io
import os
import select
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode, urljoin, urlsplit

from coqa.kb.backends.http_retry import RemoteFailure, first_line

MAX_REPLY_BYTES = 256 << 20  # decoded bytes
MAX_REDIRECTS = 3
# Requests a backend that takes several at once may have in flight (one connection per thread): the
# independent reads of a question go side by side, bounded so that one coqa process cannot flood an engine.
PARALLEL_QUERIES = 3
READ_CHUNK = 1 << 16
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)  # Linux only
_DECODERS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


@dataclass(frozen=True)
class HTTPReply:
    """A complete HTTP reply: status, body (decoded), content type."""

    status: int
    body: bytes
    content_type: str


class HTTPClient:
    """POSTs whose each request ends within `timeout` seconds in total, over
    one kept-alive connection per origin and thread (threads may share a
    client: each gets its own connections)."""

    def __init__(self, timeout: float, max_reply_bytes: int = MAX_REPLY_BYTES) -> None:
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self._local = threading.local()
        self._every_thread: list[dict[tuple[str, str, int], _Connection]] = []
        self._lock = threading.Lock()

    @property
    def _connections(self) -> dict[tuple[str, str, int], "_Connection"]:
        """This thread's connections by origin."""
        connections = getattr(self._local, "connections", None)
        if connections is None:
            connections = self._local.connections = {}
            with self._lock:
                self._every_thread.append(connections)
        return connections

    def post(self, url: str, data: bytes | Mapping[str, str], headers: Mapping[str, str]) -> HTTPReply:
        """POST `data` (bytes, or form fields sent URL-encoded) to `url`; the
        whole reply. RemoteFailure for transport failures, the deadline,
        a redirect to another origin and an oversized reply (HTTP error
        statuses are returned)."""
        deadline = time.monotonic() + self.timeout
        if isinstance(data, Mapping):
            body = urlencode(data).encode("ascii")
            headers = {"Content-Type": "application/x-www-form-urlencoded", **headers}
        else:
            body = data
        for _ in range(MAX_REDIRECTS + 1):
            status, location, reply = self._exchange(url, body, headers, deadline)
            if status not in (307, 308) or not location:
                return reply
            target = urljoin(url, location)
            if _origin(target) != _origin(url):
                raise RemoteFailure(
                    f"HTTP {status}: a redirect to another origin ({first_line(_origin_text(target))}) is refused",
                    retryable=False,
                    reached=True,
                )
            url = target
        raise RemoteFailure(f"more than {MAX_REDIRECTS} redirects", retryable=False, reached=True)

    def _exchange(
        self, url: str, body: bytes, headers: Mapping[str, str], deadline: float
    ) -> tuple[int, str | None, HTTPReply]:
        """One request and its reply: (status, Location header, reply)."""
        parts = urlsplit(url)
        origin = _origin(url)
        connection = self._connection(origin)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {"Accept-Encoding": "identity", **headers}
        try:
            self._send(connection, deadline, "POST", target, body, headers)
            response = connection.getresponse()
            reply = HTTPReply(response.status, self._read(response), response.getheader("Content-Type", "") or "")
            location = response.getheader("Location")
        except RemoteFailure:
            self._drop(origin)
            raise
        except TimeoutError:
            self._drop(origin)
            raise RemoteFailure(f"no reply within {self.timeout:g} s", retryable=False, reached=False) from None
        except http.client.RemoteDisconnected:
            self._drop(origin)
            raise RemoteFailure("connection closed without a reply", retryable=False, reached=False) from None
        except http.client.IncompleteRead:
            self._drop(origin)
            raise RemoteFailure("connection closed in the middle of the reply", retryable=False, reached=False) from None
        except (http.client.HTTPException, ValueError) as error:  # a reply that is not HTTP/1.x, headers too long, ...
            self._drop(origin)
            reason = f"not a valid HTTP reply ({first_line(str(error)) or type(error).__name__})"
            raise RemoteFailure(reason, retryable=False, reached=True) from None
        except OSError as error:
            self._drop(origin)
            raise RemoteFailure(_os_reason(error), retryable=False, reached=False) from None
        if response.will_close:
            self._drop(origin)
        return reply.status, location, reply

    def _send(self, connection: "_Connection", deadline: float, *request: Any) -> None:
        """Send the request, on a new connection if there is none. When the
        server closed a kept-alive connection just before it was reused
        (writing to it fails: a race the check in `_connection` cannot close),
        it never got the request: it is sent once more on a new connection."""
        reused = connection.sock is not None
        if not reused:
            self._connect(connection, deadline)
        _socket(connection).deadline = deadline
        try:
            connection.request(*request)
        except (BrokenPipeError, ConnectionResetError):
            if not reused:
                raise
            connection.close()
            self._connect(connection, deadline)
            _socket(connection).deadline = deadline
            connection.request(*request)

    def _connection(self, origin: tuple[str, str, int]) -> "_Connection":
        """The kept-alive connection to `origin`, made afresh if the server closed it meanwhile."""
        connection = self._connections.get(origin)
        if connection is None:
            scheme, host, port = origin
            kind = _TLSConnection if scheme == "https" else _PlainConnection
            connection = self._connections[origin] = kind(host, port)
        elif connection.sock is not None and _dropped(_socket(connection)):
            connection.close()
        return connection

    def _connect(self, connection: "_Connection", deadline: float) -> None:
        """Open the connection; failures here happen before anything was sent, so they are retryable."""
        connection.timeout = max(deadline - time.monotonic(), 0.001)
        try:
            connection.connect()
        except TimeoutError:
            connection.close()
            raise RemoteFailure(f"no reply within {self.timeout:g} s", retryable=True, reached=False) from None
        except socket.gaierror as error:
            connection.close()
            raise RemoteFailure(f"unknown host ({error.strerror})", retryable=True, reached=False) from None
        except OSError as error:
            connection.close()
            raise RemoteFailure(_os_reason(error), retryable=True, reached=False) from None

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        """The body of `response`, decoded; RemoteFailure once it exceeds max_reply_bytes."""
        encoding = (response.getheader("Content-Encoding") or "identity").strip().lower()
        if encoding not in ("identity", "") and encoding not in _DECODERS:
            raise RemoteFailure(f"a reply in an encoding coqa did not ask for ({first_line(encoding)})", retryable=False, reached=True)
        decoder = zlib.decompressobj(_DECODERS[encoding]) if encoding in _DECODERS else None
        if decoder is None and response.length is not None and not response.chunked:
            if response.length > self.max_reply_bytes:
                raise self._too_large()
            return response.read()
        chunks: list[bytes] = []
        size = 0
        while True:
            raw = response.read(READ_CHUNK)
            if not raw:
                break
            while raw:
                piece = decoder.decompress(raw, self.max_reply_bytes - size + 1) if decoder else raw
                raw = decoder.unconsumed_tail if decoder else b""
                size += len(piece)
                if size > self.max_reply_bytes:
                    raise self._too_large()
                chunks.append(piece)
        if decoder is not None:
            chunks.append(decoder.flush(self.max_reply_bytes - size + 1))
            if size + len(chunks[-1]) > self.max_reply_bytes:
                raise self._too_large()
        return b"".join(chunks)

    def _too_large(self) -> RemoteFailure:
        return RemoteFailure(f"reply larger than {self.max_reply_bytes >> 20} MB", retryable=False, reached=True)

    def _drop(self, origin: tuple[str, str, int]) -> None:
        """Close the connection to `origin` (its state is unknown after a failure); the next request opens a new one."""
        connection = self._connections.pop(origin, None)
        if connection is not None:
            connection.close()

    def close(self) -> None:
        """Close the connections of every thread (call it when no request is in flight)."""
        with self._lock:
            every_thread, self._every_thread = self._every_thread, []
        for connections in every_thread:
            for connection in connections.values():
                connection.close()
            connections.clear()


class _DeadlineSocket:
    """A connected socket whose every read waits no longer than the time left
    until `deadline` (TimeoutError once it has passed), with TCP_QUICKACK set
    before it. Offers what http.client uses of a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.deadline = float("inf")
        # As socket.makefile: closing the socket while a reply is being read closes it after that reader.
        self._readers = 0
        self._closing = False

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("deadline passed")
        self.sock.settimeout(left)

    def sendall(self, data: Any) -> None:
        self._arm()
        self.sock.sendall(data)

    def recv_into(self, buffer: Any) -> int:
        self._arm()
        if _QUICKACK is not None:
            # Linux leaves quick-ACK mode on its own, so it is set again before each read.
            self.sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
        return self.sock.recv_into(buffer)

    def makefile(self, mode: str = "rb", *args: Any, **kwargs: Any) -> io.BufferedReader:
        self._readers += 1
        return io.BufferedReader(_DeadlineReader(self), READ_CHUNK)

    def reader_closed(self) -> None:
        self._readers -= 1
        if self._closing and not self._readers:
            self.sock.close()

    def fileno(self) -> int:
        return self.sock.fileno()

    def setsockopt(self, *args: Any) -> None:
        self.sock.setsockopt(*args)

    def close(self) -> None:
        self._closing = True
        if not self._readers:
            self.sock.close()


class _DeadlineReader(io.RawIOBase):
    """The raw reading side of a _DeadlineSocket (closing it leaves the socket open, as socket.makefile does)."""

    def __init__(self, sock: _DeadlineSocket) -> None:
        super().__init__()
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        return self._sock.recv_into(buffer)

    def close(self) -> None:
        if not self.closed:
            self._sock.reader_closed()
        super().close()


class _DeadlineConnection:
    """Mixin: the connected socket is wrapped in a _DeadlineSocket."""

    sock: Any

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        self.sock = _DeadlineSocket(self.sock)


class _PlainConnection(_DeadlineConnection, http.client.HTTPConnection):
    pass


class _TLSConnection(_DeadlineConnection, http.client.HTTPSConnection):
    pass


_Connection = http.client.HTTPConnection


def _socket(connection: _Connection) -> _DeadlineSocket:
    """The connected socket of one of this module's connections."""
    assert isinstance(connection.sock, _DeadlineSocket)
    return connection.sock


def _dropped(sock: _DeadlineSocket) -> bool:
    """Whether an idle kept-alive connection was closed by the server (it is
    readable: an end of file, or bytes nobody asked for)."""
    try:
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


def _origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of `url`, the port made explicit."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port or (443 if parts.scheme == "https" else 80)


def _origin_text(url: str) -> str:
    scheme, host, port = _origin(url)
    return f"{scheme}://{host}:{port}"


def _os_reason(error: OSError) -> str:
    """A short reason for a socket error: 'connection refused', 'connection reset by peer', ..."""
    if error.errno is not None:
        return "connection refused" if isinstance(error, ConnectionRefusedError) else os.strerror(error.errno).lower()
    return first_line(str(error)) or type(error).__name__
