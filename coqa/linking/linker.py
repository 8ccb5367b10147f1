"""Entity linking: which KB entity (or literal value) each mention names.

Every (mention, index entry) pair becomes a link candidate with features:
mention length and position, mention2ent rank, exact-name and base-name
match, the similarity of the mention to the name (rapidfuzz; what judges a
fuzzy mention), entity degree, absolute and against the other things the
same mention may name (a prior: a short token or common word that names
many things rarely means a thing few facts are about), how well the facts
around the entity fit the rest of the question (the characters of the
predicates and types around it: what tells a hotel from a person of the same
name), overlap of the question with the entity's `_（…）`
description, type fit, whether the mention holds asking words (哪些, 什么),
how often the surface is a real mention in the training questions
(keyphraseness). The linker's trained part (`LinkerModel`:
the keyphraseness table, a pointwise scorer and optionally a listwise one)
turns features into scores and an order; `LinkedNode`s are the terms, one
per term, in that order.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from coqa.linking.model import LinkerModel
from coqa.linking.settings import LinkingSettings
from coqa.mentions.cues import ASKING_CUES, CUES, content_mask, question_cues
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.kb.mention_index import LITERAL, MENTION, NAME
from coqa.kb.surfaces import base_name, normalize_surface, qualifier
from coqa.mentions.detection import Mention
from coqa.edges import Edges, read_edges
from coqa.kb.side_by_side import SideBySide
from coqa.shapes import DISCOVER_IN, DISCOVER_OUT, ENTITY_TYPES, TYPE_PREDICATE
from coqa.templates import Template

MENTION_FEATURES = (
    "m_length", "m_share", "m_start", "m_targets", "m_nested", "m_contains", "m_quoted", "m_ner", "m_prefix",
    "m_keyphrase", "m_keyphrase_seen", "m_ascii", "m_fuzzy", "m_suffix", "m_asking",
)  # fmt: skip
TERM_FEATURES = (
    "t_rank", "t_in_mention2ent", "t_exact_name", "t_base_name", "t_literal", "t_has_description",
    "t_description_overlap", "t_name_length_ratio", "t_name_similarity",
)  # fmt: skip
# An entity's degree is counted up to this many facts: the degree feature tells
# rare from common entities, and a hub's tens of thousands of edges are not walked.
DEGREE_COUNTED = 1000
KB_FEATURES = ("t_log_degree", "t_degree_gap", "t_context", "t_context_gap", "t_person", "t_place", "t_typed", "t_who_person", "t_where_place")
LINK_FEATURES = MENTION_FEATURES + TERM_FEATURES + KB_FEATURES
_IGNORED_CHARS = set("的是了在和与及有哪些什么谁吗呢？?，,。.、 ")
_PERSON_TYPES = {"人物", "演员", "歌手", "导演", "作家", "文学家", "运动员"}
_PLACE_TYPES = {"地点", "国家", "城市", "行政区划", "景点"}


@dataclass(frozen=True)
class LinkedNode:
    """A linked term with its score and the span of the question it came from."""

    term: Term
    score: float
    start: int
    end: int
    surface: str

    def overlaps(self, other: "LinkedNode") -> bool:
        return self.start < other.end and other.start < self.end


@dataclass
class LinkCandidate:
    """A (mention, term) pair with its features, before scoring."""

    term: Term
    mention: Mention
    features: dict[str, float] = field(default_factory=dict)


def _overlap(part: str, text: str) -> float:
    chars = set(part) - _IGNORED_CHARS
    return len(chars & set(text)) / len(chars) if chars else 0.0


@dataclass
class Linking:
    """The link candidates of a question, their scores (probabilities), their
    order scores (see `LinkerModel`) and the linked nodes."""

    candidates: list[LinkCandidate]
    scores: list[float]
    order: list[float]
    linked: list[LinkedNode]


class EntityLinker:
    """Builds link candidates with features for the mentions of a question
    and scores them with its trained part."""

    def __init__(
        self,
        kb: KnowledgeBase,
        templates: Mapping[str, Template],
        model: LinkerModel,
        settings: LinkingSettings,
        reads: SideBySide | None = None,
    ) -> None:
        """`reads`: where a question's reads of its candidates' edges, types
        and hub counts go side by side (the pool of query generation, where
        the knowledge base takes several queries at once); none: one after
        the other."""
        self.kb = kb
        self.templates = templates
        self.model = model
        self.settings = settings
        self.reads = reads if reads is not None else SideBySide()

    def link(self, text: str, mentions: Sequence[Mention]) -> Linking:
        """Candidates, scores and linked nodes for the mentions of the normalized question."""
        assert self.model.scorer is not None, "linking needs a trained linker"
        candidates = self.candidates(text, mentions)
        rows = [c.features for c in candidates]
        scores = self.model.scorer.score(rows)
        order = self.model.order_scorer.score(rows) if self.model.order_scorer is not None else scores
        return Linking(candidates, scores, order, best_links(candidates, scores, order))

    def candidates(self, text: str, mentions: Sequence[Mention]) -> list[LinkCandidate]:
        """Link candidates for the mentions of the normalized question `text`."""
        pairs: dict[tuple[int, int, Term], LinkCandidate] = {}
        for mention in mentions:
            best_rank: dict[Term, int] = defaultdict(lambda: 0)
            kinds: dict[Term, set[str]] = defaultdict(set)
            for entry in mention.entries:
                term = Term.literal(entry.target) if entry.kind == LITERAL else Term.entity(entry.target)
                kinds[term].add(entry.kind)
                if entry.kind == MENTION and (best_rank[term] == 0 or entry.rank < best_rank[term]):
                    best_rank[term] = entry.rank
            ordered = sorted(kinds, key=lambda t: (best_rank[t] or 99, NAME not in kinds[t], t.value))
            mention_features = self._mention_features(text, mention, mentions, len(kinds))
            for term in ordered[: self.settings.max_targets_per_mention]:
                features = dict(mention_features)
                features.update(self._term_features(text, mention, term, kinds[term], best_rank[term]))
                pairs[(mention.start, mention.end, term)] = LinkCandidate(term, mention, features)
        result = list(pairs.values())
        self._add_kb_features(text, result)
        return result

    def _mention_features(self, text: str, mention: Mention, mentions: Sequence[Mention], targets: int) -> dict[str, float]:
        length = mention.end - mention.start
        linked, seen = self.model.keyphraseness.get(mention.surface, (0, 0))
        return {
            "m_length": float(length),
            "m_share": length / max(len(text), 1),
            "m_start": mention.start / max(len(text), 1),
            "m_targets": math.log1p(targets),
            "m_nested": float(any(o.start <= mention.start and mention.end <= o.end and o is not mention for o in mentions)),
            "m_contains": float(any(mention.start <= o.start and o.end <= mention.end and o is not mention for o in mentions)),
            "m_quoted": float("quote" in mention.sources),
            "m_ner": float("ner" in mention.sources),
            "m_prefix": float("prefix" in mention.sources),
            "m_keyphrase": (linked + 0.5) / (seen + 1.0),
            "m_keyphrase_seen": math.log1p(seen),
            "m_ascii": float(mention.surface.isascii()),
            "m_fuzzy": float("fuzzy" in mention.sources),
            "m_suffix": float("suffix" in mention.sources),
            "m_asking": float(any(CUES[cue].search(mention.surface) is not None for cue in ASKING_CUES)),
        }

    @staticmethod
    def _term_features(text: str, mention: Mention, term: Term, kinds: set[str], rank: int) -> dict[str, float]:
        normalized_name = normalize_surface(term.value)
        rest = text[: mention.start] + text[mention.end :]
        desc = qualifier(term.value)
        return {
            "t_rank": float(rank or 20),
            "t_in_mention2ent": float(MENTION in kinds),
            "t_exact_name": float(normalized_name == mention.surface),
            "t_base_name": float(normalize_surface(base_name(term.value)) == mention.surface),
            "t_literal": float(term.is_literal),
            "t_has_description": float(bool(desc)),
            "t_description_overlap": _overlap(normalize_surface(desc), rest) if desc else 0.0,
            "t_name_length_ratio": len(mention.surface) / max(len(normalized_name), 1),
            "t_name_similarity": fuzz.ratio(mention.surface, normalize_surface(base_name(term.value))) / 100.0,
        }

    def _add_kb_features(self, text: str, candidates: list[LinkCandidate]) -> None:
        entities = sorted({c.term for c in candidates if not c.term.is_literal})
        degrees: dict[Term, float] = {}
        types: dict[Term, set[str]] = {}
        around: dict[Term, set[str]] = {}  # the characters of the predicates around an entity
        if entities:
            edges = self._edges(entities)
            degrees = {entity: float(out.counted(DEGREE_COUNTED)) for entity, (out, _) in edges.items()}
            types, around = self._types_and_predicates(edges)
        log_degrees = [math.log1p(degrees.get(c.term, 0.0)) for c in candidates]
        most_by_mention = _most_per_mention(candidates, log_degrees)
        mask = content_mask(text)
        contexts = [_context_fit(text, mask, c.mention, around.get(c.term, set()) | _characters(types.get(c.term, ()))) for c in candidates]
        best_context = _most_per_mention(candidates, contexts)
        cues = question_cues(text)
        for candidate, log_degree, context in zip(candidates, log_degrees, contexts):
            term_types = types.get(candidate.term, set())
            is_person = float(bool(term_types & _PERSON_TYPES))
            is_place = float(bool(term_types & _PLACE_TYPES))
            candidate.features.update(
                {
                    "t_log_degree": log_degree,
                    "t_degree_gap": log_degree - most_by_mention[(candidate.mention.start, candidate.mention.end)],
                    "t_context": context,
                    "t_context_gap": context - best_context[(candidate.mention.start, candidate.mention.end)],
                    "t_person": is_person,
                    "t_place": is_place,
                    "t_typed": float(bool(term_types)),
                    "t_who_person": cues["cue_who"] * is_person,
                    "t_where_place": cues["cue_where"] * is_place,
                }
            )

    def _edges(self, entities: Sequence[Term]) -> dict[Term, tuple[Edges, Edges]]:
        """Each entity's edges out and in (`coqa.edges`: whole where they are
        few; query generation reads its nodes' with the same queries), side by side."""
        tasks = [(entity, outward) for entity in entities for outward in (True, False)]
        found = self.reads.map(lambda task: read_edges(self.kb, self.templates, *task), tasks)
        return {entity: (found[2 * index], found[2 * index + 1]) for index, entity in enumerate(entities)}

    def _types_and_predicates(self, edges: Mapping[Term, tuple[Edges, Edges]]) -> tuple[dict[Term, set[str]], dict[Term, set[str]]]:
        """The names of each entity's types and the characters of the
        predicates around it: from its edges where they were read whole; where
        there were too many one way (a hub), its predicates that way as query
        generation counts them (`discover_out`, `discover_in`: the result cache
        then answers query generation's count with these rows) and, for too
        many out, its types in one `types` query; those read side by side."""
        types: dict[Term, set[str]] = defaultdict(set)
        around: dict[Term, set[str]] = defaultdict(set)
        counted: list[tuple[Term, str]] = []
        for entity, (out, inward) in edges.items():
            for direction, template in ((out, DISCOVER_OUT), (inward, DISCOVER_IN)):
                if not direction.complete:
                    counted.append((entity, template))
                    continue
                for predicate, neighbour in direction.rows:
                    if predicate is not None and neighbour is not None:
                        around[entity].update(predicate.value)
                        if direction is out and predicate.value == TYPE_PREDICATE:
                            types[entity].add(base_name(neighbour.value))
        untyped = [entity for entity, (out, _) in edges.items() if not out.complete]

        def read(task: tuple[Term, str] | None) -> list[tuple[Term, str | None, str | None]]:
            """(entity, predicate, None) rows of a count, or (entity, None, type name) rows of the types."""
            if task is None:
                rows = self.kb.select(self.templates[ENTITY_TYPES].render({"entities": untyped})).rows
                return [(entity, None, base_name(type_term.value)) for entity, type_term in rows if entity is not None and type_term is not None]
            hub, template = task
            rows = self.kb.select(self.templates[template].render({"e": hub})).rows
            return [(hub, row[0].value, None) for row in rows if row[0] is not None]

        tasks: list[tuple[Term, str] | None] = [*counted, *([None] if untyped else [])]
        for found in self.reads.map(read, tasks):
            for entity, predicate_name, type_name in found:
                if predicate_name is not None:
                    around[entity].update(predicate_name)
                if type_name is not None:
                    types[entity].add(type_name)
        return types, around


def _characters(words: Iterable[str]) -> set[str]:
    return {char for word in words for char in word}


def _most_per_mention(candidates: Sequence[LinkCandidate], values: Sequence[float]) -> dict[tuple[int, int], float]:
    """The largest of `values` (one per candidate, at least 0) among the candidates of each mention span."""
    most: dict[tuple[int, int], float] = defaultdict(float)
    for candidate, value in zip(candidates, values):
        span = (candidate.mention.start, candidate.mention.end)
        most[span] = max(most[span], value)
    return most


def _context_fit(text: str, mask: Sequence[bool], mention: Mention, around: set[str]) -> float:
    """Share of the content characters of the question outside the mention
    (`mask` is the question's `content_mask`) that occur in the names of the
    predicates and types around the term: `辽阳富虹国际饭店内有行政酒廊吗`
    fits the hotel, whose facts include 行政酒廊, and not a person of the same name."""
    rest = {char for i, char in enumerate(text) if mask[i] and not mention.start <= i < mention.end}
    return len(rest & around) / len(rest) if rest else 0.0


def best_links(candidates: Sequence[LinkCandidate], scores: Sequence[float], order: Sequence[float]) -> list[LinkedNode]:
    """One LinkedNode per term, from its candidate first in `order` (one
    value per candidate, higher first) with that candidate's score, the
    terms in that order."""
    best: dict[Term, tuple[float, LinkedNode]] = {}
    for candidate, score, rank_score in zip(candidates, scores, order):
        current = best.get(candidate.term)
        if current is None or rank_score > current[0]:
            mention = candidate.mention
            best[candidate.term] = (rank_score, LinkedNode(candidate.term, float(score), mention.start, mention.end, mention.surface))
    ordered = sorted(best.values(), key=lambda pair: (-pair[0], pair[1].term))
    return [node for _, node in ordered]
