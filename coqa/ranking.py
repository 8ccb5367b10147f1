"""Ranking: features of a candidate query, and the statistics learned for them.

Per candidate: question/predicate similarity at character and bigram level,
predicate-phrase associations learned from the training set, answer-type
cues against answer properties, the linking scores of the nodes it uses,
its shape and its answer count. A learned model (see coqa.model) scores the
feature vectors; the best-scored candidate is the answer.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz
from sklearn.feature_extraction.text import TfidfVectorizer

from coqa.cues import looks_numeric, question_cues
from coqa.linking import LinkedNode
from coqa.kb.surfaces import normalize_surface
from coqa.querygen import TYPE_PREDICATE, Candidate

SHAPES = (
    "one_hop_out", "one_hop_in", "one_hop_out_checked", "one_hop_out_checked_in", "chain_out_out", "chain_in_out", "chain_out_in",
    "star_in_in", "star_out_in", "star_out_out", "star3_in", "type_in", "type_out", "predicate",
    "count_in", "count_out", "count_star_in_in",
)  # fmt: skip
ASSOCIATION_SMOOTHING = 5.0
STRONG_LINK = 0.3


OUTWARD_SHAPES = ("one_hop_out", "chain_out", "star_out", "type_out", "one_hop_out_checked", "count_out")


def directed(predicate: str, outward: bool) -> str:
    """The association key of a predicate read from a linked node: out of it (`p>`) or into it (`p<`)."""
    return predicate + (">" if outward else "<")


def grams(text: str) -> set[str]:
    """Character 1-, 2- and 3-grams of a text (its "words" for association counts)."""
    return {text[i : i + n] for n in (1, 2, 3) for i in range(len(text) - n + 1)}


def bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def remove_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with the given [start, end) spans replaced by a separator."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            chars[i] = "|"
    return "".join(chars)


class PredicateNeighbours:
    """Training questions indexed by the predicates of their gold query.

    A predicate scores by how similar the question is to the training
    questions that used it (cosine of TF-IDF over character 1-3 grams).
    `fold` hides the training questions of one cross-fitting fold.
    """

    def __init__(self, texts: Sequence[str], predicates: Sequence[Iterable[str]], folds: Sequence[int]) -> None:
        self.vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform(texts).tocsr()
        rows: dict[str, list[int]] = defaultdict(list)
        for row, names in enumerate(predicates):
            for name in set(names):
                rows[name].append(row)
        self.rows = {name: np.array(indices) for name, indices in rows.items()}
        self.folds = np.array(folds)

    def similarities(self, text: str, fold: int | None) -> np.ndarray:
        """Similarity of `text` to every training question (0 for the hidden fold)."""
        sims = (self.matrix @ self.vectorizer.transform([text]).T).toarray().ravel()
        if fold is not None:
            sims[self.folds == fold] = 0.0
        return sims

    def score(self, predicate: str, sims: np.ndarray) -> tuple[float, float]:
        """(best similarity, mean of the three best) over the questions that used `predicate`."""
        rows = self.rows.get(predicate)
        if rows is None:
            return 0.0, 0.0
        values = np.sort(sims[rows])[::-1]
        return float(values[0]), float(values[:3].sum() / 3.0)


@dataclass
class PredicateAssociations:
    """Counts of question n-grams co-occurring with gold predicates in training.

    `score(p, text_grams)` is max over grams g of c(g, p) / (c(g) + smoothing):
    how strongly some wording of the question has meant predicate p before.
    """

    pair_counts: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    gram_counts: Counter[str] = field(default_factory=Counter)
    predicate_counts: Counter[str] = field(default_factory=Counter)
    questions: int = 0
    neighbours: PredicateNeighbours | None = None
    hidden_fold: int | None = None

    def neighbour_similarities(self, text: str) -> np.ndarray | None:
        """`PredicateNeighbours.similarities` of the text, None without neighbours."""
        return None if self.neighbours is None else self.neighbours.similarities(text, self.hidden_fold)

    def add(self, question_grams: set[str], predicates: Iterable[str]) -> None:
        predicates = set(predicates)
        self.questions += 1
        for gram in question_grams:
            self.gram_counts[gram] += 1
            for predicate in predicates:
                self.pair_counts[gram][predicate] += 1
        for predicate in predicates:
            self.predicate_counts[predicate] += 1

    def score(self, predicate: str, question_grams: set[str]) -> tuple[float, float]:
        """(best association, mean of the three best) of predicate with the grams."""
        values = sorted(
            (self.pair_counts[g][predicate] / (self.gram_counts[g] + ASSOCIATION_SMOOTHING)
             for g in question_grams if g in self.pair_counts and predicate in self.pair_counts[g]),
            reverse=True,
        )  # fmt: skip
        if not values:
            return 0.0, 0.0
        return values[0], sum(values[:3]) / 3.0

    def prior(self, predicate: str) -> float:
        return math.log1p(self.predicate_counts.get(predicate, 0))


def _similarity(predicate: str, rest: str, rest_bigrams: set[str]) -> dict[str, float]:
    name = normalize_surface(predicate)
    chars = set(name)
    pred_bigrams = bigrams(name)
    return {
        "char": len(chars & set(rest)) / len(chars) if chars else 0.0,
        "bigram": len(pred_bigrams & rest_bigrams) / len(pred_bigrams) if pred_bigrams else 0.0,
        "contained": float(bool(name) and name in rest),
        "fuzzy": fuzz.partial_ratio(name, rest) / 100.0 if name else 0.0,
    }


def candidate_features(
    text: str,
    candidate: Candidate,
    linked: Sequence[LinkedNode],
    associations: PredicateAssociations,
    cues: Mapping[str, float] | None = None,
    neighbour_sims: np.ndarray | None = None,
) -> dict[str, float]:
    """Features of one candidate for the normalized question `text`;
    `neighbour_sims` from `associations.neighbour_similarities`."""
    cues = question_cues(text) if cues is None else cues
    rest = remove_spans(text, ((n.start, n.end) for n in candidate.nodes))
    rest_bigrams = bigrams(rest)
    rest_grams = grams(rest)
    features: dict[str, float] = {f"shape_{shape}": float(candidate.shape == shape) for shape in SHAPES}
    features.update(cues)
    scores = [n.score for n in candidate.nodes]
    features.update(
        link_max=max(scores), link_min=min(scores), link_mean=sum(scores) / len(scores), nodes=float(len(scores)),
        coverage=sum(n.end - n.start for n in candidate.nodes) / max(len(text), 1),
        top_node=float(bool(linked) and any(n.term == linked[0].term for n in candidate.nodes)),
        node_literal=float(any(n.term.is_literal for n in candidate.nodes)),
    )  # fmt: skip
    used = set(candidate.nodes)
    unused = [n.score for n in linked if n not in used and n.score >= STRONG_LINK and not any(n.overlaps(u) for u in used)]
    features.update(unused_strong=float(len(unused)), unused_best=max(unused, default=0.0))
    features.update(_predicate_features(candidate, rest, rest_bigrams, rest_grams, associations, neighbour_sims))
    features.update(_answer_features(candidate, cues))
    return features


def _predicate_features(
    candidate: Candidate,
    rest: str,
    rest_bigrams: set[str],
    rest_grams: set[str],
    associations: PredicateAssociations,
    neighbour_sims: np.ndarray | None,
) -> dict[str, float]:
    predicates = [p for p in candidate.predicates if p != TYPE_PREDICATE] or list(candidate.predicates)
    if not predicates:
        predicates = [a.value for a in candidate.answers]
    rows = []
    for predicate in predicates:
        row = _similarity(predicate, rest, rest_bigrams)
        row["assoc_max"], row["assoc_top3"] = associations.score(predicate, rest_grams)
        row["prior"] = associations.prior(predicate)
        if associations.neighbours is not None and neighbour_sims is not None:
            row["neighbour_max"], row["neighbour_top3"] = associations.neighbours.score(predicate, neighbour_sims)
        rows.append(row)
    features: dict[str, float] = {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        features[f"p_{key}_max"] = max(values)
        features[f"p_{key}_min"] = min(values)
        features[f"p_{key}_last"] = values[-1] if candidate.shape.startswith("chain") else values[0]
    features["p_length"] = float(len(predicates[0]))
    first = directed(predicates[0], candidate.shape.startswith(OUTWARD_SHAPES))
    features["p_assoc_directed"], _ = associations.score(first, rest_grams)
    features["p_prior_directed"] = associations.prior(first)
    if associations.neighbours is not None and neighbour_sims is not None:
        features["p_neighbour_directed"], _ = associations.neighbours.score(first, neighbour_sims)
    return features


def _answer_features(candidate: Candidate, cues: Mapping[str, float]) -> dict[str, float]:
    answers = candidate.answers
    count = len(answers)
    literal = sum(a.is_literal for a in answers) / count if count else 0.0
    numeric = sum(looks_numeric(a.value) for a in answers if a.is_literal) / count if count else 0.0
    return {
        "a_log_count": math.log1p(count),
        "a_none": float(count == 0),
        "a_one": float(count == 1),
        "a_literal": literal,
        "a_numeric": numeric,
        "a_when_numeric": cues["cue_when"] * numeric,
        "a_quantity_numeric": cues["cue_quantity"] * numeric,
        "a_who_entity": cues["cue_who"] * (1.0 - literal),
        "a_many_count": cues["cue_which_many"] * math.log1p(count),
    }


RELATIVE_FEATURES = (
    "link_max", "link_mean", "p_assoc_max_max", "p_assoc_top3_max", "p_char_max", "p_bigram_max",
    "p_fuzzy_max", "p_prior_max", "coverage", "a_log_count", "p_neighbour_max_max", "p_neighbour_top3_max",
)  # fmt: skip


def add_relative_features(rows: Sequence[dict[str, float]]) -> None:
    """Add, for the key features, how far each candidate stays below the best
    candidate of the same question (a pointwise model cannot see that otherwise)."""
    for name in RELATIVE_FEATURES:
        best = max((row.get(name, 0.0) for row in rows), default=0.0)
        for row in rows:
            row[f"gap_{name}"] = best - row.get(name, 0.0)
