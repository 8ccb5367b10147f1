"""Comparing two result files on the same gold questions."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coqa.evaluation.metrics import MacroScores, PRF, macro_scores, question_prf
from coqa.evaluation.scoring import check_line_count, read_gold, read_result


@dataclass(frozen=True)
class QuestionDiff:
    """One question whose F1 differs between the runs (number is 1-based)."""

    number: int
    question: str
    f1_a: float
    f1_b: float

    @property
    def delta(self) -> float:
        return self.f1_b - self.f1_a


@dataclass(frozen=True)
class Comparison:
    """Scores of runs A and B, and the questions where their F1 differs.
    `won` counts questions where B beats A, `lost` where A beats B."""

    scores_a: MacroScores
    scores_b: MacroScores
    differences: list[QuestionDiff]

    @property
    def won(self) -> int:
        return sum(1 for d in self.differences if d.delta > 0)

    @property
    def lost(self) -> int:
        return sum(1 for d in self.differences if d.delta < 0)

    @property
    def unchanged(self) -> int:
        return self.scores_a.questions - len(self.differences)


def compare_scores(per_a: list[PRF], per_b: list[PRF], questions: list[str]) -> Comparison:
    """A comparison from per-question scores of both runs (aligned lists);
    `questions` holds the question texts or is empty."""
    differences = [
        QuestionDiff(i + 1, questions[i] if questions else "", a.f1, b.f1)
        for i, (a, b) in enumerate(zip(per_a, per_b))
        if a.f1 != b.f1
    ]
    return Comparison(macro_scores(per_a), macro_scores(per_b), differences)


def compare_files(result_a: str | Path, result_b: str | Path, gold_path: str | Path) -> Comparison:
    """Compare two result files against one gold file (CCKS or answer lines)."""
    gold = read_gold(gold_path)
    runs = []
    for path in (result_a, result_b):
        result = read_result(path)
        check_line_count(path, len(result), gold_path, len(gold.answers))
        runs.append([question_prf(given, answers) for given, answers in zip(result, gold.answers)])
    return compare_scores(runs[0], runs[1], gold.questions)
