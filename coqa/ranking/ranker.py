"""Ranking: features of a candidate query, the statistics learned for them,
and the ranker that scores candidates with its trained part.

Per candidate: question/predicate similarity at character and bigram level,
predicate-phrase associations learned from the training set, answer-type
cues against answer properties and literal forms, the linking scores of
the nodes it uses, its shape (from coqa.shapes) and its answer count against
plural wording; and the whole query against the whole question: how much of
the question's content (after its mentions and asking words) the path's
predicates explain, together and the weakest one, and how well the wording
fits the predicate pair of a two-hop path in training. `RankerModel` is the
ranker's trained part (association counts, the TF-IDF of the training
questions, a boosted scorer); `QueryRanker` scores the candidates of a
question with it, best first.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np
from rapidfuzz import fuzz
from scipy import sparse

from coqa.boosting import BoostedScorer
from coqa.config import RankingSettings
from coqa.mentions.cues import (
    CUES, PLURAL, SINGULAR, content_mask, looks_like_date, looks_like_person, looks_like_place, looks_numeric, question_cues,
)  # fmt: skip
from coqa.linking.linker import LinkedNode
from coqa.ranking.paraphrase import PARAPHRASES_FILE, PredicateParaphrases
from coqa.kb.names import Term
from coqa.kb.surfaces import base_name, normalize_surface
from coqa.querygen.generator import Candidate
from coqa.shapes import FACT_CHECKED, SHAPES, TYPE_PREDICATE, shape_features

ASSOCIATIONS_FILE = "associations.json"
NEIGHBOURS_FILE = "neighbours.npz"
SCORER_FILE = "ranker.txt"
# A question bigram explains a predicate when it meant that predicate in at
# least this share of the training questions it occurred in (smoothed).
EXPLAINING_ASSOCIATION = 0.2
# The name-neighbour features (`name_neighbour_scores`) look at this many of
# the training questions most similar to the question.
NAME_NEIGHBOURS = 30

def directed(predicate: str, outward: bool) -> str:
    """The association key of a predicate read from a linked node: out of it (`p>`) or into it (`p<`)."""
    return predicate + (">" if outward else "<")


def pair_key(predicates: Iterable[str]) -> str:
    """The association key of a two-predicate path, whatever the order its query writes them in."""
    return "+".join(sorted(predicates)) + "+"


def shape_key(shape: str) -> str:
    """The neighbour key of the training questions whose gold query has this shape."""
    return shape + "#"


def is_predicate_key(key: str) -> bool:
    """Whether an association or neighbour key is a predicate itself, not a
    directed (`p>`, `p<`), pair (`p+q+`), name-piece (`~piece~`) or shape (`shape#`) key."""
    return not key.endswith((">", "<", "+", "~", "#"))


def name_overlap(first: str, second: str) -> float:
    """How much two predicate names share: the Dice coefficient of the
    characters of their matching forms (`售价` and `价格` 0.5, equal names 1)."""
    a, b = _name_characters(first), _name_characters(second)
    return 2.0 * len(a & b) / (len(a) + len(b)) if a or b else 0.0


@lru_cache(maxsize=1 << 16)
def _name_characters(predicate: str) -> frozenset[str]:
    """The characters of a predicate's matching name (cached: the name-neighbour
    features compare every candidate predicate with dozens of gold predicates)."""
    return frozenset(matching_name(predicate))


def name_piece_key(piece: str) -> str:
    """The association key of a piece of predicate names (see `name_pieces`): `~piece~`,
    apart from predicate keys, which never start with `~`."""
    return f"~{piece}~"


def name_pieces(predicate: str) -> set[str]:
    """The pieces of a predicate's name that question wording is associated with,
    so that what training learned about one predicate carries to others sharing
    its words (`死亡人数` -> `死亡`, `亡人`, `人数`): the character bigrams of the
    matching form of the name (`matching_name`), or the name itself when it is
    one character."""
    name = matching_name(predicate)
    return bigrams(name) or ({name} if name else set())


def matching_name(predicate: str) -> str:
    """The form of a predicate name that question text is compared with:
    `normalize_surface` (full width to half width, lower case) without white
    space, which KB names sometimes hold inside a word (`页 数`)."""
    return "".join(normalize_surface(predicate).split())


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


class CharTfidf:
    """TF-IDF over character 1-3 grams, L2-normalised, sublinear tf, smoothed idf
    (the definitions of scikit-learn's TfidfVectorizer(analyzer="char",
    ngram_range=(1, 3), sublinear_tf=True)). Written here so that the fitted
    statistic is a vocabulary and an idf array saved as NPZ, never a pickle."""

    _WHITE_SPACE = re.compile(r"\s\s+")

    def __init__(self, vocabulary: Sequence[str], idf: np.ndarray) -> None:
        self.vocabulary = list(vocabulary)
        self.index = {gram: i for i, gram in enumerate(self.vocabulary)}
        self.idf = idf

    @classmethod
    def _grams(cls, text: str) -> Counter[str]:
        text = cls._WHITE_SPACE.sub(" ", text.lower())
        return Counter(text[i : i + n] for n in (1, 2, 3) for i in range(len(text) - n + 1))

    @classmethod
    def fit(cls, texts: Sequence[str]) -> tuple["CharTfidf", sparse.csr_matrix]:
        """The vectorizer fitted on `texts` and their matrix."""
        counts = [cls._grams(text) for text in texts]
        vocabulary = sorted({gram for row in counts for gram in row})
        document_frequency = Counter(gram for row in counts for gram in row)
        df = np.array([document_frequency[gram] for gram in vocabulary], dtype=np.float64)
        idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
        vectorizer = cls(vocabulary, idf)
        return vectorizer, vectorizer._matrix(counts)

    def transform(self, texts: Sequence[str]) -> sparse.csr_matrix:
        return self._matrix([self._grams(text) for text in texts])

    def _matrix(self, counts: Sequence[Counter[str]]) -> sparse.csr_matrix:
        rows, columns, values = [], [], []
        for row, grams_of_row in enumerate(counts):
            for gram, count in grams_of_row.items():
                column = self.index.get(gram)
                if column is not None:
                    rows.append(row)
                    columns.append(column)
                    values.append((1.0 + math.log(count)) * self.idf[column])
        matrix = sparse.csr_matrix((values, (rows, columns)), shape=(len(counts), len(self.vocabulary)), dtype=np.float64)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0.0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)


class PredicateNeighbours:
    """Training questions indexed by the predicates of their gold query.

    A predicate scores by how similar the question is to the training
    questions that used it (cosine of TF-IDF over character 1-3 grams).
    `folds` (training only) lets a cross-fitting fold hide its own questions.
    """

    def __init__(
        self, vectorizer: CharTfidf, matrix: sparse.csr_matrix, rows: Mapping[str, np.ndarray], folds: np.ndarray | None
    ) -> None:
        self.vectorizer = vectorizer
        self.matrix = matrix
        self.rows = dict(rows)
        self.folds = folds
        gold: dict[int, list[str]] = defaultdict(list)
        for name, indices in self.rows.items():
            if is_predicate_key(name):
                for row in indices:
                    gold[int(row)].append(name)
        self.gold_predicates = {row: tuple(names) for row, names in gold.items()}

    @classmethod
    def fit(cls, texts: Sequence[str], predicates: Sequence[Iterable[str]], folds: Sequence[int]) -> "PredicateNeighbours":
        vectorizer, matrix = CharTfidf.fit(texts)
        rows: dict[str, list[int]] = defaultdict(list)
        for row, names in enumerate(predicates):
            for name in sorted(set(names)):
                rows[name].append(row)
        return cls(vectorizer, matrix, {name: np.array(indices) for name, indices in rows.items()}, np.array(folds))

    def similarities(self, text: str, fold: int | None) -> np.ndarray:
        """Similarity of `text` to every training question (0 for the hidden fold)."""
        # A sparse matrix times a dense vector: one pass over the matrix, where a
        # sparse-sparse product takes two and builds a sparse result (same sums, same order).
        sims = self.matrix @ self.vectorizer.transform([text]).toarray().ravel()
        if fold is not None and self.folds is not None:
            sims[self.folds == fold] = 0.0
        return sims

    def score(self, predicate: str, sims: np.ndarray) -> tuple[float, float]:
        """(best similarity, mean of the three best) over the questions that used `predicate`."""
        rows = self.rows.get(predicate)
        if rows is None:
            return 0.0, 0.0
        values = np.sort(sims[rows])[::-1]
        return float(values[0]), float(values[:3].sum() / 3.0)

    def nearest(self, sims: np.ndarray, count: int) -> list[tuple[float, tuple[str, ...]]]:
        """The `count` training questions most similar to the question of `sims`
        (those with a positive similarity), each as (similarity, its gold predicates)."""
        count = min(count, len(sims))
        if count == 0:
            return []
        top = np.argpartition(-sims, count - 1)[:count]
        return [(float(sims[row]), self.gold_predicates.get(int(row), ())) for row in top if sims[row] > 0.0]

    def save(self, path: Path) -> None:
        """Arrays only (loaded with allow_pickle=False); the training folds are not kept."""
        names = sorted(self.rows)
        np.savez_compressed(
            path,
            vocabulary=np.array(self.vectorizer.vocabulary, dtype=str),
            idf=self.vectorizer.idf,
            data=self.matrix.data,
            indices=self.matrix.indices,
            indptr=self.matrix.indptr,
            shape=np.array(self.matrix.shape),
            predicates=np.array(names, dtype=str),
            predicate_offsets=np.cumsum([0] + [len(self.rows[name]) for name in names]),
            predicate_rows=np.concatenate([self.rows[name] for name in names]) if names else np.array([], dtype=int),
        )

    @classmethod
    def load(cls, path: Path) -> "PredicateNeighbours":
        with np.load(path, allow_pickle=False) as arrays:
            vectorizer = CharTfidf([str(gram) for gram in arrays["vocabulary"]], arrays["idf"])
            matrix = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"]))
            offsets, all_rows = arrays["predicate_offsets"], arrays["predicate_rows"]
            rows = {str(name): all_rows[offsets[i] : offsets[i + 1]] for i, name in enumerate(arrays["predicates"])}
        return cls(vectorizer, matrix, rows, None)


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
    def from_json(cls, data: Mapping[str, object], smoothing: float) -> "PredicateAssociations":
        pairs = defaultdict(Counter, {gram: Counter(counts) for gram, counts in data["pair_counts"].items()})  # type: ignore[union-attr]
        return cls(
            smoothing, pairs, Counter(data["gram_counts"]), Counter(data["predicate_counts"]), int(data["questions"])  # type: ignore[arg-type]
        )

    def add(self, question_grams: set[str], predicates: Iterable[str]) -> None:
        predicates = set(predicates)
        self.__dict__.pop("grams_by_predicate", None)  # the counts change: turn them around again when next asked
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

    def against(self, question_grams: set[str]) -> "GramAssociations":
        """`score` for many predicates against the same grams (a question's
        candidates and a hub's predicates score hundreds or thousands): the
        grams training saw, with their smoothed counts, looked up once."""
        pair_counts, gram_counts, smoothing = self.pair_counts, self.gram_counts, self.smoothing
        return GramAssociations(
            self.grams_by_predicate, {g: gram_counts[g] + smoothing for g in question_grams if g in pair_counts}
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
        return sum(against.score(name_piece_key(piece))[0] for piece in pieces) / len(pieces)


@dataclass(frozen=True)
class GramAssociations:
    """`PredicateAssociations.score` against one set of question grams (`PredicateAssociations.against`):
    the training counts by predicate and gram, and the smoothed count of each question gram training saw."""

    grams_by_predicate: Mapping[str, Mapping[str, int]]
    seen: Mapping[str, float]

    def score(self, predicate: str) -> tuple[float, float]:
        """(best association, mean of the three best) of the predicate with the grams."""
        values = sorted(self._associations(predicate), reverse=True)
        if not values:
            return 0.0, 0.0
        return values[0], sum(values[:3]) / 3.0

    def best(self, predicate: str) -> float:
        """`score(predicate)[0]`, without ordering the rest (query generation scores a hub's thousand predicates)."""
        return max(self._associations(predicate), default=0.0)

    def _associations(self, predicate: str) -> Iterator[float]:
        """The association of the predicate with each gram both sides know."""
        counts = self.grams_by_predicate.get(predicate)
        if not counts:
            return iter(())
        # The grams both sides know, found by a set intersection (it walks the smaller side) rather than a
        # loop over every question gram: a hub's thousand predicates are scored against the same grams.
        seen = self.seen
        return (counts[g] / seen[g] for g in seen.keys() & counts.keys())


@lru_cache(maxsize=1 << 16)
def _name_forms(predicate: str) -> tuple[str, frozenset[str], frozenset[str]]:
    """A predicate's matching name, its characters and its bigrams (cached: a
    hub's predicates are compared with question after question)."""
    name = matching_name(predicate)
    return name, frozenset(name), frozenset(bigrams(name))


def _similarity(predicate: str, rest: str, rest_bigrams: set[str]) -> dict[str, float]:
    name, chars, pred_bigrams = _name_forms(predicate)
    return {
        "char": len(chars & set(rest)) / len(chars) if chars else 0.0,
        "bigram": len(pred_bigrams & rest_bigrams) / len(pred_bigrams) if pred_bigrams else 0.0,
        "contained": float(bool(name) and name in rest),
        "fuzzy": fuzz.partial_ratio(name, rest) / 100.0 if name else 0.0,
    }


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
    # answer features by shape and answers (`_shared`).
    rests: dict[tuple[tuple[int, int], ...], tuple[str, set[str], set[str], GramAssociations]] = field(default_factory=dict)
    predicate_rows: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    # predicate or directed predicate -> `PredicateNeighbours.score` against the question (it does not depend on the rest)
    neighbour_scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    directed_rows: dict[tuple[str, str], tuple[float, float, float]] = field(default_factory=dict)
    name_scores: dict[tuple[str, str], float] = field(default_factory=dict)
    name_neighbours: dict[str, tuple[float, float]] = field(default_factory=dict)
    paraphrases: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    shared: dict[tuple, dict[str, float]] = field(default_factory=dict)
    linked_terms: frozenset[Term] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "linked_terms", frozenset(node.term for node in self.linked))


def _shared(context: QuestionContext, key: tuple, compute: Callable[[], dict[str, float]]) -> dict[str, float]:
    """`compute()`, once per question for each `key` (which must hold all that it depends on); never mutate the result."""
    if key not in context.shared:
        context.shared[key] = compute()
    return context.shared[key]


def candidate_features(
    context: QuestionContext, candidate: Candidate, associations: PredicateAssociations, neighbours: PredicateNeighbours,
    settings: RankingSettings, paraphrases: PredicateParaphrases | None = None,
) -> dict[str, float]:
    """The features of one candidate (all of CANDIDATE_FEATURES)."""
    text, linked = context.text, context.linked
    spans = tuple((n.start, n.end) for n in candidate.nodes)
    if spans not in context.rests:
        rest = remove_spans(text, spans)
        rest_grams = grams(rest)
        context.rests[spans] = (rest, bigrams(rest), rest_grams, associations.against(rest_grams))
    rest, rest_bigrams, rest_grams, rest_associations = context.rests[spans]
    features = dict(_shared(context, ("shape", candidate.shape.name), lambda: shape_features(candidate.shape)))
    features.update(context.cues)
    scores = [n.score for n in candidate.nodes]
    features.update(
        link_max=max(scores), link_min=min(scores), link_mean=sum(scores) / len(scores), nodes=float(len(scores)),
        coverage=sum(n.end - n.start for n in candidate.nodes) / max(len(text), 1),
        top_node=float(bool(linked) and any(n.term == linked[0].term for n in candidate.nodes)),
        node_literal=float(any(n.term.is_literal for n in candidate.nodes)),
        asked_of_earlier_node=_asked_of_earlier_node(candidate),
        de_after_nodes=_de_after_nodes(candidate, text),
    )  # fmt: skip
    used = frozenset(candidate.nodes)
    features.update(_shared(context, ("unused", used), lambda: _unused_features(used, linked, settings.strong_link)))
    features.update(_predicate_features(candidate, rest, rest_bigrams, rest_associations, associations, neighbours, context))
    if settings.name_associations:
        features.update(_name_association_features(candidate, rest, rest_grams, associations, context))
        features.update(_name_neighbour_features(candidate, context))
        features.update(_paraphrase_features(candidate, rest, paraphrases, context))
    features.update(_shared(
        context, ("explanation", rest, tuple(_path_predicates(candidate)), candidate.shape.answer_predicate_last()),
        lambda: _explanation_features(candidate, rest, rest_associations, associations, EXPLAINING_ASSOCIATION, context.explained),
    ))  # fmt: skip
    shape = shape_key(candidate.shape.name)
    features.update(_shared(context, ("shape neighbours", shape), lambda: _shape_neighbour_features(shape, neighbours, context)))
    answers = candidate.answers
    features.update(_shared(context, ("answers", answers), lambda: _answer_features(candidate, context.cues)))
    features.update(_shared(context, ("answer forms", answers), lambda: _answer_form_features(candidate, text, context.cues)))
    features.update(_shared(context, ("stated", answers), lambda: _stated_features(answers, text, context.linked_terms)))
    return features


def _asked_of_earlier_node(candidate: Candidate) -> float:
    """1 when the answer is a property of a node the question names before
    another node of the candidate (a one-hop query checked by a fact: the
    asked node is the first of its nodes), else 0. Questions name the thing
    whose property they ask last ("the opening hours of ride B in park A")."""
    if candidate.shape.family != FACT_CHECKED:
        return 0.0
    asked = candidate.nodes[0]
    return float(any(node.start > asked.start for node in candidate.nodes[1:]))


def _de_after_nodes(candidate: Candidate, text: str) -> float:
    """How many 的 the question writes after the last of the candidate's
    nodes: each one usually joins one more relation (`A的导演的妻子`, the
    spouse of film A's director, asks two hops), which a shorter path leaves unasked."""
    return float(text.count("的", max(node.end for node in candidate.nodes)))


def _unused_features(used: frozenset[LinkedNode], linked: Sequence[LinkedNode], strong_link: float) -> dict[str, float]:
    """How many strongly linked nodes a candidate using the nodes `used` leaves out
    (none of its nodes overlaps them), and the best score among them."""
    unused = [n.score for n in linked if n not in used and n.score >= strong_link and not any(n.overlaps(u) for u in used)]
    return {"unused_strong": float(len(unused)), "unused_best": max(unused, default=0.0)}


def _path_predicates(candidate: Candidate) -> list[str]:
    """The relation predicates of the path (the type predicate names no relation)."""
    return [p for p in candidate.predicates if p != TYPE_PREDICATE] or list(candidate.predicates)


def _explained_positions(predicate: str, rest: str, mask: Sequence[bool], associations: PredicateAssociations, threshold: float) -> set[int]:
    """Content positions of `rest` a predicate explains: characters of its name,
    and both characters of a bigram that meant it in training (association >= threshold)."""
    name = _name_forms(predicate)[1]
    explained = {i for i, ch in enumerate(rest) if mask[i] and ch in name}
    for i in range(len(rest) - 1):
        if mask[i] and mask[i + 1]:
            counts = associations.pair_counts.get(rest[i : i + 2])
            if counts and counts.get(predicate, 0) / (associations.gram_counts[rest[i : i + 2]] + associations.smoothing) >= threshold:
                explained.update((i, i + 1))
    return explained


# `content_mask`, cached: the candidates of a question share a few rests of it.
_content_mask = lru_cache(maxsize=1 << 10)(content_mask)

_EXPLANATION_FEATURES = ("x_explained", "x_unexplained", "x_explained_min", "x_explained_last", "x_content", "x_pair_assoc", "x_pair_prior")


def _explanation_features(
    candidate: Candidate, rest: str, rest_associations: GramAssociations, associations: PredicateAssociations, threshold: float,
    memo: dict[tuple[str, str], set[int]] | None = None,
) -> dict[str, float]:
    """How much of the question's content (what remains after the candidate's
    mentions and the asking words) the predicates of the path explain, together
    and the weakest one alone, and how well the question's wording fits the
    pair of predicates of a two-hop path."""
    mask = _content_mask(rest)
    content = sum(mask)
    predicates = [p for p in _path_predicates(candidate) if p]
    memo = {} if memo is None else memo
    by_predicate = []
    for predicate in predicates:
        if (rest, predicate) not in memo:
            memo[(rest, predicate)] = _explained_positions(predicate, rest, mask, associations, threshold)
        by_predicate.append(memo[(rest, predicate)])
    by_predicate = by_predicate or [set()]
    union = set().union(*by_predicate)
    last = by_predicate[-1] if candidate.shape.answer_predicate_last() else by_predicate[0]
    pair = pair_key(predicates) if len(predicates) == 2 else ""
    pair_assoc = rest_associations.score(pair)[0] if pair else 0.0
    return {
        "x_explained": len(union) / content if content else 1.0,
        "x_unexplained": float(content - len(union)),
        "x_explained_min": min(len(e) for e in by_predicate) / content if content else 1.0,
        "x_explained_last": len(last) / content if content else 1.0,
        "x_content": float(content),
        "x_pair_assoc": pair_assoc,
        "x_pair_prior": associations.prior(pair) if pair else 0.0,
    }


_PREDICATE_ROW = ("char", "bigram", "contained", "fuzzy", "assoc_max", "assoc_top3", "prior", "neighbour_max", "neighbour_top3")
_PREDICATE_ROW_NAMES = tuple((key, f"p_{key}_max", f"p_{key}_min", f"p_{key}_last") for key in _PREDICATE_ROW)


def _predicate_row(
    predicate: str, rest: str, rest_bigrams: set[str], rest_associations: GramAssociations, associations: PredicateAssociations,
    neighbour: tuple[float, float],
) -> dict[str, float]:
    """The features of one predicate of a path against the rest of the question
    (_PREDICATE_ROW); `neighbour` is its `PredicateNeighbours.score`."""
    row = _similarity(predicate, rest, rest_bigrams)
    row["assoc_max"], row["assoc_top3"] = rest_associations.score(predicate)
    row["prior"] = associations.prior(predicate)
    row["neighbour_max"], row["neighbour_top3"] = neighbour
    return row


def _neighbour_score(key: str, neighbours: PredicateNeighbours, context: QuestionContext) -> tuple[float, float]:
    """`neighbours.score` of a predicate or directed predicate against the question, once per question."""
    if key not in context.neighbour_scores:
        context.neighbour_scores[key] = neighbours.score(key, context.neighbour_sims)
    return context.neighbour_scores[key]


def _single_row_features(row: Mapping[str, float]) -> dict[str, float]:
    """The predicate features of a path of one predicate, which is its own max, min and last (most paths)."""
    return {name: row[key] for key, *names in _PREDICATE_ROW_NAMES for name in names}


def _predicate_features(
    candidate: Candidate,
    rest: str,
    rest_bigrams: set[str],
    rest_associations: GramAssociations,
    associations: PredicateAssociations,
    neighbours: PredicateNeighbours,
    context: QuestionContext,
) -> dict[str, float]:
    predicates = _path_predicates(candidate)
    if not predicates:
        predicates = [a.value for a in candidate.answers]
    rows = []
    for predicate in predicates:
        if (rest, predicate) not in context.predicate_rows:
            context.predicate_rows[(rest, predicate)] = _predicate_row(
                predicate, rest, rest_bigrams, rest_associations, associations, _neighbour_score(predicate, neighbours, context)
            )
        rows.append(context.predicate_rows[(rest, predicate)])
    if len(rows) == 1:
        features = dict(_shared(context, ("single row", rest, predicates[0]), lambda: _single_row_features(rows[0])))
    else:
        last = rows[-1] if candidate.shape.answer_predicate_last() else rows[0]
        features = {}
        for key, max_name, min_name, last_name in _PREDICATE_ROW_NAMES:
            values = [row[key] for row in rows]
            features[max_name] = max(values)
            features[min_name] = min(values)
            features[last_name] = last[key]
    features["p_length"] = float(len(predicates[0]))
    first = directed(predicates[0], candidate.shape.outward)
    if (rest, first) not in context.directed_rows:
        context.directed_rows[(rest, first)] = (
            rest_associations.score(first)[0], associations.prior(first), _neighbour_score(first, neighbours, context)[0]
        )
    features["p_assoc_directed"], features["p_prior_directed"], features["p_neighbour_directed"] = context.directed_rows[(rest, first)]
    return features


NAME_ASSOCIATION_FEATURES = ("p_name_assoc_max", "p_name_assoc_min", "p_name_assoc_last")
# Of those, NAME_NEIGHBOUR_FEATURES and PARAPHRASE_FEATURES, the ones also compared with the question's best candidate (see `add_relative_features`).
NAME_RELATIVE_FEATURES = (
    "p_name_assoc_max", "p_name_neighbour_best", "p_name_neighbour_vote", "p_paraphrase_name", "p_paraphrase_wording",
)  # fmt: skip


def _name_association_features(
    candidate: Candidate, rest: str, rest_grams: set[str], associations: PredicateAssociations, context: QuestionContext
) -> dict[str, float]:
    """`PredicateAssociations.name_score` of the path's predicates: the best, the weakest and the answer's."""
    predicates = _path_predicates(candidate)
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


def _name_neighbour_features(candidate: Candidate, context: QuestionContext) -> dict[str, float]:
    """`name_neighbour_scores` of the predicate that gives the answers."""
    predicates = _path_predicates(candidate)
    if not predicates:
        return dict.fromkeys(NAME_NEIGHBOUR_FEATURES, 0.0)
    predicate = predicates[-1] if candidate.shape.answer_predicate_last() else predicates[0]
    if predicate not in context.name_neighbours:
        context.name_neighbours[predicate] = name_neighbour_scores(predicate, context.nearest)
    return dict(zip(NAME_NEIGHBOUR_FEATURES, context.name_neighbours[predicate]))


PARAPHRASE_FEATURES = ("p_paraphrase_name", "p_paraphrase_wording")


def _paraphrase_features(
    candidate: Candidate, rest: str, paraphrases: PredicateParaphrases | None, context: QuestionContext
) -> dict[str, float]:
    """`PredicateParaphrases.scores` of the rest of the question and the name
    of the predicate that gives the answers (0 for a model without paraphrases)."""
    predicates = _path_predicates(candidate)
    if not predicates or paraphrases is None:
        return dict.fromkeys(PARAPHRASE_FEATURES, 0.0)
    predicate = predicates[-1] if candidate.shape.answer_predicate_last() else predicates[0]
    if (rest, predicate) not in context.paraphrases:
        context.paraphrases[(rest, predicate)] = paraphrases.scores(rest, matching_name(predicate))
    return dict(zip(PARAPHRASE_FEATURES, context.paraphrases[(rest, predicate)]))


# How similar the question is to the training questions whose gold query has
# the candidate's shape: the best one and the mean of the three best (a chain
# question reads like other chain questions).
_SHAPE_NEIGHBOUR_FEATURES = ("n_shape_best", "n_shape_top3")


def _shape_neighbour_features(shape: str, neighbours: PredicateNeighbours, context: QuestionContext) -> dict[str, float]:
    """`neighbours.score` of the shape key against the question, as _SHAPE_NEIGHBOUR_FEATURES."""
    return dict(zip(_SHAPE_NEIGHBOUR_FEATURES, neighbours.score(shape, context.neighbour_sims)))


_ANSWER_FEATURES = (
    "a_log_count", "a_none", "a_one", "a_literal", "a_numeric", "a_when_numeric", "a_quantity_numeric", "a_who_entity",
    "a_many_count",
)  # fmt: skip


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


_ANSWER_FORM_FEATURES = (
    "a_date", "a_place", "a_person", "a_when_date", "a_where_place", "a_who_person", "a_plural_many", "a_singular_one",
)  # fmt: skip


@lru_cache(maxsize=1 << 17)
def _answer_forms(answer: Term) -> tuple[bool, bool, bool]:
    """Whether the answer reads as a date (a literal), a place and a person (an entity).
    Cached: a hub's neighbours are the answers of hundreds of candidates, question after question."""
    if answer.is_literal:
        return looks_like_date(answer.value), False, False
    return False, looks_like_place(answer.value), looks_like_person(answer.value)


def _answer_form_features(candidate: Candidate, text: str, cues: Mapping[str, float]) -> dict[str, float]:
    """Answer-type fit from the answers' literal forms and names (no KB lookups,
    to keep ranking fast): dates for when, place names for where, people for
    who; and the number of answers against plural or singular wording."""
    answers = candidate.answers
    count = len(answers)
    forms = [_answer_forms(a) for a in answers]
    date = sum(form[0] for form in forms) / count if count else 0.0
    place = sum(form[1] for form in forms) / count if count else 0.0
    person = sum(form[2] for form in forms) / count if count else 0.0
    plural, singular = bool(PLURAL.search(text)), bool(SINGULAR.search(text))
    return {
        "a_date": date,
        "a_place": place,
        "a_person": person,
        "a_when_date": cues["cue_when"] * date,
        "a_where_place": cues["cue_where"] * place,
        "a_who_person": cues["cue_who"] * person,
        "a_plural_many": float(plural) * float(count > 1),
        "a_singular_one": float(singular) * float(count == 1),
    }


_STATED_FEATURES = ("a_stated",)


@lru_cache(maxsize=1 << 17)
def _answer_surface(answer: Term) -> str:
    """The answer as a question would write it: normalized, an entity without its qualifier."""
    return normalize_surface(answer.value if answer.is_literal else base_name(answer.value))


def _stated_features(answers: Sequence[Term], text: str, linked_terms: frozenset[Term]) -> dict[str, float]:
    """The share of the answers that the question itself states: among its
    `linked_terms`, or written in it (two characters or more). A question
    seldom asks for what it says, so a query answering with the question's
    own constraint (a grade, a date, a yes/no value it names) is seldom the
    one it asks."""
    if not answers:
        return {"a_stated": 0.0}
    stated = sum(answer in linked_terms or (len(surface := _answer_surface(answer)) >= 2 and surface in text) for answer in answers)
    return {"a_stated": stated / len(answers)}


RELATIVE_FEATURES = (
    "link_max", "link_mean", "p_assoc_max_max", "p_assoc_top3_max", "p_char_max", "p_bigram_max",
    "p_fuzzy_max", "p_prior_max", "coverage", "a_log_count", "p_neighbour_max_max", "p_neighbour_top3_max",
    "x_explained", "x_explained_min", "x_pair_assoc",
)  # fmt: skip


def add_relative_features(rows: Sequence[dict[str, float]], settings: RankingSettings) -> None:
    """Add, for the key features, how far each candidate stays below the best
    candidate of the same question (a pointwise model cannot see that otherwise)."""
    for name in _relative_features(settings):
        best = max((row[name] for row in rows), default=0.0)
        for row in rows:
            row[f"gap_{name}"] = best - row[name]


CANDIDATE_FEATURES: tuple[str, ...] = (
    tuple(shape.feature for shape in SHAPES)
    + tuple(f"cue_{name}" for name in CUES)
    + ("link_max", "link_min", "link_mean", "nodes", "coverage", "top_node", "node_literal", "asked_of_earlier_node", "de_after_nodes", "unused_strong", "unused_best")
    + tuple(f"p_{key}_{kind}" for key in _PREDICATE_ROW for kind in ("max", "min", "last"))
    + ("p_length", "p_assoc_directed", "p_prior_directed", "p_neighbour_directed")
    + _ANSWER_FEATURES
    + _EXPLANATION_FEATURES
    + _ANSWER_FORM_FEATURES
    + _STATED_FEATURES
    + _SHAPE_NEIGHBOUR_FEATURES
)
RANK_FEATURES: tuple[str, ...] = CANDIDATE_FEATURES + tuple(f"gap_{name}" for name in RELATIVE_FEATURES)


def _relative_features(settings: RankingSettings) -> tuple[str, ...]:
    return RELATIVE_FEATURES + (NAME_RELATIVE_FEATURES if settings.name_associations else ())


def rank_features(settings: RankingSettings) -> tuple[str, ...]:
    """The ranker's features under these settings: RANK_FEATURES, and with
    `name_associations` NAME_ASSOCIATION_FEATURES, NAME_NEIGHBOUR_FEATURES,
    PARAPHRASE_FEATURES and the gaps of NAME_RELATIVE_FEATURES."""
    if not settings.name_associations:
        return RANK_FEATURES
    return (
        RANK_FEATURES + NAME_ASSOCIATION_FEATURES + NAME_NEIGHBOUR_FEATURES + PARAPHRASE_FEATURES
        + tuple(f"gap_{name}" for name in NAME_RELATIVE_FEATURES)
    )  # fmt: skip


@dataclass
class RankerModel:
    """The ranker's trained part: association counts and the TF-IDF neighbours
    of the training questions, the scorer (None while training builds it),
    and with `ranking.name_associations` the predicate paraphrases."""

    associations: PredicateAssociations
    neighbours: PredicateNeighbours
    scorer: BoostedScorer | None = None
    paraphrases: PredicateParaphrases | None = None

    def save(self, directory: Path) -> list[str]:
        """Write the part into a model directory; return the file names."""
        text = json.dumps(self.associations.to_json(), ensure_ascii=False)
        (directory / ASSOCIATIONS_FILE).write_text(text, encoding="utf-8")
        self.neighbours.save(directory / NEIGHBOURS_FILE)
        assert self.scorer is not None, "a ranker model is saved after training"
        paraphrases = [self.paraphrases.save(directory)] if self.paraphrases is not None else []
        return [ASSOCIATIONS_FILE, NEIGHBOURS_FILE, *self.scorer.save(directory / SCORER_FILE), *paraphrases]

    @classmethod
    def load(cls, directory: Path, settings: RankingSettings) -> "RankerModel":
        data = json.loads((directory / ASSOCIATIONS_FILE).read_text(encoding="utf-8"))
        return cls(
            PredicateAssociations.from_json(data, settings.association_smoothing),
            PredicateNeighbours.load(directory / NEIGHBOURS_FILE),
            BoostedScorer.load(directory / SCORER_FILE),
            PredicateParaphrases.load(directory) if (directory / PARAPHRASES_FILE).is_file() else None,
        )


class QueryRanker:
    """Featurizes and scores the candidate queries of a question.

    `hidden_fold` (training only) hides one cross-fitting fold of the
    training questions from the neighbour similarities.
    """

    def __init__(self, model: RankerModel, settings: RankingSettings, hidden_fold: int | None = None) -> None:
        self.model = model
        self.settings = settings
        self.hidden_fold = hidden_fold

    def featurize(self, text: str, linked: Sequence[LinkedNode], candidates: Sequence[Candidate]) -> None:
        """Set the features of every candidate of the normalized question `text`."""
        sims = self.model.neighbours.similarities(remove_spans(text, ((n.start, n.end) for n in linked[:1])), self.hidden_fold)
        nearest = self.model.neighbours.nearest(sims, NAME_NEIGHBOURS) if self.settings.name_associations else ()
        context = QuestionContext(text, linked, question_cues(text), sims, nearest)
        for candidate in candidates:
            candidate.features = candidate_features(
                context, candidate, self.model.associations, self.model.neighbours, self.settings, self.model.paraphrases
            )
        add_relative_features([c.features for c in candidates], self.settings)

    def rank(self, text: str, linked: Sequence[LinkedNode], candidates: Sequence[Candidate]) -> list[tuple[float, Candidate]]:
        """Candidates with their scores, best first (ties keep generation order)."""
        assert self.model.scorer is not None, "ranking needs a trained ranker"
        self.featurize(text, linked, candidates)
        scores = self.model.scorer.score([c.features for c in candidates])
        return sorted(zip(scores, candidates), key=lambda pair: -pair[0])
