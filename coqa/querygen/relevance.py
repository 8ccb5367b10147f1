"""How relevant a predicate around a linked node is to the question: the share
of its name the question spells out plus its learned association with the
question's words; and the budgets that keep the most relevant first."""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Mapping, Sequence

from coqa.kb.surfaces import name_characters


def spelled_share(predicate: str, spelled: set[str]) -> float:
    """How much of the predicate's name the question spells out: the share of
    its distinct characters among `spelled`, the question's characters outside
    the mention of the node itself (0 to 1). Cheap on purpose: it only orders
    what gets expanded; the trained ranker judges the candidates. `spelled`
    comes from the normalized question, so the name is compared in the same
    form (`<ROE>` as `roe`)."""
    letters = name_characters(predicate)
    return len(letters & spelled) / len(letters) if letters else 0.0


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


def within_budget(predicates: Sequence[str], sizes: Mapping[str, int], budget: int) -> list[str]:
    """The predicates, in the given (relevance) order, whose sizes fit in what is left of `budget`."""
    fitting = []
    for predicate in predicates:
        if sizes.get(predicate, 0) <= budget:
            fitting.append(predicate)
            budget -= sizes.get(predicate, 0)
    return fitting


def first_hops_within(firsts: Sequence[str], pair_paths: Mapping[tuple[str, str], int], budget: int) -> list[str]:
    """The first hops, in the given (relevance) order, whose paths (over all
    their pairs in `pair_paths`) fit in what is left of `budget` rows."""
    paths_per_first: dict[str, int] = defaultdict(int)
    for (p1, _), count in pair_paths.items():
        paths_per_first[p1] += count
    return within_budget(firsts, paths_per_first, budget)


