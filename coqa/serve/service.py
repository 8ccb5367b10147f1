"""What the server answers with: N pipeline processes behind one queue.

The HTTP process hands each question to the next free pipeline process (a
process pool), so the load spreads over the processes request by request,
whichever connection it came on: worker processes that each accepted
their own connections would leave one idle while kept-alive clients queue
on another. The pipeline is CPU-bound Python, so processes, not threads,
run questions in parallel. The HTTP process keeps its own knowledge-base
connection for the /health probe.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

from coqa.config import Settings
from coqa.explanation import Answer
from coqa.kb import KnowledgeBase, open_kb, store_directory
from coqa.kb.base import KBError
from coqa.kb.loading.manifest import read_manifest
from coqa.pipeline import KB_FAILURE, Pipeline

# The cheapest query that needs a working knowledge base.
PROBE_QUERY = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"
START_TIMEOUT = 300.0


class KBUnavailable(Exception):
    """The knowledge base failed; the message is the one-line reason."""


class WorkerFailed(Exception):
    """A pipeline process died while answering; the pool was started anew."""


_worker_pipeline: Pipeline | Exception | None = None


def _open_pipeline(settings: Settings) -> None:
    # A failure is kept for the tasks to raise (with its one-line message)
    # instead of being printed as a traceback by the pool.
    global _worker_pipeline
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops this process
    try:
        # A server runs for days: rows read from an engine whose data may change are read again after kb_cache_seconds.
        _worker_pipeline = Pipeline.from_settings(settings, rows_lifetime=settings.kb_cache_seconds)
    except Exception as error:  # noqa: BLE001 - any failure to open is reported to the caller
        _worker_pipeline = error


def _pipeline() -> Pipeline:
    if isinstance(_worker_pipeline, Exception):
        raise _worker_pipeline
    assert _worker_pipeline is not None, "pipeline process not initialised"
    return _worker_pipeline


def _describe_in_worker() -> dict[str, Any]:
    pipeline = _pipeline()
    return {"kb": pipeline.kb.description, "mention_index_entries": len(pipeline.index)}


def _answer_in_worker(question: str, top: int) -> tuple[Answer, int]:
    """The answer with the top `top` candidates (less to send back) and how many there were."""
    answer = _pipeline().answer(question)
    candidates = answer.explanation.candidates
    return Answer(answer.answers, replace(answer.explanation, candidates=candidates[:top])), len(candidates)


class QuestionService:
    """Pipeline processes answering questions, with the KB probe and counters."""

    def __init__(self, settings: Settings, workers: int) -> None:
        self.settings = settings
        self.workers = workers
        self._pool_lock = threading.Lock()
        self._pool = self._start_pool()
        self._kb: KnowledgeBase | None = None
        self._kb_lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._counts_lock = threading.Lock()
        self._description: dict[str, Any] = {}

    @classmethod
    def open(cls, settings: Settings, workers: int) -> "QuestionService":
        """Start the pipeline processes and wait until they have opened the
        knowledge base and the model (their KBError, ModelError, ... is raised here)."""
        service = cls(settings, workers)
        try:
            # As many tasks as processes at once: the pool starts one process per waiting task.
            pending = [service._pool.submit(_describe_in_worker) for _ in range(workers)]
            service._description = [future.result(START_TIMEOUT) for future in pending][0]
            service._kb = open_kb(settings)
        except BaseException:
            service.close()
            raise
        return service

    def _start_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_open_pipeline, initargs=(self.settings,))

    async def answer(self, question: str, top: int) -> tuple[Answer, int]:
        """The answer (with the top `top` candidates) and the number of
        candidates; KBUnavailable when the knowledge base failed on it,
        WorkerFailed when its process died."""
        pool = self._pool
        try:
            answer, total = await asyncio.get_running_loop().run_in_executor(pool, _answer_in_worker, question, top)
        except BrokenProcessPool:
            self._replace_pool(pool)
            raise WorkerFailed("a pipeline process stopped while answering and was started anew; ask again") from None
        self.count("questions")
        failure = answer.explanation.failure or ""
        if failure.startswith(KB_FAILURE):
            self.count("kb_failures")
            raise KBUnavailable(failure)
        if answer.answers:
            self.count("answered")
        return answer, total

    def _replace_pool(self, broken: ProcessPoolExecutor) -> None:
        with self._pool_lock:
            if self._pool is broken:
                broken.shutdown(wait=False, cancel_futures=True)
                self._pool = self._start_pool()

    def check_kb(self) -> float:
        """Seconds a probe query took; KBUnavailable with the reason when it failed."""
        assert self._kb is not None, "service not opened"
        started = time.perf_counter()
        try:
            with self._kb_lock:
                self._kb.select(PROBE_QUERY)
        except KBError as error:
            self.count("kb_failures")
            raise KBUnavailable(f"{KB_FAILURE}: {error}") from None
        return time.perf_counter() - started

    def count(self, event: str) -> None:
        """Count one `event` (questions, answered, kb_failures, sparql)."""
        with self._counts_lock:
            self._counts[event] += 1

    def counts(self) -> dict[str, int]:
        """What the server has served so far."""
        with self._counts_lock:
            return dict(self._counts)

    def describe(self) -> dict[str, Any]:
        """Backend, knowledge base, model, sizes and processes, for /health."""
        settings = self.settings
        description: dict[str, Any] = {
            "backend": settings.backend,
            **self._description,
            "model": str(settings.model_path),
            "workers": self.workers,
        }
        if settings.backend == "oxigraph":
            description["triples"] = read_manifest(store_directory(settings)).get("triples")
        return description

    def close(self) -> None:
        """Stop the pipeline processes and close the probe connection."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._kb is not None:
            self._kb.close()
