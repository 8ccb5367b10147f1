"""The ranker's trained part: association counts, the TF-IDF neighbours of the
training questions, the boosted scorer, the calibration of its scores
(coqa.ranking.calibration) and, with `ranking.name_associations`, the
predicate paraphrases; with `ranking.relation_evidence`, the relation evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from coqa.boosting import BoostedScorer
from coqa.kb.surfaces import matching_name
from coqa.ranking.associations import PredicateAssociations
from coqa.ranking.keys import is_predicate_key, name_piece_keys, shape_key
from coqa.ranking.calibration import Calibration
from coqa.ranking.neighbours import PredicateNeighbours
from coqa.ranking.paraphrase import PARAPHRASES_FILE, PredicateParaphrases
from coqa.ranking.relation_evidence import RelationEvidence
from coqa.ranking.settings import RankingSettings
from coqa.ranking.wording import grams

ASSOCIATIONS_FILE = "associations.json"


NEIGHBOURS_FILE = "neighbours.npz"


SCORER_FILE = "ranker.txt"


@dataclass
class RankerModel:
    """The ranker's trained part: association counts and the TF-IDF neighbours
    of the training questions, the scorer and its calibration (None while
    training builds them), with `ranking.name_associations` the predicate
    paraphrases and with `ranking.relation_evidence` the relation evidence."""

    associations: PredicateAssociations
    neighbours: PredicateNeighbours
    scorer: BoostedScorer | None = None
    paraphrases: PredicateParaphrases | None = None
    calibration: Calibration | None = None
    evidence: RelationEvidence | None = None

    def save(self, directory: Path) -> list[str]:
        """Write the part into a model directory; return the file names."""
        text = json.dumps(self.associations.to_json(), ensure_ascii=False)
        (directory / ASSOCIATIONS_FILE).write_text(text, encoding="utf-8")
        self.neighbours.save(directory / NEIGHBOURS_FILE)
        assert self.scorer is not None and self.calibration is not None, "a ranker model is saved after training"
        paraphrases = [self.paraphrases.save(directory)] if self.paraphrases is not None else []
        scorer = self.scorer.save(directory / SCORER_FILE)
        evidence = [self.evidence.save(directory)] if self.evidence is not None else []
        return [ASSOCIATIONS_FILE, NEIGHBOURS_FILE, *scorer, self.calibration.save(directory), *paraphrases, *evidence]

    @classmethod
    def load(cls, directory: Path, settings: RankingSettings) -> "RankerModel":
        data = json.loads((directory / ASSOCIATIONS_FILE).read_text(encoding="utf-8"))
        return cls(
            PredicateAssociations.from_json(data, settings.association_smoothing),
            PredicateNeighbours.load(directory / NEIGHBOURS_FILE),
            BoostedScorer.load(directory / SCORER_FILE),
            PredicateParaphrases.load(directory) if (directory / PARAPHRASES_FILE).is_file() else None,
            Calibration.load(directory),
            RelationEvidence.load(directory) if settings.relation_evidence else None,
        )


def fit_statistics(
    wordings: Sequence[str], predicates: Sequence[list[str]], answer_classes: Sequence[list[str]], shapes: Sequence[str | None],
    folds: Sequence[int], fold_count: int, settings: RankingSettings,
) -> tuple[list[PredicateAssociations], PredicateNeighbours]:
    """The association counts per cross-fitting fold (index `fold_count`: over
    all) and the TF-IDF neighbours of all training questions, from each
    question's wording (its gold mentions taken out), its gold predicate keys
    and answer-class keys (coqa.ranking.keys; the neighbours read only the
    predicate keys), the shape of its gold query and its fold; a fold's
    counts leave its own questions out (the neighbours hide them when asked)."""
    tables = [PredicateAssociations(settings.association_smoothing) for _ in range(fold_count + 1)]
    for wording, predicate_keys, class_keys, own_fold in zip(wordings, predicates, answer_classes, folds):
        question_grams = grams(wording)
        keys = predicate_keys + class_keys
        if settings.name_associations:
            keys = keys + name_piece_keys(predicate_keys)
        for fold, table in enumerate(tables):
            if fold != own_fold:
                table.add(question_grams, keys)
    neighbour_keys = [keys + ([shape_key(shape)] if shape else []) for keys, shape in zip(predicates, shapes)]
    return tables, PredicateNeighbours.fit(wordings, neighbour_keys, folds)


def fit_paraphrases(
    wordings: Sequence[str], predicates: Sequence[list[str]], folds: Sequence[int], fold_count: int
) -> list[PredicateParaphrases]:
    """The predicate paraphrases per cross-fitting fold (index `fold_count`:
    over all), fitted on the wordings of the other folds' questions and the
    names of their gold predicates (coqa.ranking.paraphrase)."""
    pairs = [
        (fold, wording, matching_name(p))
        for wording, keys, fold in zip(wordings, predicates, folds)
        for p in keys
        if is_predicate_key(p)
    ]
    return [
        PredicateParaphrases.fit([(wording, name) for fold, wording, name in pairs if fold != held_out])
        for held_out in [*range(fold_count), None]
    ]
