"""BatchReport counts questions the knowledge base failed apart and stops a
run once the knowledge base was unreachable for several questions in a row."""

from __future__ import annotations

import io

import pytest

from coqa.batch import BackendDown, BatchReport
from coqa.cli.progress import Progress
from coqa.explanation import Answer, Explanation, Failure, FailureKind


def _answer(answers: list[str], failure: Failure | None = None) -> Answer:
    return Answer(answers, Explanation(question="q", failure=failure))


UNREACHABLE = _answer([], Failure(FailureKind.KB_UNREACHABLE, "cannot reach the SPARQL endpoint http://127.0.0.1:9/query: connection refused"))


def test_three_unreachable_questions_in_a_row_stop_the_run() -> None:
    report = BatchReport(stop_after_unreachable=3)
    report.add(UNREACHABLE)
    report.add(UNREACHABLE)
    with pytest.raises(BackendDown, match=r"after question 3: .* unreachable for 3 questions in a row \(cannot reach"):
        report.add(UNREACHABLE)
    assert report.kb_failed == 3 and report.kb_failures == [1, 2, 3]


def test_an_answered_question_starts_the_count_again_and_other_failures_never_stop() -> None:
    report = BatchReport(stop_after_unreachable=2)
    for answer in (UNREACHABLE, _answer(["<a>"]), UNREACHABLE, _answer([], Failure(FailureKind.KB_ERROR, "timeout")), _answer([], Failure(FailureKind.NO_CANDIDATE))):
        report.add(answer)
    assert (report.questions, report.answered, report.kb_failed) == (5, 1, 3)
    never = BatchReport(stop_after_unreachable=0)
    for _ in range(10):
        never.add(UNREACHABLE)
    assert never.kb_failed == 10


def test_progress_lines_count_failed_items_apart() -> None:
    stream = io.StringIO()
    progress = Progress(10, "answered", interval=0, stream=stream)
    progress.advance()
    progress.failed = 1
    progress.advance()
    first, second = stream.getvalue().splitlines()
    assert "failed" not in first and "answered 2/10 (20%), 1 failed," in second
