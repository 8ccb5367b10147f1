"""Query generation: candidate SPARQL queries for the linked entities.

The shapes are those of the registry (coqa.shapes), one template each in
queries/. The work per question does not grow with the degree of an entity:
the store counts the distinct predicates around each linked node
(`discover_out`/`discover_in`), the ones most relevant to the question are
kept (`node_relevance`: the predicate's name spelled out in the question plus
its learned association with the question's words), and only those are
expanded into answers (`expand_*`), two-hop paths (counted per predicate pair
first, `discover_chain_*`, then fetched for the most relevant pairs,
`fetch_chain_*`) or typed answers (`discover_type_*`). No query is cut by a
LIMIT, so every engine returns the same rows. Each family of shapes has one
generator here that instantiates its shapes with what exists, and each
candidate carries the answers it would return, so the ranker can look at
them and only the chosen query is run again at the end. Every
query_generation setting that cut something is returned as a CapCut for the
explanation.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations, permutations
from typing import Callable, Iterable, Mapping, Sequence

from coqa.config import QueryGenerationSettings
from coqa.explanation import CapCut
from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.kb.surfaces import normalize_surface
from coqa.linking.linker import LinkedNode
from coqa.shapes import (
    CHAIN, CHAIN_OUT_IN, COUNT, IN_DEGREE, DISCOVER_IN, DISCOVER_OUT, EXPAND_IN, EXPAND_OUT, ONE_HOP_IN, ONE_HOP_OUT, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN,
    PREDICATE, STAR3_IN, STAR_IN_IN, STAR_IN_IN_OUT, STAR_OUT_IN, STAR_OUT_OUT, TYPE_PREDICATE, TYPED, Shape, shapes_of,
)  # fmt: skip
from coqa.querygen.templates import Template


@dataclass
class Candidate:
    """One instantiated template: its shape, bindings, the linked nodes it
    uses, its predicates in path order, and its answers (none for a one-hop
    shape whose predicate has more than answers_per_predicate; `answer_count`
    says how many the store has)."""

    shape: Shape
    bindings: dict[str, Term]
    nodes: tuple[LinkedNode, ...]
    predicates: tuple[str, ...]
    answers: tuple[Term, ...]
    features: dict[str, float] = field(default_factory=dict)
    answer_count: int = 0  # one-hop shapes: how many answers the store has; else 0

    def sparql(self, templates: Mapping[str, Template]) -> str:
        return templates[self.shape.name].render(self.bindings)


@dataclass
class _Neighbourhood:
    """The expanded predicates around a node, most relevant first: predicate ->
    its answers (empty when it has more than answers_per_predicate) and
    predicate -> how many there are in all. Filled once by
    `QueryGenerator._neighbourhood`, then only read."""

    out: dict[str, set[Term]]
    inward: dict[str, set[Term]]
    out_counts: dict[str, int] = field(default_factory=dict)
    in_counts: dict[str, int] = field(default_factory=dict)
    # How relevant a predicate read out of (True), into (False) or beyond (None) the node is to the question.
    relevance: Callable[[str, bool | None], float] = lambda predicate, outward: 0.0


def _neighbours(edges: Mapping[str, set[Term]]) -> set[Term]:
    """Every neighbour of predicate -> neighbours."""
    return set().union(*edges.values())


def _invert(edges: Mapping[str, set[Term]], among: set[Term]) -> dict[Term, set[str]]:
    """predicate -> neighbours, turned into neighbour -> predicates for the
    neighbours `among` (the answers a star shares: a hub's thousand
    neighbours are not turned around for the few it shares)."""
    result: dict[Term, set[str]] = defaultdict(set)
    for predicate, neighbours in edges.items():
        for neighbour in neighbours & among:
            result[neighbour].add(predicate)
    return result


def spelled_share(predicate: str, spelled: set[str]) -> float:
    """How much of the predicate's name the question spells out: the share of
    its distinct characters among `spelled`, the question's characters outside
    the mention of the node itself (0 to 1). Cheap on purpose: it only orders
    what gets expanded; the trained ranker judges the candidates. `spelled`
    comes from the normalized question, so the name is compared in the same
    form (`<ROE>` as `roe`)."""
    letters = _name_letters(predicate)
    return len(letters & spelled) / len(letters) if letters else 0.0


@lru_cache(maxsize=1 << 16)
def _name_letters(predicate: str) -> frozenset[str]:
    """The distinct characters of a predicate's name as questions are normalized
    (`normalize_surface`: half width, lower case), white space left out."""
    return frozenset("".join(normalize_surface(predicate).split()))


# The association, learned from training questions, of predicates with a text
# (the question outside a node's mention): given the text, the score of a
# predicate read out of (True), into (False) or beyond (None: the second hop of
# a chain) the node, 0 when nothing was learned about them.
PredicateAssociation = Callable[[str], Callable[[str, "bool | None"], float]]


def most_relevant(counts: Mapping[str, int], score: Callable[[str], float], keep: int) -> list[str]:
    """The `keep` predicates with the highest relevance `score`; ties go to the
    predicate with fewer edges (the more specific relation), then by name."""
    return sorted(counts, key=lambda p: (-score(p), counts[p], p))[:keep]


def node_relevance(
    question: str, surface: str, association: PredicateAssociation | None
) -> Callable[[str, bool | None], float]:
    """The relevance of predicates around the node mentioned as `surface`: the
    share of the predicate's name the question spells out plus, when given,
    its learned `association` with the rest of the question (so a question
    that does not spell its predicate still finds it among a hub's thousands).
    The one memo of these scores: a hub's predicates are scored again for each
    shape and predicate pair, and nodes of the same surface share it
    (`generate_recorded`)."""
    learned = association(question.replace(surface, " ") if surface else question) if association is not None else None
    spelled = set(question) - set(surface)
    scores: dict[tuple[str, bool | None], float] = {}

    def score(predicate: str, outward: bool | None) -> float:
        key = (predicate, outward)
        if key not in scores:
            scores[key] = spelled_share(predicate, spelled) + (learned(predicate, outward) if learned is not None else 0.0)
        return scores[key]

    return score


def _within(predicates: Sequence[str], sizes: Mapping[str, int], budget: int) -> list[str]:
    """The predicates, in the given (relevance) order, whose sizes fit in what is left of `budget`."""
    fitting = []
    for predicate in predicates:
        if sizes.get(predicate, 0) <= budget:
            fitting.append(predicate)
            budget -= sizes.get(predicate, 0)
    return fitting


def _first_hops_within(firsts: Sequence[str], pair_paths: Mapping[tuple[str, str], int], budget: int) -> list[str]:
    """The first hops, in the given (relevance) order, whose paths (over all
    their pairs in `pair_paths`) fit in what is left of `budget` rows."""
    paths_per_first: dict[str, int] = defaultdict(int)
    for (p1, _), count in pair_paths.items():
        paths_per_first[p1] += count
    return _within(firsts, paths_per_first, budget)


class QueryGenerator:
    """Builds candidate queries for linked nodes by asking the knowledge base."""

    def __init__(self, kb: KnowledgeBase, templates: Mapping[str, Template], limits: QueryGenerationSettings) -> None:
        self.kb = kb
        self.templates = templates
        self.limits = limits

    def _select(self, name: str, **bindings: Term | int | Sequence[Term]) -> list[tuple[Term | None, ...]]:
        return self.kb.select(self.templates[name].render(bindings)).rows

    def _select_by_predicate(
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
            return self._select(name, e=node, predicates=terms, **bindings)
        return self.kb.select_by_value(lambda values: template.render({"e": node, "predicates": values, **bindings}), terms)

    def _predicate_counts(self, name: str, node: Term) -> dict[str, int]:
        """The store's count per predicate around the node (`discover_out`/`discover_in`)."""
        counts: dict[str, int] = {}
        for predicate, count in self._select(name, e=node):
            if predicate is not None and count is not None:
                counts[predicate.value] = int(count.value)
        return counts

    def _neighbourhood(
        self, node: LinkedNode, relevance: Callable[[str, bool | None], float], cuts: list[CapCut]
    ) -> _Neighbourhood:
        """Count the predicates around the node in the store, keep the most
        relevant ones, then fetch answers for those with few enough. The dicts
        hold the kept predicates in relevance order, whatever order an engine
        returns rows in."""
        out_counts = {} if node.term.is_literal else self._predicate_counts(DISCOVER_OUT, node.term)
        in_counts = self._predicate_counts(DISCOVER_IN, node.term)
        hood = _Neighbourhood({}, {}, {}, {}, relevance)
        for outward, counts, template, edges, kept in (
            (True, out_counts, EXPAND_OUT, hood.out, hood.out_counts),
            (False, in_counts, EXPAND_IN, hood.inward, hood.in_counts),
        ):
            direction = "out" if outward else "in"
            chosen = most_relevant(counts, lambda p, o=outward: hood.relevance(p, o), self.limits.predicates_per_direction)
            if len(chosen) < len(counts):
                cuts.append(CapCut("predicates_per_direction", f"{node.term} {direction}", len(chosen), len(counts)))
            kept.update((p, counts[p]) for p in chosen)
            cap = self.limits.answers_per_predicate
            small = [p for p in chosen if counts[p] <= cap]
            fitting = _within(small, counts, self.limits.answers_per_node)
            if len(fitting) < len(small):
                cuts.append(CapCut("answers_per_node", f"{node.term} {direction}", len(fitting), len(small)))
            fetched = self._expand(template, node.term, fitting) if fitting else {}
            for predicate in chosen:
                edges[predicate] = fetched.get(predicate, set())
                if counts[predicate] > cap:
                    cuts.append(CapCut("answers_per_predicate", f"{node.term} {direction} {predicate}", 0, counts[predicate]))
        return hood

    def _expand(self, template: str, node: Term, predicates: Sequence[str]) -> dict[str, set[Term]]:
        """All answers of each predicate (their counts are known to be small)."""
        answers: dict[str, set[Term]] = defaultdict(set)
        for predicate, answer in self._select_by_predicate(template, node, predicates):
            if predicate is not None and answer is not None:
                answers[predicate.value].add(answer)
        return answers

    def generate(
        self, nodes: list[LinkedNode], question: str = "", count_question: bool = False, association: PredicateAssociation | None = None
    ) -> list[Candidate]:
        """Candidates for the linked nodes (best first) of the normalized
        `question`; count variants only when it asks for a number of things;
        predicates chosen with the learned `association` when one is given."""
        return self.generate_recorded(nodes, question, count_question, association)[0]

    def generate_recorded(
        self, nodes: list[LinkedNode], question: str, count_question: bool = False, association: PredicateAssociation | None = None
    ) -> tuple[list[Candidate], list[CapCut]]:
        """`generate`, with the settings that cut something while generating."""
        cuts: list[CapCut] = []
        top = self._within_margin(nodes[: self.limits.one_hop_nodes], nodes, cuts)
        relevance: dict[str, Callable[[str, bool | None], float]] = {}
        for node in top:
            if node.surface not in relevance:
                relevance[node.surface] = node_relevance(question, node.surface, association)
        hoods = {node.term: self._neighbourhood(node, relevance[node.surface], cuts) for node in top}
        candidates: list[Candidate] = []
        for node in top:
            candidates.extend(self._one_hop(node, hoods[node.term]))
        for node in [n for n in top if not n.term.is_literal][: self.limits.chain_nodes] + [
            n for n in top if n.term.is_literal
        ][:2]:
            candidates.extend(self._chains(node, hoods[node.term], cuts))
        pairs = [(a, b) for a, b in permutations(top[: self.limits.star_nodes], 2) if not a.overlaps(b)]
        for first, second in pairs if any(self.limits.allows(shape.name) for shape in _PAIR_SHAPES) else ():
            candidates.extend(self._pair(first, second, hoods))
        for trio in combinations(top[: self.limits.star_nodes], 3) if self.limits.allows(STAR3_IN.name) else ():
            if not any(a.overlaps(b) for a, b in combinations(trio, 2)):
                candidates.extend(self._star3(trio, hoods))
        if self.limits.allows(STAR_IN_IN_OUT.name):
            stars = [c for c in candidates if c.shape is STAR_IN_IN]
            candidates.extend(self._star_hops(stars, relevance, cuts))
        if count_question:
            candidates.extend(self._counts(candidates))
        unique = [candidate for candidate in _deduplicate(candidates) if self.limits.allows(candidate.shape.name)]
        if len(unique) > self.limits.max_candidates:
            cuts.append(CapCut("max_candidates", "question", self.limits.max_candidates, len(unique)))
        return unique[: self.limits.max_candidates], cuts

    def _within_margin(self, top: list[LinkedNode], nodes: Sequence[LinkedNode], cuts: list[CapCut]) -> list[LinkedNode]:
        """The nodes of `top` whose link score is at least link_score_margin
        times the best score of all `nodes` of the same mention span (the best
        term of every span stays)."""
        best: dict[tuple[int, int], float] = defaultdict(float)
        for node in nodes:
            best[(node.start, node.end)] = max(best[(node.start, node.end)], node.score)
        kept = [node for node in top if node.score >= self.limits.link_score_margin * best[(node.start, node.end)]]
        if len(kept) < len(top):
            cuts.append(CapCut("link_score_margin", "question", len(kept), len(top)))
        return kept

    def _one_hop(self, node: LinkedNode, hood: _Neighbourhood) -> Iterable[Candidate]:
        for predicate, objects in hood.out.items():
            bindings = {"e": node.term, "p": Term.entity(predicate)}
            yield Candidate(ONE_HOP_OUT, bindings, (node,), (predicate,), _sorted(objects), answer_count=hood.out_counts[predicate])
        for predicate, subjects in hood.inward.items():
            bindings = {"e": node.term, "p": Term.entity(predicate)}
            yield Candidate(ONE_HOP_IN, bindings, (node,), (predicate,), _sorted(subjects), answer_count=hood.in_counts[predicate])

    def _chains(self, node: LinkedNode, hood: _Neighbourhood, cuts: list[CapCut]) -> Iterable[Candidate]:
        """Two-hop paths whose first predicate is among the node's most
        relevant ones with at most answers_per_predicate middle nodes: the
        store counts the paths of each predicate pair, the chain_pairs most
        relevant pairs are kept, and the paths of their first predicates that
        fit in chain_rows are fetched."""
        for shape in shapes_of(CHAIN):
            if (node.term.is_literal and not shape.accepts_literal_first()) or not self.limits.allows(shape.name):
                continue
            counts = hood.out_counts if shape.outward else hood.in_counts
            first = [p for p, n in counts.items() if p != TYPE_PREDICATE and n <= self.limits.answers_per_predicate]
            fitting = _within(first, counts, self.limits.answers_per_node)
            if len(fitting) < len(first):
                cuts.append(CapCut("answers_per_node", f"{node.term} {shape.name}", len(fitting), len(first)))
            chosen = fitting[: self.limits.chain_predicates]
            if len(chosen) < len(fitting):
                cuts.append(CapCut("chain_predicates", f"{node.term} {shape.name}", len(chosen), len(fitting)))
            if not chosen:
                continue
            pair_paths = self._chain_pair_counts(shape, node.term, chosen)
            if shape is CHAIN_OUT_IN and sum(pair_paths.values()) > self.limits.chain_middle_edges:
                chosen, paths = self._first_hops_through_small_middles(node.term, chosen, cuts)
                pair_paths = self._chain_pair_counts(shape, node.term, chosen, walked=paths + 1) if chosen else {}
            score = {pair: hood.relevance(pair[0], shape.outward) + hood.relevance(pair[1], None) for pair in pair_paths}
            kept = sorted(pair_paths, key=lambda pair: (-score[pair], pair_paths[pair], pair))[: self.limits.chain_pairs]
            if len(kept) < len(pair_paths):
                cuts.append(CapCut("chain_pairs", f"{node.term} {shape.name}", len(kept), len(pair_paths)))
            firsts = list(dict.fromkeys(p1 for p1, _ in kept))
            fetched = _first_hops_within(firsts, pair_paths, self.limits.chain_rows[shape.name])
            if len(fetched) < len(firsts):
                cuts.append(CapCut(f"chain_rows.{shape.name}", str(node.term), len(fetched), len(firsts)))
            if not fetched:
                continue
            paths = self._chain_paths(shape, node.term, fetched, set(kept))
            for (p1, p2), answers in sorted(paths.items(), key=lambda path: path[0]):
                bindings = {"e": node.term, "p1": Term.entity(p1), "p2": Term.entity(p2)}
                yield Candidate(shape, bindings, (node,), (p1, p2), _sorted(answers))

    def _first_hops_through_small_middles(self, node: Term, firsts: Sequence[str], cuts: list[CapCut]) -> tuple[list[str], int]:
        """The first hops of chain_out_in none of whose middle nodes has more
        than chain_middle_edges edges arriving, and how many paths they have
        in all: called when the discovery's walk reached the bound, each
        middle node's arriving edges are counted up to it."""
        bound = self.limits.chain_middle_edges
        middles = self._expand(EXPAND_OUT, node, firsts)
        arriving = {y: self._bounded_count(IN_DEGREE, entities=[y], limit=bound + 1) for ys in middles.values() for y in ys}
        kept = [p for p in firsts if all(arriving[y] <= bound for y in middles.get(p, ()))]
        if len(kept) < len(firsts):
            cuts.append(CapCut("chain_middle_edges", f"{node} {CHAIN_OUT_IN.name}", len(kept), len(firsts)))
        return kept, sum(arriving[y] for p in kept for y in middles.get(p, ()))

    def _bounded_count(self, name: str, **bindings: Term | int | Sequence[Term]) -> int:
        """The single count a bounded counting template returns (no row, gStore's answer to a count of nothing: 0)."""
        rows = self._select(name, **bindings)
        return int(rows[0][0].value) if rows and rows[0][0] is not None else 0

    def _chain_pair_counts(self, shape: Shape, node: Term, firsts: Sequence[str], walked: int = 0) -> dict[tuple[str, str], int]:
        """The store's count of two-hop paths per predicate pair, first hops
        among `firsts`. chain_out_in's discovery walks at most `walked` paths
        (default: one more than chain_middle_edges); its counts are complete
        only when they add up to less."""
        pair_paths: dict[tuple[str, str], int] = {}
        limit = walked or self.limits.chain_middle_edges + 1
        for p1, p2, count in self._select_by_predicate(shape.discovery, node, firsts, limit=limit):
            if p1 is not None and p2 is not None and count is not None:
                pair_paths[(p1.value, p2.value)] = int(count.value)
        return pair_paths

    def _chain_paths(
        self, shape: Shape, node: Term, firsts: Sequence[str], wanted: set[tuple[str, str]]
    ) -> dict[tuple[str, str], set[Term]]:
        """The answers of the `wanted` predicate pairs, fetched for their first hops `firsts`."""
        paths: dict[tuple[str, str], set[Term]] = defaultdict(set)
        for p1, p2, answer in self._select_by_predicate(shape.fetch, node, firsts):
            if p1 is not None and p2 is not None and answer is not None and answer != node:
                if (p1.value, p2.value) in wanted:
                    paths[(p1.value, p2.value)].add(answer)
        return paths

    def _pair(self, first: LinkedNode, second: LinkedNode, hoods: Mapping[Term, _Neighbourhood]) -> Iterable[Candidate]:
        a, b = hoods[first.term], hoods[second.term]
        yield from self._star(STAR_IN_IN, first, second, a.inward, b.inward, ordered=True)
        yield from self._star(STAR_OUT_IN, first, second, a.out, b.inward, ordered=False)
        yield from self._star(STAR_OUT_OUT, first, second, a.out, b.out, ordered=True)
        for predicate, objects in a.out.items():
            if second.term in objects:
                yield from self._linked_facts(first, second, predicate, a, b)
        if TYPE_PREDICATE in b.in_counts and not first.term.is_literal:
            yield from self._typed(first, second, a)

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

    def _typed(self, node: LinkedNode, type_node: LinkedNode, hood: _Neighbourhood) -> Iterable[Candidate]:
        """Answers of the node's expanded predicates that have the linked type."""
        for shape in shapes_of(TYPED):
            predicates = list(hood.out_counts if shape.outward else hood.in_counts)
            if not predicates:
                continue
            rows = self._select_by_predicate(shape.discovery, node.term, predicates, t=type_node.term)
            typed: dict[str, set[Term]] = defaultdict(set)
            for predicate, answer in rows:
                if predicate is not None and answer is not None:
                    typed[predicate.value].add(answer)
            for predicate in [p for p in predicates if p in typed]:
                bindings = {"e": node.term, "p": Term.entity(predicate), "t": type_node.term}
                yield Candidate(shape, bindings, (node, type_node), (predicate, TYPE_PREDICATE), _sorted(typed[predicate]))

    @staticmethod
    def _star(
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
        common = (_neighbours(edges_a) & _neighbours(edges_b)) - {first.term, second.term}
        preds_a, preds_b = _invert(edges_a, common), _invert(edges_b, common)
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
            yield Candidate(shape, bindings, (first, second), (p1, p2), _sorted(answers))

    def _star_hops(
        self, stars: Sequence[Candidate], relevance: Mapping[str, Callable[[str, bool | None], float]], cuts: list[CapCut]
    ) -> list[Candidate]:
        """star_in_in_out: from the stars whose constraints pin down at most
        star_hop_middles entities, one hop more. The store counts the
        predicates leaving each of those entities (`discover_out`, as for a
        linked node), each star keeps its star_hop_predicates most relevant
        ones, and their objects are fetched (`expand_out`). A hop back to a
        star's own linked node is no answer."""
        pinned = [s for s in stars if s.answers and not any(a.is_literal for a in s.answers)]
        few = [s for s in pinned if len(s.answers) <= self.limits.star_hop_middles]
        if len(few) < len(pinned):
            cuts.append(CapCut("star_hop_middles", "question", len(few), len(pinned)))
        counts = {middle: self._predicate_counts(DISCOVER_OUT, middle) for middle in sorted({a for s in few for a in s.answers})}
        chosen = [(star, self._hop_predicates(star, counts, relevance[star.nodes[0].surface], cuts)) for star in few]
        wanted: dict[Term, set[str]] = defaultdict(set)
        for star, predicates in chosen:
            for middle in star.answers:
                wanted[middle].update(p for p in predicates if p in counts[middle])
        objects = {middle: self._expand(EXPAND_OUT, middle, sorted(wanted[middle])) for middle in sorted(wanted) if wanted[middle]}
        hops = []
        for star, predicates in chosen:
            own = {node.term for node in star.nodes}
            for predicate in predicates:
                answers = set().union(*(objects.get(middle, {}).get(predicate, set()) for middle in star.answers)) - own
                if answers:
                    bindings = {**star.bindings, "p3": Term.entity(predicate)}
                    hops.append(Candidate(STAR_IN_IN_OUT, bindings, star.nodes, (*star.predicates, predicate), _sorted(answers)))
        return hops

    def _hop_predicates(
        self, star: Candidate, counts: Mapping[Term, Mapping[str, int]], relevance: Callable[[str, bool | None], float], cuts: list[CapCut]
    ) -> list[str]:
        """The star_hop_predicates most relevant predicates leaving the star's
        answers (read beyond its first node), those with at most
        answers_per_predicate objects over all its answers; neither a type nor
        the star's own two predicates (which lead back to its linked nodes)."""
        totals: dict[str, int] = defaultdict(int)
        for middle in star.answers:
            for predicate, count in counts.get(middle, {}).items():
                totals[predicate] += count
        skipped = {TYPE_PREDICATE, *star.predicates}
        usable = {p: n for p, n in totals.items() if p not in skipped and n <= self.limits.answers_per_predicate}
        chosen = most_relevant(usable, lambda p: relevance(p, None), self.limits.star_hop_predicates)
        if len(chosen) < len(usable):
            where = f"{star.nodes[0].term} {star.nodes[1].term} {STAR_IN_IN_OUT.name}"
            cuts.append(CapCut("star_hop_predicates", where, len(chosen), len(usable)))
        return chosen

    @staticmethod
    def _star3(trio: tuple[LinkedNode, ...], hoods: Mapping[Term, _Neighbourhood]) -> Iterable[Candidate]:
        edges = [hoods[node.term].inward for node in trio]
        common = _neighbours(edges[0]) & _neighbours(edges[1]) & _neighbours(edges[2])
        maps = [_invert(edges_of_node, common) for edges_of_node in edges]
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
            yield Candidate(STAR3_IN, bindings, trio, predicates, _sorted(answers))

    @staticmethod
    def _counts(candidates: list[Candidate]) -> list[Candidate]:
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


# The shapes `_pair` builds from two linked nodes.
_PAIR_SHAPES = (STAR_IN_IN, STAR_OUT_IN, STAR_OUT_OUT, PREDICATE, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN, *shapes_of(TYPED))


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
