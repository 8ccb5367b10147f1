"""The settings of one boosted model (their values: config.yaml, sections
training.linker and training.ranker); coqa.boosting fits models with them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BoosterSettings:
    """A LightGBM model: `objective` is binary (pointwise) or lambdarank (grouped by question)."""

    objective: str
    rounds: int
    learning_rate: float
    num_leaves: int
    min_data_in_leaf: int
    lambda_l2: float
    # Models averaged (coqa.boosting.fit_scorer); above 1, each round of each is fitted on this share of the questions.
    bags: int
    bag_fraction: float
