"""Query generation: candidate SPARQL queries for the linked entities.

The shapes are those of the registry (coqa.shapes), one template each in
queries/. The knowledge base is asked which predicates and paths exist
around each linked entity (the `discover_*` templates); each family of
shapes has one generator here that instantiates its shapes with what exists
(within the query_generation settings), and each candidate carries the
answers it would return, so the ranker can look at them and only the chosen
query is run again at the end.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations, permutations
from typing import Iterable, Mapping

from coqa.config import QueryGenerationSettings
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.linking import LinkedNode
from coqa.shapes import (
    CHAIN, COUNT, DISCOVER_IN, DISCOVER_OUT, ONE_HOP_IN, ONE_HOP_OUT, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN,
    PREDICATE, STAR3_IN, STAR_IN_IN, STAR_OUT_IN, STAR_OUT_OUT, TYPE_PREDICATE, TYPED, Shape, shapes_of,
)  # fmt: skip
from coqa.templates import Template


@dataclass
class Candidate:
    """One instantiated template: its shape, bindings, the linked nodes it
    uses, its predicates in path order, and its answers."""

    shape: Shape
    bindings: dict[str, Term]
    nodes: tuple[LinkedNode, ...]
    predicates: tuple[str, ...]
    answers: tuple[Term, ...]
    features: dict[str, float] = field(default_factory=dict)

    def sparql(self, templates: Mapping[str, Template]) -> str:
        return templates[self.shape.name].render(self.bindings)


@dataclass
class _Neighbourhood:
    out: dict[str, set[Term]]
    inward: dict[str, set[Term]]

    def subjects_by_node(self) -> dict[Term, set[str]]:
        """For the incoming edges: subject -> the predicates it points here with."""
        return _invert(self.inward)

    def objects_by_node(self) -> dict[Term, set[str]]:
        """For the outgoing edges: object -> the predicates that lead to it."""
        return _invert(self.out)


def _invert(edges: Mapping[str, set[Term]]) -> dict[Term, set[str]]:
    """predicate -> neighbours, turned into neighbour -> predicates."""
    result: dict[Term, set[str]] = defaultdict(set)
    for predicate, neighbours in edges.items():
        for neighbour in neighbours:
            result[neighbour].add(predicate)
    return result


class QueryGenerator:
    """Builds candidate queries for linked nodes by asking the knowledge base."""

    def __init__(self, kb: KnowledgeBase, templates: Mapping[str, Template], limits: QueryGenerationSettings) -> None:
        self.kb = kb
        self.templates = templates
        self.limits = limits

    def _discover(self, name: str, limit: int, **terms: Term) -> list[tuple[Term | None, ...]]:
        return self.kb.select(self.templates[name].render({**terms, "limit": limit})).rows

    def _neighbourhood(self, node: Term) -> _Neighbourhood:
        out: dict[str, set[Term]] = defaultdict(set)
        inward: dict[str, set[Term]] = defaultdict(set)
        if not node.is_literal:
            for predicate, obj in self._discover(DISCOVER_OUT, self.limits.discover_rows, e=node):
                if predicate is not None and obj is not None:
                    out[predicate.value].add(obj)
        for subject, predicate in self._discover(DISCOVER_IN, self.limits.discover_rows, e=node):
            if predicate is not None and subject is not None:
                inward[predicate.value].add(subject)
        return _Neighbourhood(out, inward)

    def generate(self, nodes: list[LinkedNode], count_question: bool = False) -> list[Candidate]:
        """Candidates for the linked nodes (best first); count variants only
        when the question asks for a number of things."""
        top = nodes[: self.limits.one_hop_nodes]
        hoods = {node.term: self._neighbourhood(node.term) for node in top}
        candidates: list[Candidate] = []
        for node in top:
            candidates.extend(self._one_hop(node, hoods[node.term]))
        for node in [n for n in top if not n.term.is_literal][: self.limits.chain_nodes] + [
            n for n in top if n.term.is_literal
        ][:2]:
            candidates.extend(self._chains(node))
        pairs = [(a, b) for a, b in permutations(top[: self.limits.star_nodes], 2) if not a.overlaps(b)]
        for first, second in pairs:
            candidates.extend(self._pair(first, second, hoods))
        for trio in combinations(top[: self.limits.star_nodes], 3):
            if not any(a.overlaps(b) for a, b in combinations(trio, 2)):
                candidates.extend(self._star3(trio, hoods))
        if count_question:
            candidates.extend(self._counts(candidates))
        return _deduplicate(candidates)[: self.limits.max_candidates]

    def _one_hop(self, node: LinkedNode, hood: _Neighbourhood) -> Iterable[Candidate]:
        for predicate, objects in hood.out.items():
            yield Candidate(ONE_HOP_OUT, {"e": node.term, "p": Term.entity(predicate)}, (node,), (predicate,), _sorted(objects))
        for predicate, subjects in hood.inward.items():
            yield Candidate(ONE_HOP_IN, {"e": node.term, "p": Term.entity(predicate)}, (node,), (predicate,), _sorted(subjects))

    def _chains(self, node: LinkedNode) -> Iterable[Candidate]:
        for shape in shapes_of(CHAIN):
            if node.term.is_literal and not shape.accepts_literal_first():
                continue
            paths: dict[tuple[str, str], set[Term]] = defaultdict(set)
            for p1, p2, answer in self._discover(shape.discovery, self.limits.chain_rows[shape.name], e=node.term):
                if p1 is not None and p2 is not None and answer is not None and answer != node.term:
                    paths[(p1.value, p2.value)].add(answer)
            for (p1, p2), answers in paths.items():
                bindings = {"e": node.term, "p1": Term.entity(p1), "p2": Term.entity(p2)}
                yield Candidate(shape, bindings, (node,), (p1, p2), _sorted(answers))

    def _pair(self, first: LinkedNode, second: LinkedNode, hoods: Mapping[Term, _Neighbourhood]) -> Iterable[Candidate]:
        a, b = hoods[first.term], hoods[second.term]
        yield from self._star(STAR_IN_IN, first, second, a.subjects_by_node(), b.subjects_by_node(), ordered=True)
        yield from self._star(STAR_OUT_IN, first, second, a.objects_by_node(), b.subjects_by_node(), ordered=False)
        yield from self._star(STAR_OUT_OUT, first, second, a.objects_by_node(), b.objects_by_node(), ordered=True)
        for predicate, objects in a.out.items():
            if second.term in objects:
                yield from self._linked_facts(first, second, predicate, a, b)
        if TYPE_PREDICATE in b.inward and not first.term.is_literal:
            yield from self._typed(first, second)

    def _linked_facts(
        self, first: LinkedNode, second: LinkedNode, predicate: str, hood: _Neighbourhood, second_hood: _Neighbourhood
    ) -> Iterable[Candidate]:
        """`first predicate second` holds: the relation itself may be the answer,
        or the fact may just pin down `first` (or `second`) for a one-hop question."""
        relations = tuple(Term.entity(p) for p, objs in sorted(hood.out.items()) if second.term in objs)
        if relations[0].value == predicate:
            yield Candidate(PREDICATE, {"e1": first.term, "e2": second.term}, (first, second), (), relations)
        fact = {"p0": Term.entity(predicate), "e0": second.term}
        for other, objects in hood.out.items():
            if other != predicate:
                bindings = {"e": first.term, **fact, "p": Term.entity(other)}
                yield Candidate(ONE_HOP_OUT_CHECKED, bindings, (first, second), (other, predicate), _sorted(objects))
        fact = {"p0": Term.entity(predicate), "e0": first.term}
        for other, objects in second_hood.out.items():
            bindings = {"e": second.term, **fact, "p": Term.entity(other)}
            yield Candidate(ONE_HOP_OUT_CHECKED_IN, bindings, (second, first), (other, predicate), _sorted(objects))

    def _typed(self, node: LinkedNode, type_node: LinkedNode) -> Iterable[Candidate]:
        for shape in shapes_of(TYPED):
            typed: dict[str, set[Term]] = defaultdict(set)
            for predicate, answer in self._discover(shape.discovery, self.limits.discover_rows, e=node.term, t=type_node.term):
                if predicate is not None and answer is not None:
                    typed[predicate.value].add(answer)
            for predicate, answers in typed.items():
                bindings = {"e": node.term, "p": Term.entity(predicate), "t": type_node.term}
                yield Candidate(shape, bindings, (node, type_node), (predicate, TYPE_PREDICATE), _sorted(answers))

    @staticmethod
    def _star(
        shape: Shape,
        first: LinkedNode,
        second: LinkedNode,
        preds_a: Mapping[Term, set[str]],
        preds_b: Mapping[Term, set[str]],
        ordered: bool,
    ) -> Iterable[Candidate]:
        """Answers linked to `first` one way and to `second` the other way;
        `ordered` shapes are symmetric, so only one node order is kept."""
        if ordered and first.term.value > second.term.value:
            return
        if (first.term.is_literal and not shape.accepts_literal_first()) or (second.term.is_literal and shape.second_outward):
            return
        groups: dict[tuple[str, str], set[Term]] = defaultdict(set)
        for answer in preds_a.keys() & preds_b.keys():
            if answer in (first.term, second.term):
                continue
            for p1 in preds_a[answer]:
                for p2 in preds_b[answer]:
                    groups[(p1, p2)].add(answer)
        for (p1, p2), answers in groups.items():
            if p1 == p2 == TYPE_PREDICATE:
                continue  # "a type both have" answers no question
            bindings = {"e1": first.term, "p1": Term.entity(p1), "e2": second.term, "p2": Term.entity(p2)}
            yield Candidate(shape, bindings, (first, second), (p1, p2), _sorted(answers))

    @staticmethod
    def _star3(trio: tuple[LinkedNode, ...], hoods: Mapping[Term, _Neighbourhood]) -> Iterable[Candidate]:
        maps = [hoods[node.term].subjects_by_node() for node in trio]
        groups: dict[tuple[str, str, str], set[Term]] = defaultdict(set)
        for answer in maps[0].keys() & maps[1].keys() & maps[2].keys():
            for p1 in maps[0][answer]:
                for p2 in maps[1][answer]:
                    for p3 in maps[2][answer]:
                        groups[(p1, p2, p3)].add(answer)
        for predicates, answers in groups.items():
            bindings: dict[str, Term] = {}
            for i, (node, predicate) in enumerate(zip(trio, predicates), start=1):
                bindings[f"e{i}"] = node.term
                bindings[f"p{i}"] = Term.entity(predicate)
            yield Candidate(STAR3_IN, bindings, trio, predicates, _sorted(answers))

    @staticmethod
    def _counts(candidates: list[Candidate]) -> list[Candidate]:
        """The COUNT variants of the candidates of every shape some COUNT shape counts."""
        variants: dict[str, list[Shape]] = defaultdict(list)
        for shape in shapes_of(COUNT):
            variants[shape.counts or ""].append(shape)
        return [
            Candidate(variant, c.bindings, c.nodes, c.predicates, (Term.literal(str(len(c.answers))),))
            for c in candidates
            for variant in variants.get(c.shape.name, ())
        ]


def _sorted(terms: Iterable[Term]) -> tuple[Term, ...]:
    return tuple(sorted(terms))


def _deduplicate(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, tuple[tuple[str, Term], ...]]] = set()
    unique = []
    for candidate in candidates:
        key = (candidate.shape.name, tuple(sorted(candidate.bindings.items())))
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique
