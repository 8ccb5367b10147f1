"""Gradient-boosted scorers over named features (LightGBM), saved as LightGBM's own text model files.

The linker and the ranker each own one `BoostedScorer`. Rows are mappings
from feature name to value; a row must hold exactly the scorer's features:
a missing or unknown feature is an error, never silently filled with 0.
`objective` binary is a pointwise model (the score is P(right)); lambdarank
is listwise, trained on the rows of each question as one group (its raw
score is passed through the logistic function to stay in (0, 1)).
A scorer may be a bag of several such models fitted with different seeds
and subsamples of the questions; it scores with their mean (of the
probabilities, or of the raw ranking scores), which varies less with the
seed and the training rows than one model does.
"""

from __future__ import annotations

import logging
import math
import operator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import lightgbm
import numpy as np

from coqa.booster_settings import BoosterSettings

# LightGBM's native messages go to this logger (so to stderr, at the configured
# level), never to stdout, where result lines may be written.
lightgbm.register_logger(logging.getLogger("coqa.lightgbm"), info_method_name="debug")

# Told of every boosting round as (round, rounds), from 1: how `coqa train`
# shows progress through the fits, which take most of its time after the
# passes over the questions. None: nobody is told.
round_observer: ContextVar[Callable[[int, int], None] | None] = ContextVar("round_observer", default=None)


class FeatureMismatch(ValueError):
    """Rows whose features are not the scorer's."""


@dataclass
class BoostedScorer:
    """LightGBM boosters (one, or the members of a bag) with the feature names
    they were trained on, in column order."""

    boosters: tuple[lightgbm.Booster, ...]
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
        matrix = self.matrix(rows)
        # One thread: OpenMP threads cost far more than they save on the small batches of one question.
        raw = np.zeros(len(rows))
        for booster in self.boosters:
            raw = raw + np.asarray(booster.predict(matrix, num_threads=1, raw_score=self.objective == "lambdarank"))
        mean = raw / len(self.boosters)
        if self.objective == "lambdarank":
            return [1.0 / (1.0 + math.exp(-value)) for value in mean]
        return [float(value) for value in mean]

    def save(self, path: Path) -> list[str]:
        """LightGBM's text model files (each carries the feature names and the
        objective): the first booster at `path`, the other members of a bag
        beside it (`member_path`); returns the file names."""
        paths = [member_path(path, i) for i in range(len(self.boosters))]
        for booster, member in zip(self.boosters, paths):
            booster.save_model(str(member))
        return [member.name for member in paths]

    @classmethod
    def load(cls, path: Path) -> "BoostedScorer":
        """The scorer saved at `path`, with the members of its bag."""
        boosters = [lightgbm.Booster(model_file=str(path))]
        while member_path(path, len(boosters)).is_file():
            boosters.append(lightgbm.Booster(model_file=str(member_path(path, len(boosters)))))
        objective = "lambdarank" if "lambdarank" in str(boosters[0].params.get("objective", "")) else "binary"
        return cls(tuple(boosters), tuple(boosters[0].feature_name()), objective)


def member_path(path: Path, member: int) -> Path:
    """Where member `member` of a bagged scorer saved at `path` is: `path`
    itself for the first, `ranker.1.txt` beside `ranker.txt` for the second."""
    return path if member == 0 else path.with_name(f"{path.stem}.{member}{path.suffix}")


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> np.ndarray:
    """Rows as a matrix with columns `names`; FeatureMismatch naming the first difference."""
    # A row has exactly the features when it has as many keys and each name is
    # one of them (the getter below fails otherwise): the same test as comparing
    # its keys with the set of names, without building a set per row.
    count = len(set(names))
    values = operator.itemgetter(*names)  # one C call per row instead of a Python loop over the names
    try:
        if any(len(row) != count for row in rows):
            raise KeyError
        table = [values(row) for row in rows]
    except KeyError:
        raise _mismatch(rows, names) from None
    return np.array(table, dtype=np.float64).reshape(len(rows), len(names))


def _mismatch(rows: Sequence[Mapping[str, float]], names: Sequence[str]) -> FeatureMismatch:
    """The error for the first of `rows` whose features are not `names`."""
    expected = set(names)
    row = next(row for row in rows if row.keys() != expected)
    missing, unknown = sorted(expected - row.keys()), sorted(row.keys() - expected)
    return FeatureMismatch(f"features missing: {', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'}")


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
    of consecutive runs of rows of one question (used by lambdarank). With
    `settings.bags` above 1, a bag of that many models, member i seeded with
    `seed` * bags + i and each round fitted on a random `settings.bag_fraction`
    of the questions (LightGBM's bagging by query; of the rows for binary).
    Seeded, one thread, deterministic."""
    matrix = feature_matrix(rows, names)
    ranking = settings.objective == "lambdarank"
    label = np.array(labels) if ranking else (np.array(labels) > 0).astype(int)
    if settings.bags == 1:
        seeds, bagged = [seed], False
    else:
        seeds, bagged = [seed * settings.bags + i for i in range(settings.bags)], True
    boosters = []
    for member_seed in seeds:
        # A Dataset per member: LightGBM bins it with the member's seed (it samples rows to place the bins).
        data = lightgbm.Dataset(matrix, label=label, group=list(groups) if ranking else None, feature_name=list(names))
        boosters.append(_fit_booster(data, settings, member_seed, bagged))
    return BoostedScorer(tuple(boosters), tuple(names), settings.objective)


def _fit_booster(data: lightgbm.Dataset, settings: BoosterSettings, seed: int, bagged: bool) -> lightgbm.Booster:
    """One LightGBM model on `data`; `bagged`: each round on a random
    `settings.bag_fraction` of the rows (of the questions, for lambdarank)."""
    parameters: dict[str, object] = {
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
    if bagged:
        parameters.update(bagging_fraction=settings.bag_fraction, bagging_freq=1, bagging_by_query=settings.objective == "lambdarank")
    observer = round_observer.get()
    callbacks = [lambda env: observer(env.iteration + 1, env.end_iteration)] if observer else []
    return lightgbm.train(parameters, data, num_boost_round=settings.rounds, callbacks=callbacks)
