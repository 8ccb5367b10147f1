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
from coqa.dataset import CCKS, NLPCC, DatasetError, file_format, nlpcc_answers, parse_ccks, parse_nlpcc
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
    if file_format(lines) == NLPCC:
        return [list(answers) for answers in read_gold(path).answers]
    return [split_answer_line(line) for line in lines]


def read_gold(path: str | Path) -> Gold:
    """Gold answers from a CCKS file (question / SPARQL / answers blocks),
    an NLPCC KBQA file (`<answer id=N>` lines split at ` | `) or an answer
    file with one tab-separated answer line per question."""
    lines = read_lines(path)
    kind = file_format(lines)
    try:
        if kind == NLPCC:
            records = parse_nlpcc(lines, path)
            return Gold([tuple(nlpcc_answers(r.answers)) for r in records], [r.question for r in records])
        if kind == CCKS:
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
    if file_format(read_lines(result_path)) != NLPCC:
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


def read_dbqa_labels(path: str | Path) -> list[tuple[str, int]]:
    """(question, label) per line of an NLPCC DBQA file `question<TAB>sentence<TAB>label`."""
    rows = []
    for number, line in enumerate(read_lines(path), start=1):
        fields = line.split("\t")
        if len(fields) != 3 or fields[2].strip() not in ("0", "1"):
            raise ScoringError(f"{path}:{number}: expected question<TAB>sentence<TAB>label with label 0 or 1")
        rows.append((fields[0].strip(), int(fields[2])))
    return rows


def group_dbqa(labels: Sequence[tuple[str, int]], scores: Sequence[float]) -> list[tuple[list[float], list[int]]]:
    """(scores, labels) per question; a question is a run of consecutive lines
    with the same question text, as in the NLPCC DBQA files."""
    groups: list[tuple[list[float], list[int]]] = []
    previous = ""
    for (question, label), score in zip(labels, scores):
        if not groups or question != previous:
            groups.append(([], []))
            previous = question
        groups[-1][0].append(score)
        groups[-1][1].append(label)
    return groups


def score_nlpcc_dbqa(result_path: str | Path, gold_path: str | Path) -> DbqaScores:
    """NLPCC DBQA MRR, MAP and ACC@1 of a score file aligned line by line
    with a labelled question/sentence/label file."""
    scores, labels = read_scores(result_path), read_dbqa_labels(gold_path)
    if len(scores) != len(labels):
        raise ScoringError(
            f"{result_path} has {len(scores)} scores but {gold_path} has {len(labels)} labelled sentences: "
            "a DBQA result needs exactly one score per sentence line, in order"
        )
    return nlpcc_dbqa_scores(group_dbqa(labels, scores))
