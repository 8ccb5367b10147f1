"""The settings of DBQA sentence ranking (their values: config.yaml, section dbqa)."""

from __future__ import annotations

from dataclasses import dataclass

from coqa.booster_settings import BoosterSettings


@dataclass(frozen=True)
class DBQASettings:
    # The LightGBM model over each question's sentences, chosen by 5-fold
    # cross-validation by question on the training file (benchmarks/dbqa_cv.py; docs/dbqa.md).
    ranker: BoosterSettings
