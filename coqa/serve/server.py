"""Starting the service: one uvicorn process in front of the pipeline processes.

Connections are bounded: a request must arrive whole (headers and body)
within REQUEST_SECONDS of the connection or of its first byte, a reply the
client stops reading (the server's send buffer stays full for
WRITE_STALL_SECONDS) is dropped with the connection, an idle kept-alive
connection closes after KEEP_ALIVE_SECONDS, at most
MAX_CONNECTIONS requests and connections are served at once (more get 503),
and SIGTERM ends the server within SHUTDOWN_SECONDS even when requests wait
on a hung knowledge base.
"""

from __future__ import annotations

import asyncio
import ipaddress

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from coqa.config import Settings
from coqa.serve.app import ServeOptions, create_app
from coqa.serve.service import QuestionService

REQUEST_SECONDS = 10.0
WRITE_STALL_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
MAX_CONNECTIONS = 256
SHUTDOWN_SECONDS = 3
MAX_HEADER_BYTES = 16 << 10
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


class BoundedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with a deadline for receiving each request
    and one for a reply that stops draining.

    Hand-written because uvicorn (0.3x-0.5x) has neither: its only timer is
    the keep-alive one, armed after a response and cancelled by any byte, so a
    client that connects and sends nothing, or sends headers or a body a
    byte at a time, holds its connection for ever (at the fd limit, new
    clients time out); and a client that never reads a reply larger than the
    socket buffers holds the connection and the unsent bytes for ever (the
    transport's close waits for them to be sent).
    """

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._request_timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.cycle is None or self.cycle.response_complete:
            self._arm()  # the first byte of a new request
        super().data_received(data)
        if self.cycle is not None and not self.cycle.more_body:
            self._disarm()  # the request has arrived whole

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._writing_resumed()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """The transport's buffer passed its high-water mark: the client has
        WRITE_STALL_SECONDS to take it below the low-water mark."""
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(WRITE_STALL_SECONDS, self.transport.abort)

    def resume_writing(self) -> None:
        self._writing_resumed()
        super().resume_writing()

    def _writing_resumed(self) -> None:
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _arm(self) -> None:
        if self._request_timer is None:
            self._request_timer = self.loop.call_later(REQUEST_SECONDS, self._too_slow)

    def _disarm(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _too_slow(self) -> None:
        self._request_timer = None
        if not self.transport.is_closing():
            self.transport.close()


def is_loopback(host: str) -> bool:
    """True when `host` (a --host value) is a loopback name or address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(settings: Settings, options: ServeOptions, host: str, port: int) -> None:
    """Serve until interrupted. The pipeline processes start first, so a bad
    knowledge base or model fails with its one-line message before the server listens."""
    service = QuestionService.open(settings, options.workers)
    app = create_app(settings, options, service, allowed_hosts=LOOPBACK_NAMES if is_loopback(host) else None)
    # uvicorn says where it listens at INFO; coqa's own log level stays as configured.
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        http=BoundedH11Protocol,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        limit_concurrency=MAX_CONNECTIONS,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
