"""Candidates that combine what two or three linked nodes' neighbourhoods hold
(stars), and the COUNT variants of candidates: pure functions of the
neighbourhoods, no knowledge-base reads."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping

from coqa.kb.names import Term
from coqa.linking.linker import LinkedNode
from coqa.shapes import (
    COUNT, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN,
    PREDICATE, STAR3_IN, STAR_IN_IN, STAR_OUT_IN, STAR_OUT_OUT, TYPE_PREDICATE, TYPED, Shape, shapes_of,
)  # fmt: skip
from coqa.querygen.candidate import Candidate, sorted_terms
from coqa.querygen.neighbourhood import Neighbourhood, invert_edges, neighbours_of


# The shapes `_pair` builds from two linked nodes.
PAIR_SHAPES = (STAR_IN_IN, STAR_OUT_IN, STAR_OUT_OUT, PREDICATE, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN, *shapes_of(TYPED))


def star_candidates(
    shape: Shape,
    first: LinkedNode,
    second: LinkedNode,
    edges_a: Mapping[str, set[Term]],
    edges_b: Mapping[str, set[Term]],
    ordered: bool,
) -> Iterable[Candidate]:
    """Answers linked to `first` one way and to `second` the other way
    (`edges_a`, `edges_b`: predicate -> neighbours of either node that
    way); `ordered` shapes are symmetric, so only one node order is kept."""
    if ordered and first.term.value > second.term.value:
        return
    if (first.term.is_literal and not shape.accepts_literal_first()) or (second.term.is_literal and shape.second_outward):
        return
    common = (neighbours_of(edges_a) & neighbours_of(edges_b)) - {first.term, second.term}
    preds_a, preds_b = invert_edges(edges_a, common), invert_edges(edges_b, common)
    groups: dict[tuple[str, str], set[Term]] = defaultdict(set)
    for answer in common:
        for p1 in preds_a[answer]:
            for p2 in preds_b[answer]:
                groups[(p1, p2)].add(answer)
    # Sorted: the groups were filled from sets, whose order changes with PYTHONHASHSEED,
    # and the max_candidates cut must keep the same candidates in every process.
    for (p1, p2), answers in sorted(groups.items(), key=lambda group: group[0]):
        if p1 == p2 == TYPE_PREDICATE:
            continue  # "a type both have" answers no question
        bindings = {"e1": first.term, "p1": Term.entity(p1), "e2": second.term, "p2": Term.entity(p2)}
        yield Candidate(shape, bindings, (first, second), (p1, p2), sorted_terms(answers))


def star3_candidates(trio: tuple[LinkedNode, ...], hoods: Mapping[Term, Neighbourhood]) -> Iterable[Candidate]:
    edges = [hoods[node.term].inward for node in trio]
    common = neighbours_of(edges[0]) & neighbours_of(edges[1]) & neighbours_of(edges[2])
    maps = [invert_edges(edges_of_node, common) for edges_of_node in edges]
    groups: dict[tuple[str, str, str], set[Term]] = defaultdict(set)
    for answer in common:
        for p1 in maps[0][answer]:
            for p2 in maps[1][answer]:
                for p3 in maps[2][answer]:
                    groups[(p1, p2, p3)].add(answer)
    for predicates, answers in sorted(groups.items(), key=lambda group: group[0]):
        bindings: dict[str, Term] = {}
        for i, (node, predicate) in enumerate(zip(trio, predicates), start=1):
            bindings[f"e{i}"] = node.term
            bindings[f"p{i}"] = Term.entity(predicate)
        yield Candidate(STAR3_IN, bindings, trio, predicates, sorted_terms(answers))


def count_variants(candidates: list[Candidate]) -> list[Candidate]:
    """The COUNT variants of the candidates of every shape some COUNT shape
    counts; a one-hop count is the store's, not that of the answers fetched."""
    variants: dict[str, list[Shape]] = defaultdict(list)
    for shape in shapes_of(COUNT):
        variants[shape.counts or ""].append(shape)
    return [
        Candidate(variant, c.bindings, c.nodes, c.predicates, (Term.literal(str(max(c.answer_count, len(c.answers)))),))
        for c in candidates
        for variant in variants.get(c.shape.name, ())
    ]
