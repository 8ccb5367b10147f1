"""The settings of entity linking (their values: config.yaml, section linking)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LinkingSettings:
    max_targets_per_mention: int
    # Shortest span of a question matched against the mention index. `coqa
    # train` on an NLPCC file lowers it to 1 when a gold subject is one character.
    min_mention_length: int
    # Mentions of names written by sound or shortened (coqa.mentions.name_variants). `coqa
    # train` on an NLPCC file turns them on; the default leaves PKU BASE linking unchanged.
    name_variants: bool
