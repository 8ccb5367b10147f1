"""Scoring the sentences of a DBQA file with a model, and evaluating those scores.

`score_file` gives one score per input line, in file order: the official
submission. `evaluate` scores a labelled file and measures MRR, MAP and ACC@1
with the official metrics of coqa.evaluation.metrics (ties counted against
the system: among equal scores a wrong sentence ranks first), overall, by
question type, and lists the worst-ranked questions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from coqa.dbqa.answer_types import question_type
from coqa.dbqa.features import document_features
from coqa.dbqa.model import DbqaModel
from coqa.dbqa.reading import DbqaFile, DbqaFormatError, DbqaQuestion
from coqa.dbqa.text import normalise
from coqa.evaluation.metrics import (
    DbqaScores,
    average_precision,
    first_correct_reciprocal,
    nlpcc_dbqa_scores,
    rank_labels,
)

BATCH_QUESTIONS = 256


def score_question(model: DbqaModel, question: str, sentences: Sequence[str]) -> list[float]:
    """One score per sentence of the question's document (higher: more likely to answer it)."""
    if not sentences:
        return []
    return model.ranker.score(document_features(question, sentences))


def score_file(model: DbqaModel, source: DbqaFile) -> list[float]:
    """One score per line of the file, in file order."""
    return [score for scores in score_questions(model, source.questions) for score in scores]


def score_questions(model: DbqaModel, questions: Sequence[DbqaQuestion]) -> list[list[float]]:
    """The scores of each question's sentences. LightGBM is called once per
    BATCH_QUESTIONS questions: a call costs about a millisecond whatever its size."""
    scored: list[list[float]] = []
    for start in range(0, len(questions), BATCH_QUESTIONS):
        batch = questions[start : start + BATCH_QUESTIONS]
        rows = [document_features(question.question, question.sentences) for question in batch]
        flat = model.ranker.score([row for question_rows in rows for row in question_rows])
        offset = 0
        for question_rows in rows:
            scored.append(flat[offset : offset + len(question_rows)])
            offset += len(question_rows)
    return scored


def format_score(score: float) -> str:
    """A score as written in a submission: the shortest text that reads back as the same float."""
    return repr(float(score))


def write_scores(scores: Iterable[float], path: str | Path) -> None:
    """One score per line into `path` (written beside it first, then moved in)."""
    path = Path(path)
    staging = path.with_name(path.name + ".partial")
    staging.write_text("".join(format_score(score) + "\n" for score in scores), encoding="utf-8")
    staging.replace(path)


@dataclass(frozen=True)
class QuestionResult:
    """How one question was ranked: its first line, type, average precision,
    the rank of its first right sentence (0: it has none) and the sentence ranked first."""

    question: str
    line: int
    kind: str
    average_precision: float
    first_right_rank: int
    top_sentence: str


@dataclass(frozen=True)
class Evaluation:
    """Scores over all questions, per question type, and per question."""

    overall: DbqaScores
    by_type: dict[str, DbqaScores]
    questions: list[QuestionResult]
    scores: list[float]  # one per line of the file, in order

    def worst(self, count: int) -> list[QuestionResult]:
        """The `count` questions with the lowest average precision (file order among equals)."""
        return sorted(self.questions, key=lambda result: result.average_precision)[:count]


def evaluate(model: DbqaModel, source: DbqaFile) -> Evaluation:
    """Score a labelled file and measure it; DbqaFormatError for an unlabelled one."""
    if not source.labelled:
        raise DbqaFormatError(f"{source.path} has no labels: evaluation needs label 0/1 on every line")
    return evaluation_of(list(zip(source.questions, score_questions(model, source.questions))))


def evaluation_of(scored: Sequence[tuple[DbqaQuestion, list[float]]]) -> Evaluation:
    """The evaluation of questions already scored."""
    groups: dict[str, list[tuple[list[float], list[int]]]] = {}
    results = []
    for question, scores in scored:
        labels = question.labels
        kind = question_type(normalise(question.question))
        groups.setdefault(kind, []).append((scores, labels))
        ranked = rank_labels(scores, labels)
        reciprocal = first_correct_reciprocal(ranked)
        top = max(range(len(scores)), key=lambda i: (scores[i], -labels[i])) if scores else -1
        results.append(
            QuestionResult(
                question.question,
                question.candidates[0].line,
                kind,
                average_precision(ranked),
                round(1 / reciprocal) if reciprocal else 0,
                question.sentences[top] if top >= 0 else "",
            )
        )
    overall = nlpcc_dbqa_scores([(scores, question.labels) for question, scores in scored])
    by_type = {kind: nlpcc_dbqa_scores(groups[kind]) for kind in sorted(groups)}
    return Evaluation(overall, by_type, results, [score for _, scores in scored for score in scores])


def evaluation_lines(evaluation: Evaluation, worst: int = 10) -> list[str]:
    """The report `coqa eval --task nlpcc-dbqa` prints."""
    overall = evaluation.overall
    lines = [
        f"questions: {overall.questions}",
        f"MRR:       {overall.mrr:.4f}",
        f"MAP:       {overall.map:.4f}",
        f"ACC@1:     {overall.accuracy_at_1:.4f}",
        "(ties count against the system: among equal scores a wrong sentence ranks first)",
        "",
        "by question type:",
        f"  {'type':<12}{'questions':>10}{'MRR':>8}{'MAP':>8}{'ACC@1':>8}",
    ]
    for kind, scores in sorted(evaluation.by_type.items(), key=lambda item: (-item[1].questions, item[0])):
        lines.append(f"  {kind:<12}{scores.questions:>10}{scores.mrr:>8.3f}{scores.map:>8.3f}{scores.accuracy_at_1:>8.3f}")
    lines += ["", f"worst {worst} questions (average precision, rank of the first right sentence, line):"]
    for result in evaluation.worst(worst):
        rank = str(result.first_right_rank) if result.first_right_rank else "none right"
        lines.append(f"  AP {result.average_precision:.3f}  rank {rank:<3} line {result.line:<6} [{result.kind}] {result.question}")
        lines.append(f"      ranked first: {_clip(result.top_sentence, 80)}")
    return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def mean_scores(folds: Sequence[DbqaScores]) -> DbqaScores:
    """The unweighted mean of per-fold scores (the questions summed)."""
    count = len(folds)
    return DbqaScores(
        sum(fold.questions for fold in folds),
        math.fsum(fold.mrr for fold in folds) / count,
        math.fsum(fold.map for fold in folds) / count,
        math.fsum(fold.accuracy_at_1 for fold in folds) / count,
    )
