"""The calibration maps ranker scores to the probability that the answer is
right: fitted out of fold, it matches the rate of right answers on new questions."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path

import numpy as np

from coqa.boosting import fit_scorer
from coqa.config import default_settings
from coqa.evaluation.reliability import expected_calibration_error, reliability_table
from coqa.ranking.calibration import Calibration, confidence_features


def _questions(count: int, seed: int) -> tuple[list[list[float]], list[float], list[float]]:
    """Questions whose answer is right with probability sigmoid(2 * top - 1),
    whatever the margin: features, the true probabilities and the outcomes."""
    rng = random.Random(seed)
    features, truths, f1s = [], [], []
    for _ in range(count):
        top, second = rng.uniform(-3, 3), rng.uniform(-6, 0)
        truth = 1 / (1 + math.exp(-(2 * top - 1)))
        scores = [1 / (1 + math.exp(-top)), 1 / (1 + math.exp(-min(second, top)))]
        features.append(confidence_features(scores, rng.randint(1, 5)))
        truths.append(truth)
        f1s.append(1.0 if rng.random() < truth else 0.0)
    return features, truths, f1s


def test_confidences_on_new_questions_match_their_rate_of_right_answers() -> None:
    features, _, f1s = _questions(4000, seed=1)
    calibration = Calibration.fit(features, f1s)
    new, truths, outcomes = _questions(4000, seed=2)
    confidences = calibration.calibrated(np.array(new)).tolist()
    assert all(0.0 <= c <= 1.0 for c in confidences)
    assert expected_calibration_error(reliability_table(confidences, outcomes)) < 0.05
    assert sum(abs(c - t) for c, t in zip(confidences, truths)) / len(truths) < 0.08


def test_no_candidate_or_no_answer_has_confidence_zero_and_the_map_is_monotone() -> None:
    features, _, f1s = _questions(1000, seed=3)
    calibration = Calibration.fit(features, f1s)
    assert calibration.confidence([], 0) == 0.0 and calibration.confidence([0.9], 0) == 0.0
    assert list(calibration.values) == sorted(calibration.values)
    assert calibration.confidence([0.99, 0.01], 1) >= calibration.confidence([0.2, 0.01], 1)


def test_out_of_fold_fit_with_a_real_ranker_and_the_saved_part_round_trips(tmp_path: Path) -> None:
    rng = random.Random(4)
    rows, labels, groups, folds, f1s, answer_counts = [], [], [], [], [], []
    for question in range(200):
        right = rng.randrange(4)
        for candidate in range(4):
            signal = (1.0 if candidate == right else 0.0) + rng.gauss(0, 0.7)
            rows.append({"signal": signal, "noise": rng.random()})
            labels.append(int(candidate == right))
            f1s.append(float(candidate == right))
            answer_counts.append(1)
        groups.append(4)
        folds.append(question % 5)
    settings = replace(default_settings().training.linker, rounds=20, num_leaves=4, min_data_in_leaf=5)
    calibration = Calibration.fit_out_of_fold(
        rows, labels, groups, folds, f1s, answer_counts,
        lambda r, labels, g: fit_scorer(r, labels, g, ("signal", "noise"), settings, seed=0),
    )  # fmt: skip
    assert 0.0 < calibration.confidence([0.9, 0.2], 1) <= 1.0
    calibration.save(tmp_path)
    assert Calibration.load(tmp_path) == calibration
