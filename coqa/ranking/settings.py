"""The settings of the ranking features (their values: config.yaml, section ranking)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RankingSettings:
    """Constants of the ranking features (a model is trained with them)."""

    strong_link: float
    association_smoothing: float
    # The p_name_assoc features (question wording against the pieces of predicate
    # names, coqa.ranking.keys.name_pieces). `coqa train` on an NLPCC file turns them
    # on; on CCKS held-out train they lowered F1, so they are off by default.
    name_associations: bool
    # The p_evidence features (coqa.ranking.relation_evidence): predicate paraphrases
    # fitted on another labelled question file. `coqa train --relation-evidence FILE`
    # turns them on (and needs FILE: the tables are a part of the model).
    relation_evidence: bool
