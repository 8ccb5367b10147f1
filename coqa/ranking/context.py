"""What every candidate of one question is featurized against, and the memos
the candidates of a question share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from coqa.kb.names import Term
from coqa.linking.linker import LinkedNode
from coqa.querygen.candidate import Candidate
from coqa.ranking.associations import GramAssociations
from coqa.ranking.paraphrase import WordingParaphrases
from coqa.shapes import TYPE_PREDICATE


@dataclass(frozen=True)
class QuestionContext:
    """What every candidate of one question is featurized against."""

    text: str
    linked: Sequence[LinkedNode]
    cues: Mapping[str, float]
    neighbour_sims: np.ndarray  # similarity of the question to every training question
    # the training questions most similar to it, with their gold predicates (with name associations only)
    nearest: Sequence[tuple[float, tuple[str, ...]]] = ()
    # (rest of the question, predicate) -> the content positions it explains: many candidates share both
    explained: dict[tuple[str, str], set[int]] = field(default_factory=dict)
    # Memos of what many candidates of the question share (speed only: each value is
    # what the function computes for that key): the rest of the question and its
    # bigrams and grams (with their associations) by the spans the candidate's mentions take out; the predicate
    # features by (rest, predicate) or (rest, directed predicate); the shape and
    # answer features by shape and answers (`shared_value`).
    rests: dict[tuple[tuple[int, int], ...], tuple[str, set[str], set[str], GramAssociations]] = field(default_factory=dict)
    predicate_rows: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # predicate or directed predicate -> `PredicateNeighbours.score` against the question (it does not depend on the rest)
    neighbour_scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    directed_rows: dict[tuple[str, str], tuple[float, float, float]] = field(default_factory=dict)
    name_scores: dict[tuple[str, str], float] = field(default_factory=dict)
    name_neighbours: dict[str, tuple[float, float]] = field(default_factory=dict)
    paraphrases: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    # (rest, path predicates) -> the relation-evidence features (coqa.ranking.relation_evidence)
    evidence: dict[tuple[str, tuple[str, ...]], tuple[float, float, float]] = field(default_factory=dict)
    evidence_wordings: dict[str, WordingParaphrases] = field(default_factory=dict)  # rest -> the evidence against it
    # rest -> answer -> the best association of its answer-class keys with the rest's grams
    class_scores: dict[str, dict[Term, float]] = field(default_factory=dict)
    shared: dict[tuple, dict[str, float]] = field(default_factory=dict)
    linked_terms: frozenset[Term] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "linked_terms", frozenset(node.term for node in self.linked))


def shared_value(context: QuestionContext, key: tuple, compute: Callable[[], dict[str, float]]) -> dict[str, float]:
    """`compute()`, once per question for each `key` (which must hold all that it depends on); never mutate the result."""
    if key not in context.shared:
        context.shared[key] = compute()
    return context.shared[key]


def path_predicates(candidate: Candidate) -> list[str]:
    """The relation predicates of the path (the type predicate names no relation)."""
    return [p for p in candidate.predicates if p != TYPE_PREDICATE] or list(candidate.predicates)
