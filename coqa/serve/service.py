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
import threading
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import Any

from coqa.child_process import die_with_parent, ignore_interrupt, stop_workers
from coqa.config import Settings
from coqa.explanation import KB_FAILURES, Answer, Failure, FailureKind
from coqa.kb import STORE_SUBDIR, KnowledgeBase, open_kb, store_directory
from coqa.kb.base import KBError
from coqa.kb.loading.manifest import read_manifest
from coqa.pipeline import Pipeline

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
    ignore_interrupt()
    die_with_parent()
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
        # One probe at a time, on a daemon thread of its own: a hung knowledge
        # base holds that thread only, never the server's request threads,
        # and not the server's exit (an executor's threads are joined at exit).
        self._probe: Future[float] | None = None
        self._probe_lock = threading.Lock()
        self._store: tuple[int, int] | None = None

    @classmethod
    def open(cls, settings: Settings, workers: int) -> "QuestionService":
        """Start the pipeline processes and wait until they have opened the
        knowledge base and the model (their KBError, ModelError, ... is raised here)."""
        service = cls(settings, workers)
        try:
            # As many tasks as processes at once: the pool starts one process per waiting task.
            pending = [service._pool.submit(_describe_in_worker) for _ in range(workers)]
            service._description = [future.result(START_TIMEOUT) for future in pending][0]
            service._store = store_identity(settings)
            service._kb = open_kb(settings.kb_config())
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
        except KBError as error:  # a pipeline process started anew could not open the knowledge base
            self.count("kb_failures")
            raise KBUnavailable(Failure(FailureKind.KB_ERROR, str(error)).message) from None
        self.count("questions")
        failure = answer.explanation.failure
        if failure is not None and failure.kind in KB_FAILURES:
            self.count("kb_failures")
            raise KBUnavailable(failure.message)
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
        if store_identity(self.settings) != self._store:
            self.count("kb_failures")
            raise KBUnavailable(
                Failure(
                    FailureKind.KB_ERROR,
                    f"the store at {store_directory(self.settings.kb_config())} was replaced or removed since the server started; "
                    "restart coqa serve",
                ).message
            )
        started = time.perf_counter()
        try:
            with self._kb_lock:
                self._kb.select(PROBE_QUERY)
        except KBError as error:
            self.count("kb_failures")
            raise KBUnavailable(Failure(FailureKind.KB_ERROR, str(error)).message) from None
        return time.perf_counter() - started

    async def probe_kb(self, wait: float) -> float:
        """`check_kb` for /health, waiting at most `wait` seconds: a probe
        still running is joined rather than another started; KBUnavailable
        when it fails or does not end in time (it goes on in the background)."""
        with self._probe_lock:
            if self._probe is None or self._probe.done():
                self._probe = Future()
                threading.Thread(target=self._run_probe, args=(self._probe,), name="kb-probe", daemon=True).start()
            probe = self._probe
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(probe)), wait)
        except asyncio.TimeoutError:
            raise KBUnavailable(Failure(FailureKind.KB_ERROR, f"the probe query did not answer within {wait:g} s").message) from None

    def _run_probe(self, probe: Future[float]) -> None:
        try:
            probe.set_result(self.check_kb())
        except BaseException as error:  # noqa: BLE001 - handed to the waiting request
            probe.set_exception(error)

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
            description["triples"] = read_manifest(store_directory(settings.kb_config())).get("triples")
        return description

    def close(self) -> None:
        """Stop the pipeline processes and close the probe connection, without
        waiting for a question or a probe that a hung knowledge base holds up
        (a pipeline process whose server is gone ends by itself)."""
        stop_workers(self._pool)
        if self._kb is not None and (self._probe is None or self._probe.done()):
            self._kb.close()


def store_identity(settings: Settings) -> tuple[int, int] | None:
    """What tells the embedded store the server opened from another one in
    its place (`coqa load --replace` renames a new one in) or from none: the
    store folder's device and inode. (0, 0) when it is gone; None for a
    remote backend."""
    if settings.backend != "oxigraph":
        return None
    try:
        info = (store_directory(settings.kb_config()) / STORE_SUBDIR).stat()
    except OSError:
        return (0, 0)
    return (info.st_dev, info.st_ino)
