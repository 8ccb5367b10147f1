"""Question-wording / predicate associations learned from training questions:
the one home of the association (ranking features read it; query generation
reads it through `learned_relevance`)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable, Mapping

import numpy as np

from coqa.ranking.keys import is_answer_class_key, name_piece_key, name_pieces


@dataclass
class PredicateAssociations:
    """Counts of question n-grams co-occurring with gold predicates in training.

    `score(p, text_grams)` is max over grams g of c(g, p) / (c(g) + smoothing):
    how strongly some wording of the question has meant predicate p before.
    """

    smoothing: float
    pair_counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    gram_counts: Counter[str] = field(default_factory=Counter)
    predicate_counts: Counter[str] = field(default_factory=Counter)
    questions: int = 0

    def to_json(self) -> dict[str, object]:
        return {
            "questions": self.questions,
            "gram_counts": dict(sorted(self.gram_counts.items())),
            "predicate_counts": dict(sorted(self.predicate_counts.items())),
            "pair_counts": {gram: dict(sorted(counts.items())) for gram, counts in sorted(self.pair_counts.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], smoothing: float) -> "PredicateAssociations":
        pairs = defaultdict(Counter, {gram: Counter(counts) for gram, counts in data["pair_counts"].items()})
        return cls(
            smoothing, pairs, Counter(data["gram_counts"]), Counter(data["predicate_counts"]), int(data["questions"])
        )

    def add(self, question_grams: set[str], predicates: Iterable[str]) -> None:
        predicates = set(predicates)
        # the counts change: turn them around again when next asked
        self.__dict__.pop("grams_by_predicate", None)
        self.__dict__.pop("answer_class_counts", None)
        self.questions += 1
        for gram in question_grams:
            self.gram_counts[gram] += 1
            for predicate in predicates:
                self.pair_counts[gram][predicate] += 1
        for predicate in predicates:
            self.predicate_counts[predicate] += 1

    def score(self, predicate: str, question_grams: set[str]) -> tuple[float, float]:
        """(best association, mean of the three best) of predicate with the grams."""
        return self.against(question_grams).score(predicate)

    @cached_property
    def grams_by_predicate(self) -> dict[str, dict[str, int]]:
        """`pair_counts` turned around: predicate -> gram -> count (built on first use, dropped by `add`)."""
        result: dict[str, dict[str, int]] = defaultdict(dict)
        for gram, counts in self.pair_counts.items():
            for predicate, count in counts.items():
                result[predicate][gram] = count
        return dict(result)

    @cached_property
    def answer_class_counts(self) -> "AnswerClassCounts":
        """The pair counts of the answer-class keys, read in one pass per set of grams (dropped by `add`)."""
        return AnswerClassCounts(self.pair_counts, self.gram_counts, self.smoothing)

    def against(self, question_grams: set[str]) -> "GramAssociations":
        """`score` for many predicates against the same grams (a question's
        candidates and a hub's predicates score hundreds or thousands): the
        grams training saw, with their smoothed counts, looked up once."""
        pair_counts, gram_counts, smoothing = self.pair_counts, self.gram_counts, self.smoothing
        return GramAssociations(
            self.grams_by_predicate,
            {g: gram_counts[g] + smoothing for g in question_grams if g in pair_counts},
            self.answer_class_counts,
        )

    def prior(self, predicate: str) -> float:
        return math.log1p(self.predicate_counts.get(predicate, 0))

    def name_score(self, predicate: str, question_grams: set[str]) -> float:
        """Mean over the pieces of the predicate's name (`name_pieces`) of their
        best association with the grams: defined for predicates training never
        saw, where `score` is 0."""
        pieces = name_pieces(predicate)
        if not pieces:
            return 0.0
        against = self.against(question_grams)
        # Summed in sorted order: a set's order changes with PYTHONHASHSEED, and so would the float sum.
        return sum(against.score(name_piece_key(piece))[0] for piece in sorted(pieces)) / len(pieces)


class AnswerClassCounts:
    """The associations of the answer-class keys (`is_answer_class_key`) with
    each gram, as arrays: `bests` finds the best association of every such key
    with a set of grams in one pass. A question's candidates ask for a few
    hundred of these keys against the same grams, and each key co-occurs with
    thousands of grams, so key by key (`GramAssociations.best`) costs more than
    all keys at once. The grams that co-occur with many keys (`|`, 的, 哪些)
    keep a dense row; the others their keys' positions and values."""

    def __init__(
        self, pair_counts: Mapping[str, Mapping[str, int]], gram_counts: Mapping[str, int], smoothing: float, dense_from: int = 256
    ) -> None:
        """`dense_from`: the number of keys a gram co-occurs with from which its row is dense."""
        self._pair_counts, self._gram_counts, self._smoothing = pair_counts, gram_counts, smoothing
        self._dense_from = dense_from

    @cached_property
    def index(self) -> dict[str, int]:
        """Answer-class key -> its position in `bests`."""
        keys = {key for counts in self._pair_counts.values() for key in counts if is_answer_class_key(key)}
        return {key: i for i, key in enumerate(sorted(keys))}

    @cached_property
    def _rows(self) -> tuple[dict[str, np.ndarray], dict[str, tuple[np.ndarray, np.ndarray]]]:
        """(gram -> dense row of associations, gram -> (key positions, associations)):
        count / smoothed count, the division `GramAssociations.best` makes."""
        index, dense, sparse = self.index, {}, {}
        for gram, counts in self._pair_counts.items():
            pairs = [(index[key], count) for key, count in counts.items() if is_answer_class_key(key)]
            if not pairs:
                continue
            positions, values = np.array([p for p, _ in pairs]), np.array([c for _, c in pairs], dtype=np.float64)
            values /= self._gram_counts[gram] + self._smoothing
            if len(pairs) >= self._dense_from:
                dense[gram] = row = np.zeros(len(index))
                row[positions] = values
            else:
                sparse[gram] = (positions, values)
        return dense, sparse

    def bests(self, grams: Iterable[str]) -> np.ndarray:
        """By `index`: the best association with the grams of each
        answer-class key, 0 where none co-occurred: the values `GramAssociations.best` gives."""
        dense, sparse = self._rows
        result = np.zeros(len(self.index))
        positions, values = [], []
        for gram in grams:
            if (row := dense.get(gram)) is not None:
                np.maximum(result, row, out=result)
            elif (pair := sparse.get(gram)) is not None:
                positions.append(pair[0])
                values.append(pair[1])
        if positions:
            np.maximum.at(result, np.concatenate(positions), np.concatenate(values))
        return result


@dataclass(frozen=True)
class GramAssociations:
    """`PredicateAssociations.score` against one set of question grams (`PredicateAssociations.against`):
    the training counts by predicate and gram, the smoothed count of each question gram training saw,
    and the answer-class counts (`best_answer_class`)."""

    grams_by_predicate: Mapping[str, Mapping[str, int]]
    seen: Mapping[str, float]
    answer_classes: AnswerClassCounts

    def score(self, predicate: str) -> tuple[float, float]:
        """(best association, mean of the three best) of the predicate with the grams."""
        values = sorted(self._associations(predicate), reverse=True)
        if not values:
            return 0.0, 0.0
        return values[0], sum(values[:3]) / 3.0

    def best(self, predicate: str) -> float:
        """`score(predicate)[0]`, without ordering the rest (query generation scores a hub's thousand predicates)."""
        return max(self._associations(predicate), default=0.0)

    def best_answer_class(self, keys: Iterable[str]) -> float:
        """The best `best(key)` of answer-class keys (0 for none), read from the
        bests of all of them, found once per grams."""
        bests, index = self._answer_class_bests, self.answer_classes.index
        return max([bests.item(index[key]) for key in keys if key in index], default=0.0)

    @cached_property
    def _answer_class_bests(self) -> np.ndarray:
        return self.answer_classes.bests(self.seen)

    def _associations(self, predicate: str) -> list[float]:
        """The association of the predicate with each gram both sides know, in
        no particular order (callers take the best ones)."""
        counts = self.grams_by_predicate.get(predicate)
        if not counts:
            return []
        # The grams both sides know, found by walking the smaller side rather than every
        # question gram: a hub's thousand predicates are scored against the same grams.
        seen = self.seen
        if len(seen) <= len(counts):
            return [count / smoothed for gram, smoothed in seen.items() if (count := counts.get(gram)) is not None]
        return [count / smoothed for gram, count in counts.items() if (smoothed := seen.get(gram)) is not None]
