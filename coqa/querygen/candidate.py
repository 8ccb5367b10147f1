"""A candidate query (an instantiated template with the answers it would
return) and the record of a query_generation setting that cut something."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Mapping

from coqa.kb.names import Term
from coqa.shapes import Shape

if TYPE_CHECKING:  # the explanation reads CapCut without loading the linker's model stack
    from coqa.linking.linker import LinkedNode
    from coqa.templates import Template


@dataclass
class Candidate:
    """One instantiated template: its shape, bindings, the linked nodes it
    uses, its predicates in path order, and its answers (none for a one-hop
    shape whose predicate has more than answers_per_predicate; `answer_count`
    says how many the store has). `exact`: the answers are all and only those
    its query returns, so the query need not be sent to read them."""

    shape: Shape
    bindings: dict[str, Term]
    nodes: tuple[LinkedNode, ...]
    predicates: tuple[str, ...]
    answers: tuple[Term, ...]
    answer_count: int = 0  # one-hop shapes: how many answers the store has; else 0
    exact: bool = False

    def sparql(self, templates: Mapping[str, Template]) -> str:
        return templates[self.shape.name].render(self.bindings)


@dataclass
class CapCut:
    """A query_generation setting that cut something for this question:
    `kept` of the `found` predicates, answers, rows or candidates at `where`
    (a node and direction or shape, a predicate, or the whole question).
    For a row limit that was reached, `found` is the limit plus one."""

    setting: str
    where: str
    kept: int
    found: int



def sorted_terms(terms: Iterable[Term]) -> tuple[Term, ...]:
    return tuple(sorted(terms))


def deduplicate(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, tuple[tuple[str, Term], ...]]] = set()
    unique = []
    for candidate in candidates:
        key = (candidate.shape.name, tuple(sorted(candidate.bindings.items())))
        if key not in seen:
            seen.add(key)
            unique.append(candidate)
    return unique
