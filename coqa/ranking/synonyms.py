"""Near-synonym predicates of one node, read off a question's own candidates.

A knowledge base often holds one relation of a subject under several
predicates whose values overlap without being equal (`出生地` and `国籍`,
`类型` and `分类`). Two one-hop candidates are near-synonyms when they
leave (or reach) the same linked node in the same direction with other
predicates and their answers share at least one value. The ranker gets, for
each candidate, how many near-synonyms it has and how far the best of them
is above it on the features that say how well the wording asks for a
predicate (`synonym_bases`): a predicate whose near-synonym fits the
wording better is likely the wrong one of the pair. Everything comes from
the candidates' answers, which query generation has read already: no query
and no per-predicate weight.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Sequence

from coqa.querygen.candidate import Candidate

ONE_HOP_SHAPES = frozenset({"one_hop_out", "one_hop_in"})
# The wording features compared between near-synonyms (each is a feature of every ranker row;
# with relation evidence, its score of the answer predicate's name too).
SYNONYM_BASES = ("x_explained", "p_assoc_max_last", "p_char_last")
EVIDENCE_BASE = "p_evidence_name_last"


def synonym_bases(relation_evidence: bool) -> tuple[str, ...]:
    """The features compared between near-synonyms."""
    return SYNONYM_BASES + ((EVIDENCE_BASE,) if relation_evidence else ())


def synonym_features(relation_evidence: bool) -> tuple[str, ...]:
    """The ranker features `add_synonym_features` adds."""
    return ("syn_count",) + tuple(f"syn_above_{name}" for name in synonym_bases(relation_evidence))


def near_synonyms(candidates: Sequence[Candidate]) -> list[list[int]]:
    """For each candidate, the indices of its near-synonyms among `candidates`
    (none for a candidate that is not one hop)."""
    by_node: dict[tuple[str, object], list[int]] = defaultdict(list)
    for i, candidate in enumerate(candidates):
        if candidate.shape.name in ONE_HOP_SHAPES and candidate.answers:
            by_node[(candidate.shape.name, candidate.nodes[0].term)].append(i)
    siblings: list[list[int]] = [[] for _ in candidates]
    for members in by_node.values():
        answers = {i: set(candidates[i].answers) for i in members}
        for i in members:
            siblings[i] = [
                j for j in members
                if j != i and candidates[j].predicates != candidates[i].predicates and answers[i] & answers[j]
            ]  # fmt: skip
    return siblings


def add_synonym_features(rows: Sequence[dict[str, float]], candidates: Sequence[Candidate], relation_evidence: bool) -> None:
    """Add `synonym_features(relation_evidence)` to each row (rows and candidates
    in the same order; the rows must hold the bases): `syn_count` the log of 1 + the
    near-synonyms, `syn_above_F` how far the best near-synonym's F is above
    the candidate's own (0 without near-synonyms or when none is above)."""
    for row, siblings in zip(rows, near_synonyms(candidates)):
        row["syn_count"] = math.log1p(len(siblings))
        for name in synonym_bases(relation_evidence):
            best = max((rows[j][name] for j in siblings), default=row[name])
            row[f"syn_above_{name}"] = max(best - row[name], 0.0)
