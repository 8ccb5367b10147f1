"""Starting the service: uvicorn with one worker in this process, or N worker processes.

Worker processes build their application from the factory
`coqa.serve.server:app_from_environment`, which reads the resolved settings
and limits from the variable SERVE_OPTIONS_VARIABLE that `run` sets (a
worker is a fresh interpreter: it sees only the environment and the import
string). With several workers this process only supervises them, so it
does not load the pipeline itself (that would keep a model's worth of
memory in it): it checks in a child process that the pipeline opens.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import asdict

import uvicorn
from fastapi import FastAPI

from coqa.config import Settings
from coqa.serve.app import ServeOptions, create_app
from coqa.serve.service import QuestionService

SERVE_OPTIONS_VARIABLE = "COQA_SERVE_OPTIONS"


def run(settings: Settings, options: ServeOptions, host: str, port: int, workers: int) -> None:
    """Serve until interrupted. The pipeline is opened first, so a bad
    knowledge base or model fails with its one-line message before any worker starts."""
    # uvicorn says where it listens at INFO; coqa's own log level stays as configured.
    server_options = dict(host=host, port=port, log_level="info", access_log=False)
    if workers == 1:
        service = QuestionService.open(settings)
        uvicorn.run(create_app(settings, options, service), **server_options)
        return
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        pool.apply(_open_and_close, (settings,))  # re-raises the child's KBError, ModelError, ...
    os.environ[SERVE_OPTIONS_VARIABLE] = json.dumps({"settings": asdict(settings), "options": asdict(options)})
    uvicorn.run("coqa.serve.server:app_from_environment", factory=True, workers=workers, **server_options)


def _open_and_close(settings: Settings) -> None:
    QuestionService.open(settings).close()


def app_from_environment() -> FastAPI:
    """The application of a worker process, from what `run` put in the environment."""
    data = json.loads(os.environ[SERVE_OPTIONS_VARIABLE])
    return create_app(Settings(**data["settings"]), ServeOptions(**data["options"]))
