"""The trained part of DBQA: a LightGBM lambdarank model over FEATURE_NAMES,
grouped by question. It owns fitting, saving (LightGBM's text model file) and
loading; coqa.dbqa.model wraps it in a model folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from coqa.boosting import BoostedScorer, fit_scorer
from coqa.booster_settings import BoosterSettings
from coqa.dbqa.features import FEATURE_NAMES

RANKER_FILE = "ranker.txt"

@dataclass
class SentenceRanker:
    """Scores candidate sentences from their feature rows (higher: more likely an answer)."""

    scorer: BoostedScorer

    @classmethod
    def fit(
        cls,
        rows: Sequence[Mapping[str, float]],
        labels: Sequence[int],
        groups: Sequence[int],
        settings: BoosterSettings,
        seed: int = 0,
    ) -> "SentenceRanker":
        """Fit on feature rows with 0/1 labels; `groups` are the numbers of
        consecutive rows of each question; `settings`: config.yaml's
        dbqa.ranker or others. Seeded and deterministic."""
        return cls(fit_scorer(rows, labels, groups, FEATURE_NAMES, settings, seed))

    def score(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """One score in (0, 1) per row."""
        return self.scorer.score(rows)

    def save(self, directory: Path) -> list[str]:
        """Write the LightGBM text model file(s) into `directory`; their names."""
        return self.scorer.save(directory / RANKER_FILE)

    @classmethod
    def load(cls, directory: Path) -> "SentenceRanker":
        """The ranker saved in `directory`; ValueError when its features are not FEATURE_NAMES."""
        scorer = BoostedScorer.load(directory / RANKER_FILE)
        if scorer.feature_names != FEATURE_NAMES:
            raise ValueError("its ranker's features differ from the code's")
        return cls(scorer)
