"""A linked node's neighbourhood as query generation reads it from the
knowledge base: the predicates around it, most relevant first, with their
counts and, for those with few enough, their answers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from coqa.querygen.settings import QueryGenerationSettings
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.linking.linker import LinkedNode
from coqa.shapes import (
    DISCOVER_IN, DISCOVER_OUT, EXPAND_IN, EXPAND_OUT,
)  # fmt: skip
from coqa.templates import Template
from coqa.querygen.candidate import CapCut
from coqa.querygen.relevance import most_relevant, within_budget


@dataclass
class Neighbourhood:
    """The expanded predicates around a node, most relevant first: predicate ->
    its answers (empty when it has more than answers_per_predicate) and
    predicate -> how many there are in all. Filled once by
    `NeighbourhoodReader.neighbourhood`, then only read."""

    out: dict[str, set[Term]]
    inward: dict[str, set[Term]]
    out_counts: dict[str, int] = field(default_factory=dict)
    in_counts: dict[str, int] = field(default_factory=dict)
    # How relevant a predicate read out of (True), into (False) or beyond (None) the node is to the question.
    relevance: Callable[[str, bool | None], float] = lambda predicate, outward: 0.0


def neighbours_of(edges: Mapping[str, set[Term]]) -> set[Term]:
    """Every neighbour of predicate -> neighbours."""
    return set().union(*edges.values())


def invert_edges(edges: Mapping[str, set[Term]], among: set[Term]) -> dict[Term, set[str]]:
    """predicate -> neighbours, turned into neighbour -> predicates for the
    neighbours `among` (the answers a star shares: a hub's thousand
    neighbours are not turned around for the few it shares)."""
    result: dict[Term, set[str]] = defaultdict(set)
    for predicate, neighbours in edges.items():
        for neighbour in neighbours & among:
            result[neighbour].add(predicate)
    return result




class NeighbourhoodReader:
    """Reads what query generation needs around a node from the knowledge base,
    through the templates: the predicates and their counts, the answers of the
    most relevant ones, bounded counts."""

    def __init__(self, kb: KnowledgeBase, templates: Mapping[str, Template], limits: QueryGenerationSettings) -> None:
        self.kb = kb
        self.templates = templates
        self.limits = limits

    def select(self, name: str, **bindings: Term | int | Sequence[Term]) -> list[tuple[Term | None, ...]]:
        return self.kb.select(self.templates[name].render(bindings)).rows

    def select_by_predicate(
        self, name: str, node: Term, predicates: Sequence[str], **bindings: Term | int
    ) -> list[tuple[Term | None, ...]]:
        """The rows of template `name` for the node, whose first variable takes
        the `predicates` of its VALUES block. Through a result cache the rows
        are kept per predicate (`CachedKnowledgeBase.select_by_value`; the
        questions about a hub keep many of the same predicates), unless the
        template has a LIMIT, which makes its rows depend on all of them."""
        template = self.templates[name]
        terms = [Term.entity(p) for p in predicates]
        if not isinstance(self.kb, CachedKnowledgeBase) or "limit" in template.placeholders:
            return self.select(name, e=node, predicates=terms, **bindings)
        return self.kb.select_by_value(lambda values: template.render({"e": node, "predicates": values, **bindings}), terms)

    def predicate_counts(self, name: str, node: Term) -> dict[str, int]:
        """The store's count per predicate around the node (`discover_out`/`discover_in`)."""
        counts: dict[str, int] = {}
        for predicate, count in self.select(name, e=node):
            if predicate is not None and count is not None:
                counts[predicate.value] = int(count.value)
        return counts

    def neighbourhood(
        self, node: LinkedNode, relevance: Callable[[str, bool | None], float], cuts: list[CapCut]
    ) -> Neighbourhood:
        """Count the predicates around the node in the store, keep the most
        relevant ones, then fetch answers for those with few enough. The dicts
        hold the kept predicates in relevance order, whatever order an engine
        returns rows in."""
        out_counts = {} if node.term.is_literal else self.predicate_counts(DISCOVER_OUT, node.term)
        in_counts = self.predicate_counts(DISCOVER_IN, node.term)
        hood = Neighbourhood({}, {}, {}, {}, relevance)
        for outward, counts, template, edges, kept in (
            (True, out_counts, EXPAND_OUT, hood.out, hood.out_counts),
            (False, in_counts, EXPAND_IN, hood.inward, hood.in_counts),
        ):
            direction = "out" if outward else "in"
            chosen = most_relevant(counts, lambda p: hood.relevance(p, outward), self.limits.predicates_per_direction)  # noqa: B023 (called at once)
            if len(chosen) < len(counts):
                cuts.append(CapCut("predicates_per_direction", f"{node.term} {direction}", len(chosen), len(counts)))
            kept.update((p, counts[p]) for p in chosen)
            cap = self.limits.answers_per_predicate
            small = [p for p in chosen if counts[p] <= cap]
            fitting = within_budget(small, counts, self.limits.answers_per_node)
            if len(fitting) < len(small):
                cuts.append(CapCut("answers_per_node", f"{node.term} {direction}", len(fitting), len(small)))
            fetched = self.expand(template, node.term, fitting) if fitting else {}
            for predicate in chosen:
                edges[predicate] = fetched.get(predicate, set())
                if counts[predicate] > cap:
                    cuts.append(CapCut("answers_per_predicate", f"{node.term} {direction} {predicate}", 0, counts[predicate]))
        return hood

    def expand(self, template: str, node: Term, predicates: Sequence[str]) -> dict[str, set[Term]]:
        """All answers of each predicate (their counts are known to be small)."""
        answers: dict[str, set[Term]] = defaultdict(set)
        for predicate, answer in self.select_by_predicate(template, node, predicates):
            if predicate is not None and answer is not None:
                answers[predicate.value].add(answer)
        return answers

    def bounded_count(self, name: str, **bindings: Term | int | Sequence[Term]) -> int:
        """The single count a bounded counting template returns (no row, gStore's answer to a count of nothing: 0)."""
        rows = self.select(name, **bindings)
        return int(rows[0][0].value) if rows and rows[0][0] is not None else 0

