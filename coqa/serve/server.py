"""Starting the service: one uvicorn process in front of the pipeline processes.

SIGTERM ends the server within SHUTDOWN_SECONDS of uvicorn's grace even when
requests wait on a hung knowledge base.
"""

from __future__ import annotations

import ipaddress

import uvicorn

from coqa.config import Settings
from coqa.serve.app import ServeOptions, create_app
from coqa.serve.service import QuestionService

SHUTDOWN_SECONDS = 3
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


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
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
    )
