"""Features of a candidate's predicates by their names, for predicates training
never saw (with `ranking.name_associations`): name-piece associations, the
names of the gold predicates of the most similar training questions, and
learned paraphrases."""

from __future__ import annotations

from typing import Sequence

from coqa.kb.surfaces import matching_name, name_characters
from coqa.querygen.candidate import Candidate
from coqa.ranking.associations import PredicateAssociations
from coqa.ranking.context import QuestionContext, path_predicates
from coqa.ranking.paraphrase import PredicateParaphrases

NAME_ASSOCIATION_FEATURES = ("p_name_assoc_max", "p_name_assoc_min", "p_name_assoc_last")


# Of those, NAME_NEIGHBOUR_FEATURES and PARAPHRASE_FEATURES, the ones also compared with the question's best candidate (see `add_relative_features`).
NAME_RELATIVE_FEATURES = (
    "p_name_assoc_max", "p_name_neighbour_best", "p_name_neighbour_vote", "p_paraphrase_name", "p_paraphrase_wording",
)  # fmt: skip


def name_association_features(
    candidate: Candidate, rest: str, rest_grams: set[str], associations: PredicateAssociations, context: QuestionContext
) -> dict[str, float]:
    """`PredicateAssociations.name_score` of the path's predicates: the best, the weakest and the answer's."""
    predicates = path_predicates(candidate)
    values = []
    for predicate in predicates:
        if (rest, predicate) not in context.name_scores:
            context.name_scores[(rest, predicate)] = associations.name_score(predicate, rest_grams)
        values.append(context.name_scores[(rest, predicate)])
    if not values:
        return dict.fromkeys(NAME_ASSOCIATION_FEATURES, 0.0)
    last = values[-1] if candidate.shape.answer_predicate_last() else values[0]
    return dict(zip(NAME_ASSOCIATION_FEATURES, (max(values), min(values), last)))


NAME_NEIGHBOUR_FEATURES = ("p_name_neighbour_best", "p_name_neighbour_vote")


def name_overlap(first: str, second: str) -> float:
    """How much two predicate names share: the Dice coefficient of the
    characters of their matching forms (`售价` and `价格` 0.5, equal names 1)."""
    a, b = name_characters(first), name_characters(second)
    return 2.0 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


def name_neighbour_scores(predicate: str, nearest: Sequence[tuple[float, tuple[str, ...]]]) -> tuple[float, float]:
    """How well `predicate`'s name fits the gold predicates of the training
    questions most like the question (`PredicateNeighbours.nearest`), so that
    wording seen with one predicate carries to predicates named alike (`多少钱`
    asked of `售价` in training speaks for `价格`): the best similarity times
    `name_overlap`, and the similarity-weighted mean of `name_overlap`."""
    best = total = weight = 0.0
    for similarity, golds in nearest:
        overlap = max((name_overlap(predicate, gold) for gold in golds), default=0.0)
        best = max(best, similarity * overlap)
        total += similarity * overlap
        weight += similarity
    return best, total / weight if weight else 0.0


def name_neighbour_features(candidate: Candidate, context: QuestionContext) -> dict[str, float]:
    """`name_neighbour_scores` of the predicate that gives the answers."""
    predicates = path_predicates(candidate)
    if not predicates:
        return dict.fromkeys(NAME_NEIGHBOUR_FEATURES, 0.0)
    predicate = predicates[-1] if candidate.shape.answer_predicate_last() else predicates[0]
    if predicate not in context.name_neighbours:
        context.name_neighbours[predicate] = name_neighbour_scores(predicate, context.nearest)
    return dict(zip(NAME_NEIGHBOUR_FEATURES, context.name_neighbours[predicate]))


PARAPHRASE_FEATURES = ("p_paraphrase_name", "p_paraphrase_wording")


def paraphrase_features(
    candidate: Candidate, rest: str, paraphrases: PredicateParaphrases | None, context: QuestionContext
) -> dict[str, float]:
    """`PredicateParaphrases.scores` of the rest of the question and the name
    of the predicate that gives the answers (0 for a model without paraphrases)."""
    predicates = path_predicates(candidate)
    if not predicates or paraphrases is None:
        return dict.fromkeys(PARAPHRASE_FEATURES, 0.0)
    predicate = predicates[-1] if candidate.shape.answer_predicate_last() else predicates[0]
    if (rest, predicate) not in context.paraphrases:
        context.paraphrases[(rest, predicate)] = paraphrases.scores(rest, matching_name(predicate))
    return dict(zip(PARAPHRASE_FEATURES, context.paraphrases[(rest, predicate)]))
