"""How well confidences match correctness: the reliability table and the
expected calibration error (ECE) of a set of questions.

Each question has a confidence (the probability coqa gives that its answer
is right) and a correctness, its answer F1 against the gold answers. The
questions are put into `bins` equal-width confidence bins ([0, 0.1),
[0.1, 0.2), ..., [0.9, 1.0]); the ECE is the mean over questions of the gap
between their bin's mean confidence and mean F1, i.e. the bins' gaps
weighted by their share of the questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

BINS = 10


@dataclass(frozen=True)
class ReliabilityBin:
    """One confidence bin [low, high) (the last one includes 1.0)."""

    low: float
    high: float
    questions: int
    mean_confidence: float
    mean_f1: float


def reliability_table(confidences: Sequence[float], f1s: Sequence[float], bins: int = BINS) -> list[ReliabilityBin]:
    """The `bins` equal-width bins of the questions by confidence (empty bins included)."""
    members: list[list[int]] = [[] for _ in range(bins)]
    for i, confidence in enumerate(confidences):
        members[min(int(confidence * bins), bins - 1)].append(i)
    table = []
    for b, inside in enumerate(members):
        count = len(inside)
        mean_confidence = sum(confidences[i] for i in inside) / count if count else 0.0
        mean_f1 = sum(f1s[i] for i in inside) / count if count else 0.0
        table.append(ReliabilityBin(b / bins, (b + 1) / bins, count, mean_confidence, mean_f1))
    return table


def expected_calibration_error(table: Sequence[ReliabilityBin]) -> float:
    """The ECE of a reliability table (0 for no questions)."""
    total = sum(b.questions for b in table)
    if not total:
        return 0.0
    return sum(b.questions / total * abs(b.mean_confidence - b.mean_f1) for b in table)


def reliability_lines(table: Sequence[ReliabilityBin]) -> list[str]:
    """The table and the ECE as readable lines (what `coqa eval` prints)."""
    lines = ["confidence bin   questions  mean confidence  mean F1"]
    for b in table:
        closing = "]" if b.high >= 1.0 else ")"
        shown = f"{b.mean_confidence:.3f}            {b.mean_f1:.3f}" if b.questions else "-                -"
        lines.append(f"  [{b.low:.1f}, {b.high:.1f}{closing}  {b.questions:>9}  {shown}")
    lines.append(f"expected calibration error {expected_calibration_error(table):.4f} ({len(table)} equal-width bins, against each question's F1)")
    return lines
