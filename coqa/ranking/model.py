"""The ranker's trained part: association counts, the TF-IDF neighbours of the
training questions, the boosted scorer and, with `ranking.name_associations`,
the predicate paraphrases; with `ranking.relation_evidence`, the relation evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from coqa.boosting import BoostedScorer
from coqa.config import RankingSettings
from coqa.ranking.associations import PredicateAssociations
from coqa.ranking.neighbours import PredicateNeighbours
from coqa.ranking.paraphrase import PARAPHRASES_FILE, PredicateParaphrases
from coqa.ranking.relation_evidence import RelationEvidence

ASSOCIATIONS_FILE = "associations.json"


NEIGHBOURS_FILE = "neighbours.npz"


SCORER_FILE = "ranker.txt"


@dataclass
class RankerModel:
    """The ranker's trained part: association counts and the TF-IDF neighbours
    of the training questions, the scorer (None while training builds it),
    with `ranking.name_associations` the predicate paraphrases and with
    `ranking.relation_evidence` the relation evidence."""

    associations: PredicateAssociations
    neighbours: PredicateNeighbours
    scorer: BoostedScorer | None = None
    paraphrases: PredicateParaphrases | None = None
    evidence: RelationEvidence | None = None

    def save(self, directory: Path) -> list[str]:
        """Write the part into a model directory; return the file names."""
        text = json.dumps(self.associations.to_json(), ensure_ascii=False)
        (directory / ASSOCIATIONS_FILE).write_text(text, encoding="utf-8")
        self.neighbours.save(directory / NEIGHBOURS_FILE)
        assert self.scorer is not None, "a ranker model is saved after training"
        paraphrases = [self.paraphrases.save(directory)] if self.paraphrases is not None else []
        evidence = [self.evidence.save(directory)] if self.evidence is not None else []
        return [ASSOCIATIONS_FILE, NEIGHBOURS_FILE, *self.scorer.save(directory / SCORER_FILE), *paraphrases, *evidence]

    @classmethod
    def load(cls, directory: Path, settings: RankingSettings) -> "RankerModel":
        data = json.loads((directory / ASSOCIATIONS_FILE).read_text(encoding="utf-8"))
        return cls(
            PredicateAssociations.from_json(data, settings.association_smoothing),
            PredicateNeighbours.load(directory / NEIGHBOURS_FILE),
            BoostedScorer.load(directory / SCORER_FILE),
            PredicateParaphrases.load(directory) if (directory / PARAPHRASES_FILE).is_file() else None,
            RelationEvidence.load(directory) if settings.relation_evidence else None,
        )
