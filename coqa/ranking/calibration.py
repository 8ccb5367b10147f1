"""Confidence: the calibrated probability that a question's answer is right.

The ranker's scores order a question's candidates; they are not
probabilities of being right. The calibration maps what the ranking says
about a question (`confidence_features`: the best candidate's score, its
margin over the second, how many candidates and answers there are) to the
expected F1 of the best candidate's answers, in two steps: a logistic model
of the features (fitted to the F1 as a soft label, with scipy's L-BFGS), then
an isotonic map of its output (scipy's isotonic regression), which makes the
probabilities match the F1 seen in each score range.

It is fitted during `coqa train` on out-of-fold questions: the ranker is
fitted once per cross-fitting fold on the other folds' rows and scores the
held-out fold's, so the calibration sees the scores of questions the ranker
never saw, as at run time. It is saved as `calibration.json` (plain numbers).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy.optimize import isotonic_regression, minimize

from coqa.boosting import BoostedScorer

CALIBRATION_FILE = "calibration.json"
CALIBRATION_FEATURES = ("top_score", "margin", "log_candidates", "log_answers")
_MARGIN_CAP = 10.0  # the margin of a question with one candidate (raw scores rarely differ by more)
_L2 = 1e-3  # weight decay of the logistic step: keeps it finite when a feature separates the labels

FitRanker = Callable[[Sequence[Mapping[str, float]], Sequence[int], Sequence[int]], BoostedScorer]


def _raw(score: float) -> float:
    """A ranker score in (0, 1) back on the logit scale (clipped away from 0 and 1)."""
    score = min(max(score, 1e-9), 1.0 - 1e-9)
    return math.log(score / (1.0 - score))


def confidence_features(scores: Sequence[float], answers: int) -> list[float]:
    """The calibration's features of a question whose candidate scores are
    `scores` (best first, at least one) and whose best candidate has `answers` answers."""
    top = _raw(scores[0])
    margin = min(top - _raw(scores[1]), _MARGIN_CAP) if len(scores) > 1 else _MARGIN_CAP
    return [top, margin, math.log1p(len(scores)), math.log1p(answers)]


@dataclass(frozen=True)
class Calibration:
    """Logistic weights (one per CALIBRATION_FEATURES, then the bias) and the
    isotonic map: `knots` (logistic outputs, increasing) -> `values`."""

    weights: tuple[float, ...]
    knots: tuple[float, ...]
    values: tuple[float, ...]

    def confidence(self, scores: Sequence[float], answers: int) -> float:
        """The probability in [0, 1] that the answers of the best candidate are
        right; 0 when there is no candidate or the best one has no answer."""
        if not scores or answers == 0:
            return 0.0
        return float(self.calibrated(np.array([confidence_features(scores, answers)]))[0])

    def calibrated(self, features: np.ndarray) -> np.ndarray:
        """Confidences of rows of `confidence_features` (a matrix)."""
        logistic = _logistic(features, np.array(self.weights))
        return np.clip(np.interp(logistic, self.knots, self.values), 0.0, 1.0)

    @classmethod
    def fit(cls, features: Sequence[Sequence[float]], f1s: Sequence[float]) -> "Calibration":
        """Fit to questions' features and the F1 of their best candidate (at least one question)."""
        x, y = np.array(features, dtype=np.float64), np.array(f1s, dtype=np.float64)

        def loss(weights: np.ndarray) -> tuple[float, np.ndarray]:
            p = np.clip(_logistic(x, weights), 1e-12, 1 - 1e-12)
            value = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)) + _L2 * np.dot(weights[:-1], weights[:-1])
            gradient = np.append(x.T @ (p - y), np.sum(p - y)) / len(y)
            gradient[:-1] += 2 * _L2 * weights[:-1]
            return float(value), gradient

        weights = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B").x
        logistic = _logistic(x, weights)
        order = np.argsort(logistic, kind="stable")
        fitted = isotonic_regression(y[order]).x
        # One knot per distinct logistic output (the last fitted value of a tie wins; they are equal).
        knots, last = np.unique(logistic[order][::-1], return_index=True)
        values = fitted[::-1][last]
        # Inside a run of equal values only its two ends are needed (the map is linear between knots).
        ends = [i for i in range(len(values)) if i in (0, len(values) - 1) or values[i] != values[i - 1] or values[i] != values[i + 1]]
        knots, values = knots[ends], values[ends]
        return cls(tuple(float(w) for w in weights), tuple(float(k) for k in knots), tuple(float(v) for v in values))

    @classmethod
    def fit_out_of_fold(
        cls,
        rows: Sequence[Mapping[str, float]],
        labels: Sequence[int],
        groups: Sequence[int],
        folds: Sequence[int],
        f1s: Sequence[float],
        answer_counts: Sequence[int],
        fit_ranker: FitRanker,
    ) -> "Calibration":
        """Fit on the ranker's training table: rows in runs of one question
        (`groups`), each question's cross-fitting fold, each row's answer F1
        and answer count. `fit_ranker(rows, labels, groups)` fits a ranker as
        training does; one is fitted per fold, without that fold's questions."""
        starts = np.concatenate([[0], np.cumsum(groups)[:-1]]).astype(int)
        features: list[list[float]] = []
        targets: list[float] = []
        for fold in sorted(set(folds)):
            kept = [q for q, f in enumerate(folds) if f != fold]
            held = [q for q, f in enumerate(folds) if f == fold]
            if not kept:
                continue
            kept_rows = [i for q in kept for i in range(starts[q], starts[q] + groups[q])]
            scorer = fit_ranker([rows[i] for i in kept_rows], [labels[i] for i in kept_rows], [groups[q] for q in kept])
            held_rows = [i for q in held for i in range(starts[q], starts[q] + groups[q])]
            scores = iter(scorer.score([rows[i] for i in held_rows]))
            for q in held:
                question_scores = [next(scores) for _ in range(groups[q])]
                best = starts[q] + int(np.argmax(question_scores))  # ties: the first, as the ranker's stable sort
                if answer_counts[best] == 0:
                    continue  # no answer: confidence 0 at run time, nothing to calibrate
                features.append(confidence_features(sorted(question_scores, reverse=True), answer_counts[best]))
                targets.append(f1s[best])
        if not features:
            return cls((0.0,) * (len(CALIBRATION_FEATURES) + 1), (0.5,), (0.0,))
        return cls.fit(features, targets)

    def save(self, directory: Path) -> str:
        data = {"features": list(CALIBRATION_FEATURES), "weights": self.weights, "knots": self.knots, "values": self.values}
        (directory / CALIBRATION_FILE).write_text(json.dumps(data), encoding="utf-8")
        return CALIBRATION_FILE

    @classmethod
    def load(cls, directory: Path) -> "Calibration":
        """The calibration saved in a model directory; ValueError when it is not one of these features."""
        data = json.loads((directory / CALIBRATION_FILE).read_text(encoding="utf-8"))
        if data.get("features") != list(CALIBRATION_FEATURES) or len(data["knots"]) != len(data["values"]) or not data["knots"]:
            raise ValueError(f"{CALIBRATION_FILE} is not a calibration over {', '.join(CALIBRATION_FEATURES)}")
        return cls(tuple(map(float, data["weights"])), tuple(map(float, data["knots"])), tuple(map(float, data["values"])))


def _logistic(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(features @ weights[:-1] + weights[-1])))
