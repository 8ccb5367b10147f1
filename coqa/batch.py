"""Answering many questions: in order, one answer line per question, in
parallel worker processes when asked, never stopping at a bad question."""

from __future__ import annotations

import logging
import multiprocessing
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from coqa.config import Settings
from coqa.explanation import Answer
from coqa.pipeline import Pipeline

log = logging.getLogger("coqa")
_worker_pipeline: Pipeline | None = None


@dataclass
class BatchReport:
    """Counts of a batch run; `failures` maps question number (from 1) to the reason."""

    questions: int = 0
    answered: int = 0
    failures: dict[int, str] = field(default_factory=dict)


def _init_worker(settings: Settings) -> None:
    global _worker_pipeline
    _worker_pipeline = Pipeline.from_settings(settings)


def _answer_in_worker(question: str) -> Answer:
    assert _worker_pipeline is not None, "worker not initialised"
    return _worker_pipeline.answer(question)


def answer_stream(settings: Settings, questions: Sequence[str], jobs: int = 1) -> Iterator[Answer]:
    """Answers in question order; with jobs > 1, from that many worker processes
    (each opens its own pipeline, so the store must allow several readers)."""
    if jobs <= 1:
        pipeline = Pipeline.from_settings(settings)
        try:
            for question in questions:
                yield pipeline.answer(question)
        finally:
            pipeline.close()
        return
    Pipeline.from_settings(settings).close()  # fail fast, in this process, on a bad KB or model
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_init_worker, initargs=(settings,)) as pool:
        yield from pool.imap(_answer_in_worker, questions, chunksize=4)


def write_answers(answers: Iterable[Answer], write_line: Callable[[str], None], report: BatchReport) -> None:
    """Write one line per answer and count what happened; reasons are logged."""
    for number, answer in enumerate(answers, start=1):
        report.questions += 1
        write_line(answer.line())
        if answer.answers:
            report.answered += 1
        else:
            reason = answer.explanation.failure or "no answer"
            report.failures[number] = reason
            log.info("question %d: no answer: %s", number, reason)
