"""Starting the service: one uvicorn process in front of the pipeline processes.

SIGTERM ends the server within SHUTDOWN_SECONDS of uvicorn's grace even when
requests wait on a hung knowledge base.
"""

from __future__ import annotations

import uvicorn

from coqa.config import Settings
from coqa.serve.app import ServeOptions, create_app
from coqa.serve.service import QuestionService

SHUTDOWN_SECONDS = 3


def run(settings: Settings, options: ServeOptions, host: str, port: int) -> None:
    """Serve until interrupted. The pipeline processes start first, so a bad
    knowledge base or model fails with its one-line message before the server listens."""
    service = QuestionService.open(settings, options.workers)
    # uvicorn says where it listens at INFO; coqa's own log level stays as configured.
    uvicorn.run(
        create_app(settings, options, service),
        host=host,
        port=port,
        log_level="info",
        access_log=False,
        timeout_graceful_shutdown=SHUTDOWN_SECONDS,
    )
