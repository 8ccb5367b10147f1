"""Reading result and gold files, and scoring one against the other.

Every problem a user can cause (unreadable file, line-count mismatch, bad
score or label) raises ScoringError with a one-line message naming the file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from coqa import dataset
from coqa.dbqa.reading import DbqaFormatError, read_dbqa
from coqa.dataset import DatasetError, QuestionFormat, file_format, nlpcc_answers, parse_ccks, parse_nlpcc
from coqa.evaluation.metrics import (
    DbqaScores,
    KbqaScores,
    MacroScores,
    ccks_scores,
    nlpcc_dbqa_scores,
    nlpcc_kbqa_scores,
    split_answer_line,
)

class ScoringError(ValueError):
    """A result or gold file that cannot be scored; the message says why."""


@dataclass(frozen=True)
class Gold:
    """Gold answers, one tuple per question; `questions` holds the question
    texts when the gold file is in CCKS or NLPCC format (else it is empty)."""

    answers: list[tuple[str, ...]]
    questions: list[str]


def read_lines(path: str | Path) -> list[str]:
    """`coqa.dataset.read_lines`, with its errors as ScoringError."""
    try:
        return dataset.read_lines(path)
    except DatasetError as error:
        raise ScoringError(str(error)) from None


def read_result(path: str | Path) -> list[list[str]]:
    """One answer list per line of a result file (tab-separated, distinct
    trimmed answers in order; an empty line is an empty list), or per
    question of an NLPCC submission (its `<answer id=N>` line split at
    ` | `). Answers keep their written form (see coqa.dataset: tab, LF, CR
    inside an answer are `\\t`, `\\n`, `\\r`)."""
    lines = read_lines(path)
    if file_format(lines) == QuestionFormat.NLPCC:
        return [list(answers) for answers in read_gold(path).answers]
    return [split_answer_line(line) for line in lines]


def read_gold(path: str | Path) -> Gold:
    """Gold answers from a CCKS file (question / SPARQL / answers blocks),
    an NLPCC KBQA file (`<answer id=N>` lines split at ` | `) or an answer
    file with one tab-separated answer line per question."""
    lines = read_lines(path)
    kind = file_format(lines)
    try:
        if kind == QuestionFormat.NLPCC:
            records = parse_nlpcc(lines, path)
            return Gold([tuple(nlpcc_answers(r.answers)) for r in records], [r.question for r in records])
        if kind == QuestionFormat.CCKS:
            questions = parse_ccks(lines, path)
            return Gold([q.answers for q in questions], [q.question for q in questions])
    except DatasetError as error:
        raise ScoringError(str(error)) from None
    return Gold([tuple(split_answer_line(line)) for line in lines], [])


def check_line_count(result_path: str | Path, result_lines: int, gold_path: str | Path, gold_questions: int) -> None:
    """Refuse a result file that does not hold exactly one line per gold question."""
    if result_lines != gold_questions:
        raise ScoringError(
            f"{result_path} has {result_lines} lines but {gold_path} has {gold_questions} questions: "
            "a result file needs exactly one line per question, in order (an empty line for no answer)"
        )


def score_ccks(result_path: str | Path, gold_path: str | Path) -> MacroScores:
    """CCKS COQA macro P, macro R and averaged F1 of a result file."""
    result, gold = read_result(result_path), read_gold(gold_path)
    check_line_count(result_path, len(result), gold_path, len(gold.answers))
    return ccks_scores(result, gold.answers)


def score_nlpcc_kbqa(result_path: str | Path, gold_path: str | Path, ns: Sequence[int] = (1, 5)) -> KbqaScores:
    """NLPCC KBQA MRR, Accuracy@N and averaged F1 of a result file whose lines
    are ranked answer lists (best first): an NLPCC submission, or the result
    lines `coqa answer` writes for a plain question file, whose PKU BASE terms
    (`"literal"`, `<entity>`) are read as their NLPCC answer strings."""
    result, gold = read_result(result_path), read_gold(gold_path)
    if file_format(read_lines(result_path)) != QuestionFormat.NLPCC:
        result = [nlpcc_answers(answers) for answers in result]
    check_line_count(result_path, len(result), gold_path, len(gold.answers))
    return nlpcc_kbqa_scores(result, gold.answers, ns)


def read_scores(path: str | Path) -> list[float]:
    """One finite or infinite number per line (NaN and blank lines refused)."""
    scores = []
    for number, line in enumerate(read_lines(path), start=1):
        try:
            value = float(line.strip())
        except ValueError:
            raise ScoringError(f"{path}:{number}: expected one score per line, got {line[:60]!r}") from None
        if math.isnan(value):
            raise ScoringError(f"{path}:{number}: a score cannot be NaN")
        scores.append(value)
    return scores


def score_nlpcc_dbqa(result_path: str | Path, gold_path: str | Path, repair_labels: bool = False) -> DbqaScores:
    """NLPCC DBQA MRR, MAP and ACC@1 of a score file aligned line by line with
    a labelled DBQA file in either column order (read by coqa.dbqa.reading,
    which refuses what it cannot read with the line number; `repair_labels`
    applies its one documented label repair)."""
    scores = read_scores(result_path)
    try:
        gold = read_dbqa(gold_path, repair_labels=repair_labels)
    except DbqaFormatError as error:
        raise ScoringError(str(error)) from None
    if not gold.labelled:
        raise ScoringError(f"{gold_path} has no labels: score against a labelled file (question, sentence and label per line)")
    if len(scores) != gold.lines:
        raise ScoringError(
            f"{result_path} has {len(scores)} scores but {gold_path} has {gold.lines} labelled sentences: "
            "a DBQA result needs exactly one score per sentence line, in order"
        )
    groups, start = [], 0
    for question in gold.questions:
        end = start + len(question.candidates)
        groups.append((scores[start:end], question.labels))
        start = end
    return nlpcc_dbqa_scores(groups)
