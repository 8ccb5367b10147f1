"""Bounded retries with exponential backoff for the remote backends, and the
one-line messages of their failures (the requests themselves are made by
`coqa.kb.backends.http_client`).

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

import logging
import time
from dataclasses import dataclass
from typing import Callable, TypeVar
from urllib.parse import urlsplit


from coqa.kb.base import KBError, KBUnreachable

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_DETAIL = 200


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


def call_with_retries(
    request: Callable[[], T],
    *,
    service: str,
    url: str,
    policy: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run `request` until it succeeds, fails for good, or the retries are spent.

    `service` names the server in messages ("SPARQL endpoint"). Only
    RemoteFailure is a transport failure; anything else passes through unchanged.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return request()
        except RemoteFailure as error:  # the client classifies every transport failure (coqa.kb.backends.http_client)
            failure = error
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
