"""Near-synonym predicates of one node (coqa.ranking.synonyms): which one-hop
candidates are near-synonyms, the features they get, and the ranker's feature
names with the setting. All names are invented."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from coqa.config import default_settings
from coqa.kb.names import Term
from coqa.linking.linker import LinkedNode
from coqa.querygen.candidate import Candidate
from coqa.ranking.features import rank_features
from coqa.ranking.synonyms import add_synonym_features, near_synonyms, synonym_features
from coqa.shapes import CHAIN_OUT_OUT, ONE_HOP_IN, ONE_HOP_OUT

WRITER = LinkedNode(Term.entity("周八_（作家）"), 0.9, 0, 2, "周八")
OTHER = LinkedNode(Term.entity("周八_（歌手）"), 0.4, 0, 2, "周八")
TOWN, COUNTRY, BOOK = Term.entity("青城"), Term.entity("蓝国"), Term.entity("白书")


def one_hop(predicate: str, answers: tuple[Term, ...], node: LinkedNode = WRITER, outward: bool = True) -> Candidate:
    return Candidate(ONE_HOP_OUT if outward else ONE_HOP_IN, {}, (node,), (predicate,), answers)


def test_one_hop_candidates_of_one_node_sharing_an_answer_are_near_synonyms() -> None:
    candidates = [
        one_hop("出生地", (TOWN, COUNTRY)),
        one_hop("国籍", (COUNTRY,)),
        one_hop("代表作品", (BOOK,)),  # no answer in common
        one_hop("国籍", (COUNTRY,), node=OTHER),  # another node
        one_hop("籍贯", (COUNTRY,), outward=False),  # the other direction
        Candidate(CHAIN_OUT_OUT, {}, (WRITER,), ("出生地", "所属国家"), (COUNTRY,)),  # not one hop
        one_hop("祖国", ()),  # no answers
    ]
    assert near_synonyms(candidates) == [[1], [0], [], [], [], [], []]


def test_the_same_predicate_twice_is_not_its_own_near_synonym() -> None:
    assert near_synonyms([one_hop("国籍", (COUNTRY,)), one_hop("国籍", (COUNTRY, TOWN))]) == [[], []]


def test_features_say_how_far_the_best_near_synonym_fits_the_wording_better() -> None:
    candidates = [one_hop("出生地", (TOWN, COUNTRY)), one_hop("国籍", (COUNTRY,)), one_hop("故乡", (TOWN,)), one_hop("代表作品", (BOOK,))]
    bases = {"x_explained": 0.5, "p_assoc_max_last": 0.2, "p_char_last": 0.0, "p_evidence_name_last": 0.1}
    rows = [
        dict(bases),
        dict(bases, x_explained=0.9, p_evidence_name_last=0.7),
        dict(bases, x_explained=0.1, p_assoc_max_last=0.6),
        dict(bases, x_explained=1.0),
    ]
    add_synonym_features(rows, candidates, relation_evidence=True)
    first = rows[0]
    assert first["syn_count"] == pytest.approx(math.log1p(2))
    assert first["syn_above_x_explained"] == pytest.approx(0.4)  # the best of 0.9 and 0.1, above 0.5
    assert first["syn_above_p_assoc_max_last"] == pytest.approx(0.4)
    assert first["syn_above_p_char_last"] == 0.0
    assert first["syn_above_p_evidence_name_last"] == pytest.approx(0.6)
    assert rows[1]["syn_above_x_explained"] == 0.0  # its one near-synonym fits worse
    assert rows[3]["syn_count"] == 0.0 and rows[3]["syn_above_x_explained"] == 0.0  # none: the unrelated 1.0 does not count
    assert set(rows[2]) == set(bases) | set(synonym_features(True))


def test_without_relation_evidence_its_base_is_not_compared() -> None:
    rows = [{"x_explained": 0.5, "p_assoc_max_last": 0.2, "p_char_last": 0.0}]
    add_synonym_features(rows, [one_hop("国籍", (COUNTRY,))], relation_evidence=False)
    assert set(rows[0]) - {"x_explained", "p_assoc_max_last", "p_char_last"} == set(synonym_features(False))
    assert "syn_above_p_evidence_name_last" not in synonym_features(False)


def test_the_ranker_has_the_features_only_with_the_setting() -> None:
    settings = default_settings().ranking
    assert not settings.near_synonyms
    assert not set(synonym_features(False)) & set(rank_features(settings))
    on = rank_features(replace(settings, near_synonyms=True))
    assert on[-len(synonym_features(False)) :] == synonym_features(False)
