"""Answering many questions: in order, one answer line per question, in
parallel worker processes when asked, never stopping at a bad question."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from coqa.child_process import ChildDied, ordered_map
from coqa.config import Settings
from coqa.explanation import Answer, Explanation, Failure, FailureKind, KB_FAILURES
from coqa.kb.base import KBError
from coqa.pipeline import Pipeline

log = logging.getLogger("coqa")
_worker_pipeline: Pipeline | None = None


class BackendDown(KBError):
    """The remote knowledge base was unreachable for several questions in a row: the run stops."""


@dataclass
class BatchReport:
    """Counts of a batch run; `failures` maps question number (from 1) to the
    reason it has no answer; `kb_failed` counts the questions the knowledge
    base failed. With `stop_after_unreachable` above 0, `add` raises
    BackendDown once that many questions in a row found the KB unreachable
    (an answered question starts the count again)."""

    questions: int = 0
    answered: int = 0
    failures: dict[int, Failure] = field(default_factory=dict)
    kb_failed: int = 0
    stop_after_unreachable: int = 0
    unreachable_in_a_row: int = 0

    def add(self, answer: Answer) -> None:
        """Count one more answer (numbered in the order they are added); log why it is empty."""
        self.questions += 1
        if answer.answers:
            self.answered += 1
            self.unreachable_in_a_row = 0
            return
        reason = answer.explanation.failure or Failure(FailureKind.NO_ANSWER)
        self.failures[self.questions] = reason
        log.info("question %d: no answer: %s", self.questions, reason)
        if reason.kind in KB_FAILURES:
            self.kb_failed += 1
        if reason.kind is FailureKind.KB_UNREACHABLE:
            self.unreachable_in_a_row += 1
            if self.unreachable_in_a_row == self.stop_after_unreachable:
                raise BackendDown(
                    f"stopped after question {self.questions}: the knowledge base was unreachable for "
                    f"{self.unreachable_in_a_row} questions in a row ({reason.detail})"
                )

    @property
    def kb_failures(self) -> list[int]:
        """Numbers of the questions the knowledge base failed (server down, timeout, error reply)."""
        return [number for number, reason in self.failures.items() if reason.kind in KB_FAILURES]

    @property
    def kb_failed_run(self) -> bool:
        """True when the knowledge base failed for some question and no question
        got an answer: nothing of the run is usable, because of the knowledge base."""
        return bool(self.kb_failures) and not self.answered

    def reason_counts(self) -> str:
        """Why questions have no answer, e.g. `knowledge base error: 3, empty question: 1`
        (counted by kind)."""
        counts = Counter(reason.kind.value for reason in self.failures.values())
        return ", ".join(f"{reason}: {count}" for reason, count in counts.most_common())

    def kb_problem(self) -> str | None:
        """One line when the knowledge base failed for some question: how many
        it affected and the first reason; None when it never failed."""
        failed = self.kb_failures
        if not failed:
            return None
        return (
            f"the knowledge base failed for {len(failed)} of {self.questions} questions "
            f"(first, question {failed[0]}: {self.failures[failed[0]]})"
        )


def answer_safely(pipeline: Pipeline, question: str) -> Answer:
    """`pipeline.answer(question)`, with any exception it raises (a bad entry
    in the mention index, a bug) turned into an unanswered question whose
    failure names it: one question must not end a batch."""
    try:
        return pipeline.answer(question)
    except Exception as error:  # noqa: BLE001 - the reason is kept and logged, the batch goes on
        log.debug("question %r raised", question, exc_info=True)
        return Answer([], Explanation(question=question, failure=Failure(FailureKind.INTERNAL, f"{type(error).__name__}: {error}")))


class WorkerDied(Exception):
    """A worker process of `answer_stream` ended while answering; the message says so in one line."""


def _init_worker(settings: Settings) -> None:
    global _worker_pipeline
    _worker_pipeline = Pipeline.from_settings(settings)


def _answer_in_worker(question: str) -> Answer:
    assert _worker_pipeline is not None, "worker not initialised"
    return answer_safely(_worker_pipeline, question)


def answer_stream(settings: Settings, questions: Sequence[str], jobs: int = 1) -> Iterator[Answer]:
    """Answers in question order; with jobs > 1, from that many worker processes
    (each opens its own pipeline, so the store must allow several readers),
    which leave Ctrl-C to this process and end with it (`ordered_map`)."""
    if jobs <= 1:
        pipeline = Pipeline.from_settings(settings)
        try:
            for question in questions:
                yield answer_safely(pipeline, question)
        finally:
            pipeline.close()
        return
    Pipeline.from_settings(settings).close()  # fail fast, in this process, on a bad KB or model
    try:
        yield from ordered_map(_answer_in_worker, questions, jobs, _init_worker, (settings,))
    except ChildDied as error:
        raise WorkerDied(
            f"a worker process (of --jobs {jobs}) died while answering: {error}; "
            "if it ran out of memory, run again with fewer --jobs"
        ) from None


def write_answers(
    answers: Iterable[Answer],
    write_line: Callable[[str], None],
    report: BatchReport,
    render: Callable[[Answer], str] = Answer.line,
) -> None:
    """Write what `render` makes of each answer (by default its result line)
    and count what happened; reasons are logged."""
    for answer in answers:
        report.add(answer)
        write_line(render(answer))
