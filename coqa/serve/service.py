"""What one server worker answers with: one pipeline, used by one request at a time.

Requests of a worker take turns on its pipeline (the pipeline and its
knowledge-base connection are not made to be shared between threads; the
work is CPU-bound Python, so threads would not run it faster anyway);
`coqa serve --workers N` runs N such workers for parallelism.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

from coqa.config import Settings
from coqa.explanation import Answer
from coqa.kb import store_directory
from coqa.kb.base import KBError
from coqa.kb.loader import read_manifest
from coqa.pipeline import Pipeline

# How `Pipeline.answer` reports a KBError in the explanation's `failure`.
KB_FAILURE_PREFIX = "knowledge base error:"
# The cheapest query that needs a working knowledge base.
PROBE_QUERY = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"


class KBUnavailable(Exception):
    """The knowledge base failed; the message is the one-line reason."""


class QuestionService:
    """A pipeline over the settings' knowledge base and model, with counters."""

    def __init__(self, pipeline: Pipeline, settings: Settings) -> None:
        self.pipeline = pipeline
        self.settings = settings
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def open(cls, settings: Settings) -> "QuestionService":
        """Open the pipeline (KBError, ModelError, ... with a one-line message when it cannot be)."""
        return cls(Pipeline.from_settings(settings), settings)

    def answer(self, question: str) -> Answer:
        """The pipeline's answer; KBUnavailable when the knowledge base failed on it."""
        with self._lock:
            answer = self.pipeline.answer(question)
        self.counts["questions"] += 1
        failure = answer.explanation.failure or ""
        if failure.startswith(KB_FAILURE_PREFIX):
            self.counts["kb_failures"] += 1
            raise KBUnavailable(failure)
        if answer.answers:
            self.counts["answered"] += 1
        return answer

    def check_kb(self) -> float:
        """Seconds a probe query took; KBUnavailable with the reason when it failed."""
        started = time.perf_counter()
        try:
            with self._lock:
                self.pipeline.kb.select(PROBE_QUERY)
        except KBError as error:
            self.counts["kb_failures"] += 1
            raise KBUnavailable(f"{KB_FAILURE_PREFIX} {error}") from None
        return time.perf_counter() - started

    def describe(self) -> dict[str, Any]:
        """Backend, knowledge base, model and sizes, for /health."""
        settings = self.settings
        description: dict[str, Any] = {
            "backend": settings.backend,
            "kb": self.pipeline.kb.description,
            "model": str(settings.model_path),
            "mention_index_entries": len(self.pipeline.index),
        }
        if settings.backend == "oxigraph":
            description["triples"] = read_manifest(store_directory(settings)).get("triples")
        return description

    def close(self) -> None:
        with self._lock:
            self.pipeline.close()
