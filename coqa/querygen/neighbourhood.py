"""A linked node's neighbourhood as query generation reads it from the
knowledge base: the predicates around it, most relevant first, with their
counts and, for those with few enough, their answers."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence, TypeVar

from coqa.querygen.settings import QueryGenerationSettings
from coqa.edges import read_edges
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase, read_split
from coqa.kb.side_by_side import SideBySide
from coqa.linking.linker import LinkedNode
from coqa.shapes import (
    BATCHED_BY_LOOKUP, DISCOVER_IN, DISCOVER_OUT, EXPAND_IN, EXPAND_OUT,
)  # fmt: skip
from coqa.templates import Template
from coqa.querygen.candidate import CapCut
from coqa.querygen.relevance import most_relevant, within_budget

_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


@dataclass
class Neighbourhood:
    """The expanded predicates around a node, most relevant first: predicate ->
    its answers (empty when it has more than answers_per_predicate) and
    predicate -> how many there are in all. Filled once by
    `NeighbourhoodReader.neighbourhoods`, then only read."""

    out: dict[str, set[Term]]
    inward: dict[str, set[Term]]
    out_counts: dict[str, int] = field(default_factory=dict)
    in_counts: dict[str, int] = field(default_factory=dict)
    # How relevant a predicate read out of (True), into (False) or beyond (None) the node is to the question.
    relevance: Callable[[str, bool | None], float] = lambda predicate, outward: 0.0


def neighbours_of(edges: Mapping[str, set[Term]]) -> set[Term]:
    """Every neighbour of predicate -> neighbours."""
    return set().union(*edges.values())


def answers_by_predicate(rows: Sequence[tuple[Term | None, ...]]) -> dict[str, set[Term]]:
    """Rows (predicate, neighbour) as predicate -> its neighbours."""
    answers: dict[str, set[Term]] = defaultdict(set)
    for predicate, neighbour in rows:
        if predicate is not None and neighbour is not None:
            answers[predicate.value].add(neighbour)
    return answers


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
    most relevant ones, bounded counts. Reads that do not depend on each
    other go side by side where the knowledge base takes several queries at
    once (`parallel_queries`), in a bounded pool (`side_by_side`)."""

    def __init__(
        self, kb: KnowledgeBase, templates: Mapping[str, Template], limits: QueryGenerationSettings, nodes_per_query: int = 1
    ) -> None:
        self.kb = kb
        self.templates = templates
        self.limits = limits
        self.nodes_per_query = nodes_per_query  # 1: each node's own lookup
        self.reads = SideBySide(kb)

    def close(self) -> None:
        """Stop the pool of threads reads go side by side in, if there is one."""
        self.reads.close()

    def side_by_side(self, function: Callable[[_Task], _Result], tasks: Sequence[_Task]) -> list[_Result]:
        """`function` of each task, in order, side by side where the knowledge base takes several queries at once."""
        return self.reads.map(function, tasks)

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

    def select_by_predicate_within(
        self, name: str, node: Term, predicates: Sequence[str], limit: int
    ) -> list[tuple[Term | None, ...]] | None:
        """The rows of template `name` (a VALUES block of `predicates` and a
        `LIMIT {{limit}}`) for the node, when there are fewer than `limit`: then
        they are all its rows, the same on every engine, and through a result
        cache they are kept per predicate as `select_by_predicate` keeps them.
        None when the query reached the limit."""
        template = self.templates[name]
        terms = [Term.entity(p) for p in predicates]

        def query_for(values: Sequence[Term]) -> str:
            return template.render({"e": node, "predicates": values, "limit": limit})

        if isinstance(self.kb, CachedKnowledgeBase):
            return self.kb.select_by_value_within(query_for, terms, limit)
        rows = self.kb.select(query_for(terms)).rows
        return rows if len(rows) < limit else None

    def rows_per_node(self, name: str, nodes: Sequence[Term]) -> dict[Term, list[tuple[Term | None, ...]]]:
        """The rows of lookup `name` (a template of one node `{{e}}`) for each
        of `nodes`, read `nodes_per_query` nodes a query through its batched
        template (`coqa.shapes.BATCHED_BY_LOOKUP`, a VALUES block over the nodes) and
        split back per node: the rows each node's own query gives (entities
        and literals in separate queries). Through a result cache each node's
        rows are kept as its own query's result."""
        single, batched = self.templates[name], self.templates[BATCHED_BY_LOOKUP[name]]

        def single_for(node: Term) -> str:
            return single.render({"e": node})

        def batched_for(chunk: Sequence[Term]) -> str:
            return batched.render({"entities": chunk})

        rows: dict[Term, list[tuple[Term | None, ...]]] = {}
        # Entities and literals never share a query: Virtuoso 7.2.5 answers `VALUES ?e { <a> "b" } ?s ?p ?e`
        # for the literal only.
        for kind in (False, True):
            unique = [node for node in dict.fromkeys(nodes) if node.is_literal is kind]
            if isinstance(self.kb, CachedKnowledgeBase):
                rows.update(self.kb.select_split(batched_for, unique, single_for, projected=True, per_query=self.nodes_per_query))
            else:
                read = read_split(self.kb, batched_for, unique, single_for, projected=True, per_query=self.nodes_per_query)
                rows.update((node, result.rows) for node, result in read.items())
        return rows

    def predicate_counts(self, name: str, nodes: Sequence[Term]) -> dict[Term, dict[str, int]]:
        """The store's count per predicate around each node (`discover_out`/`discover_in`)."""
        counts: dict[Term, dict[str, int]] = {}
        for node, rows in self.rows_per_node(name, nodes).items():
            counts[node] = {p.value: int(n.value) for p, n in rows if p is not None and n is not None}
        return counts

    def neighbourhoods(
        self, nodes: Sequence[LinkedNode], relevance: Callable[[LinkedNode], Callable[[str, bool | None], float]]
    ) -> list[tuple[Neighbourhood, list[CapCut]]]:
        """Each node's neighbourhood and the cuts made reading it, in node
        order. Each node's edges one way are read whole where there are few
        (`coqa.edges`, side by side; linking read them already for an entity):
        their counts and answers are then taken from those rows. The
        predicates of the other nodes and directions are counted (one query
        per direction, the two side by side) and, node by node and direction
        by direction (side by side), the answers of the most relevant with few
        enough are fetched. The dicts hold the kept predicates in relevance
        order, whatever order an engine returns rows in."""
        tasks = [(index, outward) for index in range(len(nodes)) for outward in (True, False)]
        edges = self.side_by_side(lambda task: self._edges(nodes[task[0]].term, task[1]), tasks)
        counted = [[nodes[index].term for (index, outward), rows in zip(tasks, edges) if outward is way and rows is None] for way in (True, False)]
        out_counts, in_counts = self.side_by_side(
            lambda lookup: self.predicate_counts(*lookup), [(DISCOVER_OUT, counted[0]), (DISCOVER_IN, counted[1])]
        )
        hoods = [Neighbourhood({}, {}, {}, {}, relevance(node)) for node in nodes]

        def read(task: tuple[tuple[int, bool], list[tuple[Term | None, ...]] | None]) -> list[CapCut]:
            (index, outward), rows = task
            node = nodes[index].term
            if rows is not None:
                counts = dict(Counter(predicate.value for predicate, neighbour in rows if predicate is not None and neighbour is not None))
                answers = answers_by_predicate(rows)
                return self._direction(node, hoods[index], outward, counts, lambda predicates: {p: answers[p] for p in predicates})
            expansion = EXPAND_OUT if outward else EXPAND_IN
            counts = (out_counts if outward else in_counts).get(node, {})
            return self._direction(node, hoods[index], outward, counts, lambda predicates: self.expand(expansion, node, predicates))

        cuts = self.side_by_side(read, list(zip(tasks, edges)))
        return [(hood, cuts[2 * index] + cuts[2 * index + 1]) for index, hood in enumerate(hoods)]

    def _edges(self, node: Term, outward: bool) -> list[tuple[Term | None, ...]] | None:
        """The node's edges one way (rows predicate, neighbour) where they are
        few enough to be read whole (`coqa.edges`); None where there are more."""
        edges = read_edges(self.kb, self.templates, node, outward)
        return edges.rows if edges.complete else None

    def _direction(
        self,
        node: Term,
        hood: Neighbourhood,
        outward: bool,
        counts: Mapping[str, int],
        answers_of: Callable[[list[str]], Mapping[str, set[Term]]],
    ) -> list[CapCut]:
        """Fill one direction of the node's neighbourhood from its predicate
        counts: the most relevant predicates kept, the answers of those with
        few enough taken from `answers_of` (those predicates -> their
        answers); the cuts made."""
        cuts: list[CapCut] = []
        edges, kept = (hood.out, hood.out_counts) if outward else (hood.inward, hood.in_counts)
        direction = "out" if outward else "in"
        chosen = most_relevant(counts, lambda p: hood.relevance(p, outward), self.limits.predicates_per_direction)
        if len(chosen) < len(counts):
            cuts.append(CapCut("predicates_per_direction", f"{node} {direction}", len(chosen), len(counts)))
        kept.update((p, counts[p]) for p in chosen)
        cap = self.limits.answers_per_predicate
        small = [p for p in chosen if counts[p] <= cap]
        fitting = within_budget(small, counts, self.limits.answers_per_node)
        if len(fitting) < len(small):
            cuts.append(CapCut("answers_per_node", f"{node} {direction}", len(fitting), len(small)))
        fetched = answers_of(fitting) if fitting else {}
        for predicate in chosen:
            edges[predicate] = fetched.get(predicate, set())
            if counts[predicate] > cap:
                cuts.append(CapCut("answers_per_predicate", f"{node} {direction} {predicate}", 0, counts[predicate]))
        return cuts

    def expand(self, template: str, node: Term, predicates: Sequence[str]) -> dict[str, set[Term]]:
        """All answers of each predicate (their counts are known to be small)."""
        return answers_by_predicate(self.select_by_predicate(template, node, predicates))

    def bounded_count(self, name: str, **bindings: Term | int | Sequence[Term]) -> int:
        """The single count a bounded counting template returns (no row, gStore's answer to a count of nothing: 0)."""
        rows = self.select(name, **bindings)
        return int(rows[0][0].value) if rows and rows[0][0] is not None else 0
