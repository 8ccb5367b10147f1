"""HTTP for the remote backends: a kept-alive session whose every request ends
by a total deadline, bounded replies, and bounded retries with exponential
backoff.

A remote request is a function that either returns a reply or raises. Only
failures before the request was sent are worth another try (connection
refused, unknown host, no connection within the deadline), and an HTTP 503
(the server says it did not take the request). A request the server got is
never sent again: a query that timed out, or whose server died under it (a
query killed for memory closes the connection without a reply), would only
run again beside the first copy, which the server may still be running.
Any other HTTP error reply (a bad query, a wrong URL, bad credentials) is
final at once.
Whatever goes wrong ends as one KBError whose one-line message names the
service and its URL, e.g.
``cannot reach the SPARQL endpoint http://127.0.0.1:7878/query: connection refused (3 attempts)``.
"""

from __future__ import annotations

import errno
import http.client
import logging
import os
import socket
import threading
import time
import urllib.error
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, TypeVar
from urllib.parse import urljoin, urlsplit

import requests
import requests.adapters
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from coqa.kb.base import KBError, KBUnreachable

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_DETAIL = 200
MAX_REPLY_BYTES = 256 << 20  # decoded bytes: urllib3 (>= 2.6) decompresses a read at a time
MAX_REDIRECTS = 3
READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class RetryPolicy:
    """`timeout`: seconds per request, from sending it to the last byte of the
    reply, however the server paces it; `retries`: further attempts after a
    retryable failure; `backoff`: seconds before the first retry, doubled for
    each next one. The worst case lasts about
    ``(retries + 1) * timeout + backoff * (2**retries - 1)`` seconds."""

    timeout: float
    retries: int
    backoff: float

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise KBError(f"timeout must be a positive number of seconds, not {self.timeout}")
        if self.retries < 0 or self.backoff < 0:
            raise KBError("retries and retry_backoff must not be negative")


class RemoteFailure(Exception):
    """One failed request: a short `reason`, whether another attempt may
    succeed, and whether the server was reached (it answered with an error)."""

    def __init__(self, reason: str, retryable: bool, reached: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.reached = reached


@dataclass(frozen=True)
class HTTPReply:
    """A complete HTTP reply: status, body, content type."""

    status: int
    body: bytes
    content_type: str


class HTTPClient:
    """A kept-alive HTTP session (requests) whose requests each end within
    `timeout` seconds in total.

    requests' own timeout bounds each wait on the socket, not the request: a
    server sending one byte every few seconds keeps it alive for ever. So each
    request runs under a timer that, when the time is up, shuts the request's
    socket down, which ends any read at once; the request then fails as
    "no reply within N s". Replies larger than MAX_REPLY_BYTES once decoded
    are refused while they stream in. Redirects are followed only within the
    same origin: the request body (gStore's credentials) never goes elsewhere.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.session = _deadline_session()

    def post(self, url: str, data: bytes | Mapping[str, str], headers: Mapping[str, str]) -> HTTPReply:
        """POST `data` to `url`; the whole reply. RemoteFailure for transport
        failures and the deadline (HTTP error statuses are returned)."""
        guard = _Deadline(self.timeout)
        _watched.guard = guard
        try:
            reply = self._exchange(url, data, headers)
        except Exception as error:  # classified below; anything else is re-raised
            if not guard.expired:
                raise
            reply = None
            cause: BaseException | None = error
        else:
            cause = None
        finally:
            guard.cancel()
            _watched.guard = None
        if guard.expired:
            # The socket may have been cut just after the reply ended: start afresh.
            self.session.close()
            self.session = _deadline_session()
            raise RemoteFailure(f"no reply within {self.timeout:g} s", retryable=not guard.sent, reached=False) from cause
        assert reply is not None
        return reply

    def _exchange(self, url: str, data: bytes | Mapping[str, str], headers: Mapping[str, str]) -> HTTPReply:
        """POST and read the reply, following a 307/308 redirect only within
        the same origin (the body, gStore's credentials included, goes again
        with it); RemoteFailure for a redirect to another origin."""
        for _ in range(MAX_REDIRECTS + 1):
            with self.session.post(
                url, data=data, headers=dict(headers), timeout=self.timeout, stream=True, allow_redirects=False
            ) as response:
                location = response.headers.get("Location")
                if response.status_code in (307, 308) and location:
                    target = urljoin(url, location)
                    if _origin(target) != _origin(url):
                        elsewhere = first_line(_origin(target))
                        raise RemoteFailure(
                            f"HTTP {response.status_code}: a redirect to another origin ({elsewhere}) is refused",
                            retryable=False,
                            reached=True,
                        )
                    url = target
                    continue
                return HTTPReply(response.status_code, _read_bounded(response), response.headers.get("Content-Type", ""))
        raise RemoteFailure(f"more than {MAX_REDIRECTS} redirects", retryable=False, reached=True)

    def close(self) -> None:
        self.session.close()


def _origin(url: str) -> str:
    """scheme://host:port of `url`, the port made explicit."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


def _read_bounded(response: requests.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(READ_CHUNK):
        size += len(chunk)
        if size > MAX_REPLY_BYTES:
            raise RemoteFailure(f"reply larger than {MAX_REPLY_BYTES >> 20} MB", retryable=False, reached=True)
        chunks.append(chunk)
    return b"".join(chunks)


class _Deadline:
    """A timer that cuts the connection a request is using when it fires."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self.sent = False  # the request has been written to a connection
        self._connection: HTTPConnection | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def attach(self, connection: HTTPConnection, sent: bool = False) -> None:
        with self._lock:
            self.sent = self.sent or sent
            self._connection = connection
            if self.expired:
                self._cut()

    def cancel(self) -> None:
        self._timer.cancel()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            self._cut()

    def _cut(self) -> None:
        sock = getattr(self._connection, "sock", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


# The deadline of the request the current thread is making.
_watched = threading.local()


def _attach_to_deadline(connection: HTTPConnection, sent: bool = False) -> None:
    guard = getattr(_watched, "guard", None)
    if guard is not None:
        guard.attach(connection, sent)


class _WatchedHTTPConnection(HTTPConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        _attach_to_deadline(self)
        super().request(*args, **kwargs)
        # Again: a deadline that passed while this request opened the socket cuts it now.
        _attach_to_deadline(self, sent=True)


class _WatchedHTTPSConnection(HTTPSConnection):
    def request(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        _attach_to_deadline(self)
        super().request(*args, **kwargs)
        _attach_to_deadline(self, sent=True)


class _WatchedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _WatchedHTTPConnection


class _WatchedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _WatchedHTTPSConnection


class _WatchedAdapter(requests.adapters.HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _WatchedHTTPPool, "https": _WatchedHTTPSPool}


def _deadline_session() -> requests.Session:
    session = requests.Session()
    adapter = _WatchedAdapter()
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def check_http_url(url: str, service: str) -> str:
    """`url` if it is an absolute http(s) URL, else KBError naming the service."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise KBError(f"the {service} URL must look like http://HOST:PORT/..., not {url!r}")
    return url


def first_line(text: str | bytes) -> str:
    """The first non-empty line of a reply body, shortened for a one-line message."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= MAX_DETAIL else line[: MAX_DETAIL - 1] + "…"


def http_failure(status: int, detail: str = "") -> RemoteFailure:
    """A failure for an HTTP error status: 503 (the server did not take the
    request) is retryable, anything else final."""
    reason = f"HTTP {status}" + (f": {detail}" if detail else "")
    return RemoteFailure(reason, retryable=status == 503, reached=True)


def _causes(error: BaseException) -> Iterator[BaseException]:
    """`error` and what it wraps (urllib's `reason`, requests' and urllib3's chains)."""
    seen: set[int] = set()
    pending = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        linked = [getattr(current, "reason", None), current.__cause__, current.__context__, *current.args[:1]]
        pending.extend(item for item in linked if isinstance(item, BaseException))


# Errors only connecting can raise: nothing was sent.
_CONNECT_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EADDRNOTAVAIL}


def failure_from_exception(error: BaseException, timeout: float) -> RemoteFailure | None:
    """Classify an exception raised by urllib or requests; None if it is not a transport failure."""
    if isinstance(error, RemoteFailure):
        return error
    if isinstance(error, urllib.error.HTTPError):
        return http_failure(error.code, first_line(error.read() or b""))
    causes = list(_causes(error))
    # Failures while connecting happen before anything was sent: those alone are retried.
    unsent = any(isinstance(c, (NewConnectionError, ConnectTimeoutError, requests.ConnectTimeout)) for c in causes)
    if isinstance(error, requests.Timeout) or any(isinstance(c, TimeoutError) for c in causes):
        return RemoteFailure(f"no reply within {timeout:g} s", retryable=unsent, reached=False)
    for cause in causes:
        if isinstance(cause, http.client.RemoteDisconnected):
            return RemoteFailure("connection closed without a reply", retryable=False, reached=False)
        if isinstance(cause, socket.gaierror):
            return RemoteFailure(f"unknown host ({cause.strerror})", retryable=True, reached=False)
        if isinstance(cause, OSError) and cause.errno is not None:
            reason = "connection refused" if cause.errno == errno.ECONNREFUSED else os.strerror(cause.errno).lower()
            return RemoteFailure(reason, retryable=unsent or cause.errno in _CONNECT_ERRNOS, reached=False)
    if isinstance(error, (OSError, http.client.HTTPException, requests.RequestException)):
        return RemoteFailure(first_line(str(error)) or type(error).__name__, retryable=unsent, reached=False)
    return None


def call_with_retries(
    request: Callable[[], T],
    *,
    service: str,
    url: str,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `request` until it succeeds, fails for good, or the retries are spent.

    `service` names the server in messages ("SPARQL endpoint"). Exceptions
    that are not transport failures (and KBError) pass through unchanged.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return request()
        except KBError:
            raise
        except Exception as error:  # classified below; anything else is re-raised
            failure = failure_from_exception(error, policy.timeout)
            if failure is None:
                raise
        if not failure.retryable or attempt > policy.retries:
            raise (KBError if failure.reached else KBUnreachable)(_message(failure, service, url, attempt)) from None
        delay = policy.backoff * 2 ** (attempt - 1)
        log.info("%s %s: %s; retrying in %.2f s", service, url, failure.reason, delay)
        sleep(delay)


def _message(failure: RemoteFailure, service: str, url: str, attempts: int) -> str:
    counted = f" ({attempts} attempts)" if attempts > 1 else ""
    if failure.reached:
        return f"the {service} {url} answered with an error: {failure.reason}{counted}"
    return f"cannot reach the {service} {url}: {failure.reason}{counted}"
