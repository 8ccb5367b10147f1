"""The ranker: featurizes the candidate queries of a question and scores them
with its trained part (coqa.ranking.model), best first."""

from __future__ import annotations

from typing import Sequence

from coqa.linking.linker import LinkedNode
from coqa.mentions.cues import (
    question_cues,
)  # fmt: skip
from coqa.querygen.candidate import Candidate
from coqa.ranking.context import QuestionContext
from coqa.ranking.features import add_relative_features, candidate_features
from coqa.ranking.model import RankerModel
from coqa.ranking.settings import RankingSettings
from coqa.ranking.wording import remove_spans

# The name-neighbour features (`name_neighbour_scores`) look at this many of
# the training questions most similar to the question.
NAME_NEIGHBOURS = 30


class QueryRanker:
    """Featurizes and scores the candidate queries of a question.

    `hidden_fold` (training only) hides one cross-fitting fold of the
    training questions from the neighbour similarities.
    """

    def __init__(self, model: RankerModel, settings: RankingSettings, hidden_fold: int | None = None) -> None:
        self.model = model
        self.settings = settings
        self.hidden_fold = hidden_fold

    def featurize(self, text: str, linked: Sequence[LinkedNode], candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        """The features of every candidate of the normalized question `text`, in order."""
        sims = self.model.neighbours.similarities(remove_spans(text, ((n.start, n.end) for n in linked[:1])), self.hidden_fold)
        nearest = self.model.neighbours.nearest(sims, NAME_NEIGHBOURS) if self.settings.name_associations else ()
        context = QuestionContext(text, linked, question_cues(text), sims, nearest)
        rows = [
            candidate_features(context, candidate, self.model.associations, self.model.neighbours, self.settings, self.model.paraphrases,
                               self.model.evidence)
            for candidate in candidates
        ]
        add_relative_features(rows, self.settings)
        return rows

    def rank(self, text: str, linked: Sequence[LinkedNode], candidates: Sequence[Candidate]) -> list[tuple[float, Candidate]]:
        """Candidates with their scores, best first (ties keep generation order)."""
        assert self.model.scorer is not None, "ranking needs a trained ranker"
        scores = self.model.scorer.score(self.featurize(text, linked, candidates))
        return sorted(zip(scores, candidates), key=lambda pair: -pair[0])
