"""The trained model: what `coqa train` writes and the pipeline reads.

One pickle file holds the two scikit-learn classifiers (entity linking and
candidate ranking) with the feature names they expect, the statistics
learned from the training questions (keyphraseness of surfaces, predicate
associations), and a note of what it was trained on.
"""

from __future__ import annotations

import pickle
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from threadpoolctl import threadpool_limits

from coqa.ranking import PredicateAssociations

FORMAT_VERSION = 1


class ModelError(ValueError):
    """A model file that cannot be used; the message says why and what to do."""


@dataclass
class FeatureScorer:
    """A binary classifier over named features; `score` gives P(positive)."""

    classifier: Any
    feature_names: list[str]

    def matrix(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        return np.array([[row.get(name, 0.0) for name in self.feature_names] for row in rows], dtype=np.float64)

    def score(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        if not rows:
            return []
        # OpenMP threads cost far more than they save on the small batches of one question.
        with threadpool_limits(limits=1):
            return self.classifier.predict_proba(self.matrix(rows))[:, 1].tolist()


@dataclass
class TrainedModel:
    linker: FeatureScorer
    ranker: FeatureScorer
    keyphraseness: dict[str, tuple[int, int]]
    associations: PredicateAssociations
    info: dict[str, Any] = field(default_factory=dict)
    version: int = FORMAT_VERSION

    def save(self, path: str | Path) -> None:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        with open(tmp, "wb") as handle:
            pickle.dump(self, handle, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.replace(path)

    @staticmethod
    def load(path: str | Path) -> "TrainedModel":
        path = Path(path)
        if not path.is_file():
            raise ModelError(f"no model at {path}: train one with `coqa train TRAIN_FILE --store DIR -o {path}`")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                with open(path, "rb") as handle:
                    model = pickle.load(handle)
        except (pickle.UnpicklingError, EOFError, AttributeError, ModuleNotFoundError) as error:
            raise ModelError(f"{path} is not a coqa model ({error}); retrain with `coqa train`") from None
        if not isinstance(model, TrainedModel) or model.version != FORMAT_VERSION:
            raise ModelError(f"{path} is not a coqa model of format {FORMAT_VERSION}; retrain with `coqa train`")
        return model
