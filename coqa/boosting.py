"""Gradient-boosted scorers over named features (LightGBM), saved as LightGBM's own text model files.

The linker and the ranker each own one `BoostedScorer`. Rows are mappings
from feature name to value; a row must hold exactly the scorer's features:
a missing or unknown feature is an error, never silently filled with 0.
`objective` binary is a pointwise model (the score is P(right)); lambdarank
is listwise, trained on the rows of each question as one group (its raw
score is passed through the logistic function to stay in (0, 1)).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import lightgbm
import numpy as np

from coqa.config import BoosterSettings


class FeatureMismatch(ValueError):
    """Rows whose features are not the scorer's."""


@dataclass
class BoostedScorer:
    """A LightGBM booster with the feature names it was trained on, in column order."""

    booster: lightgbm.Booster
    feature_names: tuple[str, ...]
    objective: str

    def matrix(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        """The rows as a float matrix in the scorer's column order; FeatureMismatch
        unless every row has exactly the scorer's features."""
        return feature_matrix(rows, self.feature_names)

    def score(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """Scores in (0, 1), higher is better, one per row."""
        if not rows:
            return []
        # One thread: OpenMP threads cost far more than they save on the small batches of one question.
        raw = self.booster.predict(self.matrix(rows), num_threads=1, raw_score=self.objective == "lambdarank")
        if self.objective == "lambdarank":
            return [1.0 / (1.0 + math.exp(-value)) for value in raw]
        return [float(value) for value in raw]

    def save(self, path: Path) -> None:
        """LightGBM's text model file (it carries the feature names and the objective)."""
        self.booster.save_model(str(path))

    @classmethod
    def load(cls, path: Path) -> "BoostedScorer":
        booster = lightgbm.Booster(model_file=str(path))
        objective = "lambdarank" if "lambdarank" in str(booster.params.get("objective", "")) else "binary"
        return cls(booster, tuple(booster.feature_name()), objective)


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    """Rows as a matrix with columns `names`; FeatureMismatch naming the first difference."""
    expected = set(names)
    for row in rows:
        if row.keys() != expected:
            missing, unknown = sorted(expected - row.keys()), sorted(row.keys() - expected)
            raise FeatureMismatch(f"features missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}")
    values = operator.itemgetter(*names)  # one C call per row instead of a Python loop over the names
    return np.array([values(row) for row in rows], dtype=np.float64).reshape(len(rows), len(names))


def fit_scorer(
    rows: Sequence[Mapping[str, float]],
    labels: Sequence[int],
    groups: Sequence[int],
    names: Sequence[str],
    settings: BoosterSettings,
    seed: int,
) -> BoostedScorer:
    """Train a scorer; `labels` are relevance grades (0: wrong; binary fits
    whether a grade is positive, lambdarank orders by grade), `groups` the sizes
    of consecutive runs of rows of one question (used by lambdarank). Seeded,
    one thread, deterministic."""
    parameters = {
        "objective": settings.objective,
        "learning_rate": settings.learning_rate,
        "num_leaves": settings.num_leaves,
        "min_data_in_leaf": settings.min_data_in_leaf,
        "lambda_l2": settings.lambda_l2,
        "seed": seed,
        "deterministic": True,
        "force_row_wise": True,
        "num_threads": 1,
        "verbosity": -1,
    }
    if settings.objective == "lambdarank":
        parameters["lambdarank_truncation_level"] = 10
    data = lightgbm.Dataset(
        feature_matrix(rows, names),
        label=np.array(labels) if settings.objective == "lambdarank" else (np.array(labels) > 0).astype(int),
        group=list(groups) if settings.objective == "lambdarank" else None,
        feature_name=list(names),
        free_raw_data=True,
    )
    booster = lightgbm.train(parameters, data, num_boost_round=settings.rounds)
    return BoostedScorer(booster, tuple(names), settings.objective)
