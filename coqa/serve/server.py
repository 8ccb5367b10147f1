"""Starting the service: uvicorn with one worker in this process, or N worker processes.

Worker processes build their application from the factory
`coqa.serve.server:app_from_environment`, which reads the resolved settings
and limits from the variable SERVE_OPTIONS_VARIABLE that `run` sets (a
worker is a fresh interpreter: it sees only the environment and the import string).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict

import uvicorn
from fastapi import FastAPI

from coqa.config import Settings
from coqa.serve.app import ServeOptions, create_app
from coqa.serve.service import QuestionService

SERVE_OPTIONS_VARIABLE = "COQA_SERVE_OPTIONS"


def run(settings: Settings, options: ServeOptions, host: str, port: int, workers: int) -> None:
    """Serve until interrupted. The pipeline is opened here first, so a bad
    knowledge base or model fails with its one-line message before any worker starts."""
    service = QuestionService.open(settings)
    log_level = settings.log_level.lower()
    if workers == 1:
        uvicorn.run(create_app(settings, options, service), host=host, port=port, log_level=log_level)
        return
    service.close()
    os.environ[SERVE_OPTIONS_VARIABLE] = json.dumps({"settings": asdict(settings), "options": asdict(options)})
    uvicorn.run(
        "coqa.serve.server:app_from_environment", factory=True, host=host, port=port, workers=workers, log_level=log_level
    )


def app_from_environment() -> FastAPI:
    """The application of a worker process, from what `run` put in the environment."""
    data = json.loads(os.environ[SERVE_OPTIONS_VARIABLE])
    return create_app(Settings(**data["settings"]), ServeOptions(**data["options"]))
