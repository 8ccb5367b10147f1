"""Query generation: candidate SPARQL queries for the linked entities.

The shapes are those of the registry (coqa.shapes), one template each in
queries/. The work per question does not grow with the degree of an entity:
the store counts the distinct predicates around each linked node
(`discover_out`/`discover_in`), the ones most relevant to the question are
kept (`node_relevance`: the predicate's name spelled out in the question plus
its learned association with the question's words), and only those are
expanded into answers (`expand_*`), two-hop paths (counted per predicate pair
first, `discover_chain_*`, then fetched for the most relevant pairs,
`fetch_chain_*`; read at once where there are few) or typed answers
(`discover_type_*`). No rows cut by a LIMIT are used (a query that reaches
its LIMIT is only a sign that there are more), so every engine gives the
same candidates. Each family of shapes has one
generator here that instantiates its shapes with what exists, and each
candidate carries the answers it would return, so the ranker can look at
them; the chosen query is run again at the end only where its answers are
not exactly those read (`Candidate.exact`). Every
query_generation setting that cut something is returned as a CapCut for the
explanation.
"""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from itertools import combinations, permutations
from typing import Callable, Iterable, Mapping, Sequence, cast

from coqa.querygen.settings import QueryGenerationSettings
from coqa.kb.base import KBError, KnowledgeBase
from coqa.kb.names import Term
from coqa.linking.linker import LinkedNode
from coqa.shapes import (
    CHAIN, CHAIN_OUT_IN, IN_DEGREE, DISCOVER_OUT, EXPAND_OUT, ONE_HOP_IN, ONE_HOP_OUT, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN,
    PREDICATE, STAR3_IN, STAR_IN_IN, STAR_IN_IN_OUT, STAR_OUT_IN, STAR_OUT_OUT, TYPE_PREDICATE, TYPED, Shape, shapes_of,
)  # fmt: skip
from coqa.templates import Template
from coqa.querygen.candidate import Candidate, CapCut, deduplicate, sorted_terms
from coqa.querygen.relevance import PredicateAssociation, first_hops_within, most_relevant, node_relevance, within_budget
from coqa.querygen.neighbourhood import Neighbourhood, NeighbourhoodReader, answers_by_predicate
from coqa.querygen.combinations import PAIR_SHAPES, count_variants, star_candidates, star3_candidates

# A typed discovery: (node, type node, typed shape, the node's predicates to read), and its result's key.
_TypedTask = tuple[Term, Term, Shape, list[str]]
_TypedKey = tuple[Term, Term, Shape]


class QueryGenerator:
    """Builds candidate queries for linked nodes by asking the knowledge base."""

    def __init__(
        self, kb: KnowledgeBase, templates: Mapping[str, Template], limits: QueryGenerationSettings, nodes_per_query: int = 1
    ) -> None:
        """`nodes_per_query`: linked nodes whose predicates are counted in one query (`NeighbourhoodReader`)."""
        self.reader = NeighbourhoodReader(kb, templates, limits, nodes_per_query)
        self.limits = limits

    def close(self) -> None:
        """Stop the pool of threads a question's reads go side by side in, if there is one."""
        self.reader.close()

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
        hoods: dict[Term, Neighbourhood] = {}
        for node, (hood, node_cuts) in zip(top, self.reader.neighbourhoods(top, lambda node: relevance[node.surface])):
            hoods[node.term] = hood
            cuts.extend(node_cuts)
        candidates: list[Candidate] = []
        for node in top:
            candidates.extend(self._one_hop(node, hoods[node.term]))
        chain_nodes = [n for n in top if not n.term.is_literal][: self.limits.chain_nodes] + [n for n in top if n.term.is_literal][:2]
        pairs = [(a, b) for a, b in permutations(top[: self.limits.star_nodes], 2) if not a.overlaps(b)]
        pairs = pairs if any(self.limits.allows(shape.name) for shape in PAIR_SHAPES) else []
        chains, typed = self._chains_and_typed_answers(chain_nodes, pairs, hoods, cuts)
        candidates.extend(chains)
        for first, second in pairs:
            candidates.extend(self._pair(first, second, hoods, typed))
        for trio in combinations(top[: self.limits.star_nodes], 3) if self.limits.allows(STAR3_IN.name) else ():
            if not any(a.overlaps(b) for a, b in combinations(trio, 2)):
                candidates.extend(star3_candidates(trio, hoods))
        if self.limits.allows(STAR_IN_IN_OUT.name):
            stars = [c for c in candidates if c.shape is STAR_IN_IN]
            candidates.extend(self._star_hops(stars, relevance, cuts))
        if count_question:
            candidates.extend(count_variants(candidates))
        unique = [candidate for candidate in deduplicate(candidates) if self.limits.allows(candidate.shape.name)]
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

    def _one_hop(self, node: LinkedNode, hood: Neighbourhood) -> Iterable[Candidate]:
        """A candidate per predicate kept around the node; its answers are exact
        when all of the predicate's neighbours were read (as many as counted)."""
        for shape, edges, counts in ((ONE_HOP_OUT, hood.out, hood.out_counts), (ONE_HOP_IN, hood.inward, hood.in_counts)):
            for predicate, neighbours in edges.items():
                bindings = {"e": node.term, "p": Term.entity(predicate)}
                count = counts[predicate]
                exact = 0 < count == len(neighbours)
                yield Candidate(shape, bindings, (node,), (predicate,), sorted_terms(neighbours), answer_count=count, exact=exact)

    def _chains_and_typed_answers(
        self,
        nodes: Sequence[LinkedNode],
        pairs: Sequence[tuple[LinkedNode, LinkedNode]],
        hoods: Mapping[Term, Neighbourhood],
        cuts: list[CapCut],
    ) -> tuple[list[Candidate], dict[_TypedKey, dict[str, set[Term]]]]:
        """The chains of every node and chain shape, and the typed answers of
        every pair (`_typed_work`). Each (node, shape) and each typed discovery
        reads the store on its own, so all of them go side by side where the
        knowledge base takes several queries at once
        (`NeighbourhoodReader.side_by_side`), the chains, which read most,
        first; candidates and cuts come in (node, shape) order either way."""
        chain_work = [
            (node, shape)
            for node in nodes
            for shape in shapes_of(CHAIN)
            if (not node.term.is_literal or shape.accepts_literal_first()) and self.limits.allows(shape.name)
        ]
        typed_work = self._typed_work(pairs, hoods)

        def chains(task: tuple[LinkedNode, Shape]) -> tuple[list[Candidate], list[CapCut]]:
            shape_cuts: list[CapCut] = []
            return list(self._chains(task[0], hoods[task[0].term], task[1], shape_cuts)), shape_cuts

        def discover(task: _TypedTask) -> dict[str, set[Term]]:
            node, type_node, shape, predicates = task
            return answers_by_predicate(self.reader.select_by_predicate(cast(str, shape.discovery), node, predicates, t=type_node))

        reads: list[Callable[[], object]] = [partial(chains, task) for task in chain_work]
        reads += [partial(discover, task) for task in typed_work]
        found = self.reader.side_by_side(lambda read: read(), reads)
        candidates: list[Candidate] = []
        for found_chains, shape_cuts in cast(list[tuple[list[Candidate], list[CapCut]]], found[: len(chain_work)]):
            candidates.extend(found_chains)
            cuts.extend(shape_cuts)
        typed_found = cast(list[dict[str, set[Term]]], found[len(chain_work) :])
        return candidates, {(node, type_node, shape): answers for (node, type_node, shape, _), answers in zip(typed_work, typed_found)}

    def _chains(self, node: LinkedNode, hood: Neighbourhood, shape: Shape, cuts: list[CapCut]) -> Iterable[Candidate]:
        """Two-hop paths of `shape` whose first predicate is among the node's most
        relevant ones with at most answers_per_predicate middle nodes: the
        store counts the paths of each predicate pair, the chain_pairs most
        relevant pairs are kept, and the paths of their first predicates that
        fit in chain_rows are fetched. Where all the paths fit in chain_rows,
        one query reads them (`_few_paths`) and they are counted here."""
        counts = hood.out_counts if shape.outward else hood.in_counts
        first = [p for p, n in counts.items() if p != TYPE_PREDICATE and n <= self.limits.answers_per_predicate]
        fitting = within_budget(first, counts, self.limits.answers_per_node)
        if len(fitting) < len(first):
            cuts.append(CapCut("answers_per_node", f"{node.term} {shape.name}", len(fitting), len(first)))
        chosen = fitting[: self.limits.chain_predicates]
        if len(chosen) < len(fitting):
            cuts.append(CapCut("chain_predicates", f"{node.term} {shape.name}", len(chosen), len(fitting)))
        if not chosen:
            return
        read = None if shape is CHAIN_OUT_IN else self._few_paths(shape, node.term, chosen)
        pair_paths = paths_per_pair(read) if read is not None else self._chain_pair_counts(shape, node.term, chosen)
        if shape is CHAIN_OUT_IN and sum(pair_paths.values()) > self.limits.chain_middle_edges:
            chosen, walked = self._first_hops_through_small_middles(node.term, chosen, cuts)
            pair_paths = self._chain_pair_counts(shape, node.term, chosen, walked=walked + 1) if chosen else {}
        eligible = [pair for pair in pair_paths if not _asks_type_of_middle(shape, pair)]
        # Each predicate's relevance once (a chain's pairs share their first and second hops).
        first_score = {p1: hood.relevance(p1, shape.outward) for p1, _ in eligible}
        second_score = {p2: hood.relevance(p2, None) for _, p2 in eligible}
        score = {pair: first_score[pair[0]] + second_score[pair[1]] for pair in eligible}
        kept = sorted(eligible, key=lambda pair: (-score[pair], pair_paths[pair], pair))[: self.limits.chain_pairs]
        if len(kept) < len(eligible):
            cuts.append(CapCut("chain_pairs", f"{node.term} {shape.name}", len(kept), len(eligible)))
        firsts = list(dict.fromkeys(p1 for p1, _ in kept))
        fetched = first_hops_within(firsts, pair_paths, self.limits.chain_rows[shape.name])
        if len(fetched) < len(firsts):
            cuts.append(CapCut(f"chain_rows.{shape.name}", str(node.term), len(fetched), len(firsts)))
        if not fetched:
            return
        path_answers = self._chain_paths(shape, node.term, fetched, set(kept), read)
        for (p1, p2), answers in sorted(path_answers.items(), key=lambda path: path[0]):
            bindings = {"e": node.term, "p1": Term.entity(p1), "p2": Term.entity(p2)}
            yield Candidate(shape, bindings, (node,), (p1, p2), sorted_terms(answers))

    def _first_hops_through_small_middles(self, node: Term, firsts: Sequence[str], cuts: list[CapCut]) -> tuple[list[str], int]:
        """The first hops of chain_out_in none of whose middle nodes has more
        than chain_middle_edges edges arriving, and how many paths they have
        in all: called when the discovery's walk reached the bound, each
        middle node's arriving edges are counted up to it."""
        bound = self.limits.chain_middle_edges
        middles = self.reader.expand(EXPAND_OUT, node, firsts)
        arriving = {y: self.reader.bounded_count(IN_DEGREE, entities=[y], limit=bound + 1) for ys in middles.values() for y in ys}
        kept = [p for p in firsts if all(arriving[y] <= bound for y in middles.get(p, ()))]
        if len(kept) < len(firsts):
            cuts.append(CapCut("chain_middle_edges", f"{node} {CHAIN_OUT_IN.name}", len(kept), len(firsts)))
        return kept, sum(arriving[y] for p in kept for y in middles.get(p, ()))

    def _chain_pair_counts(self, shape: Shape, node: Term, firsts: Sequence[str], walked: int = 0) -> dict[tuple[str, str], int]:
        """The store's count of two-hop paths per predicate pair, first hops
        among `firsts`. chain_out_in's discovery walks at most `walked` paths
        (default: one more than chain_middle_edges); its counts are complete
        only when they add up to less."""
        pair_paths: dict[tuple[str, str], int] = {}
        limit = walked or self.limits.chain_middle_edges + 1
        for p1, p2, count in self.reader.select_by_predicate(cast(str, shape.discovery), node, firsts, limit=limit):
            if p1 is not None and p2 is not None and count is not None:
                pair_paths[(p1.value, p2.value)] = int(count.value)
        return pair_paths

    def _few_paths(self, shape: Shape, node: Term, firsts: Sequence[str]) -> list[tuple[Term | None, ...]] | None:
        """All two-hop paths of `shape` with first hops among `firsts` (rows of
        its fetch template), if there are at most chain_rows of them: then one
        query gives both their counts and their answers. None when there are
        more (they are counted first then). chain_out_in does not ask: its
        paths run into middle nodes many subjects point to, and on the CCKS
        training questions they were more than chain_rows about half the
        time, where asking would cost a query for nothing."""
        return self.reader.select_by_predicate_within(cast(str, shape.fetch), node, firsts, self.limits.chain_rows[shape.name] + 1)

    def _chain_paths(
        self,
        shape: Shape,
        node: Term,
        firsts: Sequence[str],
        wanted: set[tuple[str, str]],
        paths: Sequence[tuple[Term | None, ...]] | None = None,
    ) -> dict[tuple[str, str], set[Term]]:
        """The answers of the `wanted` predicate pairs with first hops among
        `firsts`, from `paths` when they were read already (`_few_paths`), else
        fetched (their counts say they are at most chain_rows)."""
        if paths is None:
            paths = self._few_paths_counted(shape, node, firsts)
        usable = set(firsts)
        answers: dict[tuple[str, str], set[Term]] = defaultdict(set)
        for p1, p2, answer in paths:
            if p1 is not None and p2 is not None and answer is not None and answer != node:
                if p1.value in usable and (p1.value, p2.value) in wanted:
                    answers[(p1.value, p2.value)].add(answer)
        return answers

    def _few_paths_counted(self, shape: Shape, node: Term, firsts: Sequence[str]) -> list[tuple[Term | None, ...]]:
        """The paths of first hops whose paths were counted to fit in chain_rows;
        KBError if the engine gives more than it counted."""
        paths = self._few_paths(shape, node, firsts)
        if paths is None:
            raise KBError(f"the knowledge base gave more {shape.name} paths from {node} than it counted")
        return paths

    def _pair(
        self, first: LinkedNode, second: LinkedNode, hoods: Mapping[Term, Neighbourhood], typed: Mapping[_TypedKey, dict[str, set[Term]]]
    ) -> Iterable[Candidate]:
        a, b = hoods[first.term], hoods[second.term]
        yield from star_candidates(STAR_IN_IN, first, second, a.inward, b.inward, ordered=True)
        yield from star_candidates(STAR_OUT_IN, first, second, a.out, b.inward, ordered=False)
        yield from star_candidates(STAR_OUT_OUT, first, second, a.out, b.out, ordered=True)
        for predicate, objects in a.out.items():
            if second.term in objects:
                yield from self._linked_facts(first, second, predicate, a, b)
        for shape in shapes_of(TYPED):
            yield from self._typed(first, second, shape, a, typed.get((first.term, second.term, shape), {}))

    def _linked_facts(
        self, first: LinkedNode, second: LinkedNode, predicate: str, hood: Neighbourhood, second_hood: Neighbourhood
    ) -> Iterable[Candidate]:
        """`first predicate second` holds: the relation itself may be the answer,
        or the fact may just pin down `first` (or `second`) for a one-hop question
        (one that asks its type is no such question: see `_asks_type_of_middle`)."""
        relations = tuple(Term.entity(p) for p, objs in sorted(hood.out.items()) if second.term in objs)
        if relations[0].value == predicate:
            yield Candidate(PREDICATE, {"e1": first.term, "e2": second.term}, (first, second), (), relations)
        fact = {"p0": Term.entity(predicate), "e0": second.term}
        for other, objects in hood.out.items():
            if other not in (predicate, TYPE_PREDICATE):
                bindings = {"e": first.term, **fact, "p": Term.entity(other)}
                yield Candidate(ONE_HOP_OUT_CHECKED, bindings, (first, second), (other, predicate), sorted_terms(objects))
        fact = {"p0": Term.entity(predicate), "e0": first.term}
        for other, objects in second_hood.out.items():
            if other != TYPE_PREDICATE:
                bindings = {"e": second.term, **fact, "p": Term.entity(other)}
                yield Candidate(ONE_HOP_OUT_CHECKED_IN, bindings, (second, first), (other, predicate), sorted_terms(objects))

    def _typed_work(self, pairs: Sequence[tuple[LinkedNode, LinkedNode]], hoods: Mapping[Term, Neighbourhood]) -> list[_TypedTask]:
        """The typed discoveries to make: for each pair (node, type node) whose
        second is a type (it has things of its type arriving) and each typed
        shape, the node's expanded predicates, whose answers of that type the
        discovery reads."""
        work = [
            (first.term, second.term, shape, list(hoods[first.term].out_counts if shape.outward else hoods[first.term].in_counts))
            for first, second in pairs
            if TYPE_PREDICATE in hoods[second.term].in_counts and not first.term.is_literal
            for shape in shapes_of(TYPED)
        ]
        return [task for task in work if task[3]]

    def _typed(
        self, node: LinkedNode, type_node: LinkedNode, shape: Shape, hood: Neighbourhood, typed: Mapping[str, set[Term]]
    ) -> Iterable[Candidate]:
        """Answers of the node's expanded predicates that have the linked type (`_chains_and_typed_answers`)."""
        for predicate in hood.out_counts if shape.outward else hood.in_counts:
            if predicate in typed:
                bindings = {"e": node.term, "p": Term.entity(predicate), "t": type_node.term}
                yield Candidate(shape, bindings, (node, type_node), (predicate, TYPE_PREDICATE), sorted_terms(typed[predicate]))

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
        counts = self.reader.predicate_counts(DISCOVER_OUT, sorted({a for s in few for a in s.answers}))
        chosen = [(star, self._hop_predicates(star, counts, relevance[star.nodes[0].surface], cuts)) for star in few]
        wanted: dict[Term, set[str]] = defaultdict(set)
        for star, predicates in chosen:
            for middle in star.answers:
                wanted[middle].update(p for p in predicates if p in counts[middle])
        objects = {middle: self.reader.expand(EXPAND_OUT, middle, sorted(wanted[middle])) for middle in sorted(wanted) if wanted[middle]}
        hops = []
        for star, predicates in chosen:
            own = {node.term for node in star.nodes}
            for predicate in predicates:
                answers = set().union(*(objects.get(middle, {}).get(predicate, set()) for middle in star.answers)) - own
                if answers:
                    bindings = {**star.bindings, "p3": Term.entity(predicate)}
                    hops.append(Candidate(STAR_IN_IN_OUT, bindings, star.nodes, (*star.predicates, predicate), sorted_terms(answers)))
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


def paths_per_pair(paths: Iterable[tuple[Term | None, ...]]) -> dict[tuple[str, str], int]:
    """How many of the two-hop paths (rows p1, p2, answer) each predicate pair has: what the shape's discovery counts."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for p1, p2, answer in paths:
        if p1 is not None and p2 is not None and answer is not None:
            counts[(p1.value, p2.value)] += 1
    return dict(counts)


def _asks_type_of_middle(shape: Shape, pair: tuple[str, str]) -> bool:
    """Whether a chain's second hop reads the type of its unnamed middle node
    (`<e> <p> ?y . ?y <类型> ?x`). The type predicate answers one-hop
    questions only (`<e> <类型> ?x`, what kind of thing e is): a longer path
    that ends with it answers with classes (person, company) whatever its
    other hops say, and the ranker sees none of it, since the type predicate
    names no relation (`path_predicates`). Of the 5,220 CCKS training
    questions one asks it. So it is no hop of a chain, as it is no first hop,
    and a fact-checked one-hop query does not ask it either
    (`_linked_facts`). Through chain_out_in's middle, `?x <类型> ?y` keeps
    its use: the things of the class the node has."""
    return shape is not CHAIN_OUT_IN and pair[1] == TYPE_PREDICATE
