"""The features of a candidate query (`candidate_features`) and the feature
names of the ranker (`rank_features`).

Per candidate: question/predicate similarity at character and bigram level,
predicate-phrase associations learned from the training set, answer-type
cues against answer properties and literal forms, the linking scores of
the nodes it uses, its shape (from coqa.shapes) and its answer count against
plural wording; and the whole query against the whole question: how much of
the question's content (after its mentions and asking words) the path's
predicates explain, together and the weakest one, and how well the wording
fits the predicate pair of a two-hop path in training."""

from __future__ import annotations

from functools import lru_cache
from operator import itemgetter
from typing import Callable, Mapping, Sequence

from rapidfuzz import fuzz

from coqa.kb.names import Term
from coqa.kb.surfaces import matching_name
from coqa.linking.linker import LinkedNode
from coqa.mentions.cues import (
    CUES,
    asked_classes,
    content_mask,
)  # fmt: skip
from coqa.querygen.candidate import Candidate

# A question bigram explains a predicate when it meant that predicate in at
# least this share of the training questions it occurred in (smoothed).
from coqa.ranking.answer_features import (
    ANSWER_FEATURES,
    ANSWER_CLASS_FEATURES,
    ANSWER_FORM_FEATURES,
    ASKED_CLASS_FEATURES,
    SHAPE_NEIGHBOUR_FEATURES,
    STATED_FEATURES,
    answer_features,
    answer_class_features,
    answer_class_keys,
    answer_form_features,
    asked_class_features,
    shape_neighbour_features,
    stated_features,
)  # fmt: skip
from coqa.ranking.associations import GramAssociations, PredicateAssociations
from coqa.ranking.context import QuestionContext, path_predicates, shared_value
from coqa.ranking.keys import directed, pair_key, shape_key
from coqa.ranking.name_features import (
    NAME_ASSOCIATION_FEATURES,
    NAME_NEIGHBOUR_FEATURES,
    NAME_RELATIVE_FEATURES,
    PARAPHRASE_FEATURES,
    name_association_features,
    name_neighbour_features,
    paraphrase_features,
)  # fmt: skip
from coqa.ranking.neighbours import PredicateNeighbours
from coqa.ranking.relation_evidence import (
    RELATION_EVIDENCE_FEATURES,
    RELATION_EVIDENCE_RELATIVE,
    RelationEvidence,
    relation_evidence_features,
)  # fmt: skip
from coqa.ranking.paraphrase import PredicateParaphrases
from coqa.ranking.settings import RankingSettings
from coqa.ranking.wording import bigrams, grams, remove_spans
from coqa.shapes import FACT_CHECKED, SHAPES, shape_features

EXPLAINING_ASSOCIATION = 0.2


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


def candidate_features(
    context: QuestionContext, candidate: Candidate, associations: PredicateAssociations, neighbours: PredicateNeighbours,
    settings: RankingSettings, paraphrases: PredicateParaphrases | None = None, evidence: RelationEvidence | None = None,
) -> dict[str, float]:
    """The features of one candidate (all of CANDIDATE_FEATURES)."""
    text, linked = context.text, context.linked
    spans = tuple((n.start, n.end) for n in candidate.nodes)
    if spans not in context.rests:
        rest = remove_spans(text, spans)
        rest_grams = grams(rest)
        context.rests[spans] = (rest, bigrams(rest), rest_grams, associations.against(rest_grams))
    rest, rest_bigrams, rest_grams, rest_associations = context.rests[spans]
    features = dict(shared_value(context, ("shape", candidate.shape.name), lambda: shape_features(candidate.shape)))
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
    features.update(shared_value(context, ("unused", used), lambda: _unused_features(used, linked, settings.strong_link)))
    features.update(_predicate_features(candidate, rest, rest_bigrams, rest_associations, associations, neighbours, context))
    if settings.name_associations:
        features.update(name_association_features(candidate, rest, rest_grams, associations, context))
        features.update(name_neighbour_features(candidate, context))
        features.update(paraphrase_features(candidate, rest, paraphrases, context))
    if settings.relation_evidence:
        assert evidence is not None, "ranking.relation_evidence needs the model's relation evidence"
        features.update(relation_evidence_features(candidate, rest, evidence, context))
    features.update(shared_value(
        context, ("explanation", rest, tuple(path_predicates(candidate)), candidate.shape.answer_predicate_last()),
        lambda: _explanation_features(candidate, rest, rest_associations, associations, EXPLAINING_ASSOCIATION, context.explained),
    ))  # fmt: skip
    shape = shape_key(candidate.shape.name)
    features.update(shared_value(context, ("shape neighbours", shape), lambda: shape_neighbour_features(shape, neighbours, context)))
    answers = candidate.answers
    features.update(shared_value(context, ("answers", answers), lambda: answer_features(candidate, context.cues)))
    features.update(shared_value(context, ("answer forms", answers), lambda: answer_form_features(candidate, text, context.cues)))
    features.update(shared_value(context, ("stated", answers), lambda: stated_features(answers, text, context.linked_terms)))
    features.update(shared_value(context, ("asked class", answers), lambda: asked_class_features(answers, asked_classes(text))))
    features.update(shared_value(
        context, ("answer classes", rest, answers), lambda: answer_class_features(answers, _class_scorer(rest, rest_associations, context))
    ))  # fmt: skip
    return features


def _class_scorer(rest: str, rest_associations: GramAssociations, context: QuestionContext) -> Callable[[Term], float]:
    """The best association of an answer's `answer_class_keys` with the rest's grams, memoised per question, rest and answer."""
    by_answer = context.class_scores.setdefault(rest, {})

    def score(answer: Term) -> float:
        value = by_answer.get(answer)
        if value is None:
            value = by_answer[answer] = rest_associations.best_answer_class(answer_class_keys(answer))
        return value

    return score


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
    predicates = [p for p in path_predicates(candidate) if p]
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


def _pair_row_features(first: Mapping[str, float], second: Mapping[str, float], answer_last: bool) -> dict[str, float]:
    """The predicate features of a path of two predicates (most of the others):
    the same values as `max`, `min` and the answer's row over [first, second]
    (on a tie the first, as `max` and `min` keep it), without building a list per feature."""
    last = second if answer_last else first
    features = {}
    for key, max_name, min_name, last_name in _PREDICATE_ROW_NAMES:
        a, b = first[key], second[key]
        features[max_name] = b if b > a else a
        features[min_name] = b if b < a else a
        features[last_name] = last[key]
    return features


def _predicate_features(
    candidate: Candidate,
    rest: str,
    rest_bigrams: set[str],
    rest_associations: GramAssociations,
    associations: PredicateAssociations,
    neighbours: PredicateNeighbours,
    context: QuestionContext,
) -> dict[str, float]:
    predicates = path_predicates(candidate)
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
        features = dict(shared_value(context, ("single row", rest, predicates[0]), lambda: _single_row_features(rows[0])))
    elif len(rows) == 2:
        features = _pair_row_features(rows[0], rows[1], candidate.shape.answer_predicate_last())
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


RELATIVE_FEATURES = (
    "link_max", "link_mean", "p_assoc_max_max", "p_assoc_top3_max", "p_char_max", "p_bigram_max",
    "p_fuzzy_max", "p_prior_max", "coverage", "a_log_count", "p_neighbour_max_max", "p_neighbour_top3_max",
    "x_explained", "x_explained_min", "x_pair_assoc",
)  # fmt: skip


def add_relative_features(rows: Sequence[dict[str, float]], settings: RankingSettings) -> None:
    """Add, for the key features, how far each candidate stays below the best
    candidate of the same question (a pointwise model cannot see that otherwise)."""
    for name in _relative_features(settings):
        best = max(map(itemgetter(name), rows), default=0.0)
        gap = f"gap_{name}"
        for row in rows:
            row[gap] = best - row[name]


CANDIDATE_FEATURES: tuple[str, ...] = (
    tuple(shape.feature for shape in SHAPES)
    + tuple(f"cue_{name}" for name in CUES)
    + ("link_max", "link_min", "link_mean", "nodes", "coverage", "top_node", "node_literal", "asked_of_earlier_node", "de_after_nodes", "unused_strong", "unused_best")
    + tuple(f"p_{key}_{kind}" for key in _PREDICATE_ROW for kind in ("max", "min", "last"))
    + ("p_length", "p_assoc_directed", "p_prior_directed", "p_neighbour_directed")
    + ANSWER_FEATURES
    + _EXPLANATION_FEATURES
    + ANSWER_FORM_FEATURES
    + STATED_FEATURES
    + ASKED_CLASS_FEATURES
    + ANSWER_CLASS_FEATURES
    + SHAPE_NEIGHBOUR_FEATURES
)


RANK_FEATURES: tuple[str, ...] = CANDIDATE_FEATURES + tuple(f"gap_{name}" for name in RELATIVE_FEATURES)


def _relative_features(settings: RankingSettings) -> tuple[str, ...]:
    return (
        RELATIVE_FEATURES + (NAME_RELATIVE_FEATURES if settings.name_associations else ())
        + (RELATION_EVIDENCE_RELATIVE if settings.relation_evidence else ())
    )  # fmt: skip


def rank_features(settings: RankingSettings) -> tuple[str, ...]:
    """The ranker's features under these settings: RANK_FEATURES; with
    `name_associations` NAME_ASSOCIATION_FEATURES, NAME_NEIGHBOUR_FEATURES,
    PARAPHRASE_FEATURES and the gaps of NAME_RELATIVE_FEATURES; with
    `relation_evidence` RELATION_EVIDENCE_FEATURES and the gaps of RELATION_EVIDENCE_RELATIVE."""
    names = RANK_FEATURES
    if settings.name_associations:
        names += (
            NAME_ASSOCIATION_FEATURES + NAME_NEIGHBOUR_FEATURES + PARAPHRASE_FEATURES
            + tuple(f"gap_{name}" for name in NAME_RELATIVE_FEATURES)
        )  # fmt: skip
    if settings.relation_evidence:
        names += RELATION_EVIDENCE_FEATURES + tuple(f"gap_{name}" for name in RELATION_EVIDENCE_RELATIVE)
    return names
