"""The official metrics on hand-computed vectors, edge cases and properties."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coqa.evaluation.metrics import (
    PRF,
    average_precision,
    ccks_scores,
    first_correct_reciprocal,
    hit_at,
    macro_scores,
    nlpcc_dbqa_scores,
    nlpcc_kbqa_scores,
    question_prf,
    rank_labels,
    reciprocal_rank,
    split_answer_line,
)


def close(value: float, expected: F | float) -> bool:
    return value == pytest.approx(float(expected), abs=1e-12)


# CCKS COQA per question and macro


def test_partial_overlap_with_a_wrong_extra_answer():
    scores = question_prf(["<a>", "<b>", "<x>"], ["<a>", "<b>", "<c>", "<d>"])
    assert close(scores.precision, F(2, 3)) and close(scores.recall, F(1, 2)) and close(scores.f1, F(4, 7))


def test_empty_result_line_scores_zero():
    assert question_prf([], ["<a>"]) == PRF(0.0, 0.0, 0.0)
    assert question_prf(split_answer_line(""), ["<a>"]) == PRF(0.0, 0.0, 0.0)


def test_no_overlap_scores_zero():
    assert question_prf(["<x>", "<y>"], ["<a>"]) == PRF(0.0, 0.0, 0.0)


def test_duplicates_in_a_line_count_once():
    # as a list P would be 2/3; as a set it is 1/2
    scores = question_prf(["<a>", "<a>", "<x>"], ["<a>"])
    assert close(scores.precision, F(1, 2)) and close(scores.recall, 1) and close(scores.f1, F(2, 3))
    assert question_prf(["<a>", "<a>"], ["<a>", "<a>"]) == PRF(1.0, 1.0, 1.0)


def test_no_gold_answers_scores_zero_whatever_is_given():
    assert question_prf([], []) == PRF(0.0, 0.0, 0.0)
    assert question_prf(["<a>"], []) == PRF(0.0, 0.0, 0.0)


def test_answers_are_trimmed_but_otherwise_exact():
    assert question_prf([" <a> ", "<b>\r"], ["<a>", "\u3000<b>"]) == PRF(1.0, 1.0, 1.0)
    assert question_prf(['"a b"'], ['"ab"']) == PRF(0.0, 0.0, 0.0)
    assert question_prf(["<A>"], ["<a>"]) == PRF(0.0, 0.0, 0.0)


def test_split_answer_line_drops_empty_fields_and_repeats():
    assert split_answer_line("<a>\t\t <b> \t<a>\t") == ["<a>", "<b>"]
    assert split_answer_line("") == []
    assert split_answer_line(" \t ") == []


def test_macro_scores_average_per_question_values():
    scores = ccks_scores(
        [["<a>", "<b>", "<x>"], [], ["<c>"]],
        [["<a>", "<b>", "<c>", "<d>"], ["<e>"], ["<c>"]],
    )
    assert scores.questions == 3
    assert close(scores.precision, F(5, 9))  # (2/3 + 0 + 1) / 3
    assert close(scores.recall, F(1, 2))  # (1/2 + 0 + 1) / 3
    assert close(scores.f1, F(11, 21))  # (4/7 + 0 + 1) / 3: mean of per-question F1
    assert close(scores.f1_of_macro_means, F(10, 19))  # 2PR/(P+R) of 5/9 and 1/2: a different figure


def test_macro_scores_of_nothing_and_misaligned_input():
    assert macro_scores([]).f1 == 0.0
    with pytest.raises(ValueError):
        ccks_scores([["<a>"]], [["<a>"], ["<b>"]])


# NLPCC KBQA


def test_reciprocal_rank_and_accuracy_at_n():
    assert close(reciprocal_rank(["x", "a", "b"], ["a"]), F(1, 2))
    assert reciprocal_rank(["x", "y"], ["a"]) == 0.0
    assert reciprocal_rank([], ["a"]) == 0.0
    assert hit_at(["x", "a"], ["a"], 1) == 0.0
    assert hit_at(["x", "a"], ["a"], 2) == 1.0
    with pytest.raises(ValueError):
        hit_at(["a"], ["a"], 0)


def test_ranked_lists_drop_repeats_before_ranking():
    assert close(reciprocal_rank(["x", "x", "a"], ["a"]), F(1, 2))
    assert hit_at(["x", "x", "a"], ["a"], 2) == 1.0


def test_nlpcc_kbqa_scores():
    scores = nlpcc_kbqa_scores([["x", "a", "b"], ["a"], []], [["a"], ["a", "b"], ["c"]], ns=(1, 2, 5))
    assert scores.questions == 3
    assert close(scores.mrr, F(1, 2))  # (1/2 + 1 + 0) / 3
    assert close(scores.accuracy[1], F(1, 3))
    assert close(scores.accuracy[2], F(2, 3)) and close(scores.accuracy[5], F(2, 3))
    assert close(scores.f1, F(7, 18))  # (1/2 + 2/3 + 0) / 3


# NLPCC DBQA


def test_rank_labels_orders_by_decreasing_score():
    assert rank_labels([0.9, 0.5, 0.7], [0, 1, 1]) == [0, 1, 1]


def test_ties_rank_wrong_sentences_first_whatever_the_file_order():
    assert rank_labels([0.5, 0.5, 0.5], [1, 0, 0]) == [0, 0, 1]
    assert rank_labels([0.5, 0.5, 0.5], [0, 0, 1]) == [0, 0, 1]
    assert rank_labels([0.9, 0.5, 0.5, 0.1], [0, 1, 0, 1]) == [0, 0, 1, 1]
    tied = nlpcc_dbqa_scores([([0.5, 0.5, 0.5], [1, 0, 0])])
    assert close(tied.mrr, F(1, 3)) and close(tied.map, F(1, 3)) and tied.accuracy_at_1 == 0.0


def test_average_precision_divides_by_min_m_n():
    assert close(average_precision([0, 1, 1]), F(7, 12))  # (1/2 + 2/3) / min(2, 3)
    assert average_precision([1, 1]) == 1.0  # (1 + 1) / min(2, 2)
    assert average_precision([0, 0]) == 0.0  # m = 0
    assert average_precision([]) == 0.0  # n = 0


def test_nlpcc_dbqa_scores():
    scores = nlpcc_dbqa_scores([([0.9, 0.5, 0.7], [0, 1, 1]), ([0.1, 0.8], [0, 1]), ([0.3], [0])])
    assert scores.questions == 3
    assert close(scores.mrr, F(1, 2))  # (1/2 + 1 + 0) / 3
    assert close(scores.map, F(19, 36))  # (7/12 + 1 + 0) / 3
    assert close(scores.accuracy_at_1, F(1, 3))
    assert first_correct_reciprocal([0, 0, 0]) == 0.0


def test_dbqa_scores_and_labels_must_align():
    with pytest.raises(ValueError):
        rank_labels([0.1], [0, 1])


# Properties

answer = st.text(alphabet="<>\"ab甲乙 ", min_size=1, max_size=4).filter(lambda s: s.strip())
answer_lists = st.lists(answer, min_size=0, max_size=5)
gold_lists = st.lists(answer, min_size=1, max_size=5)


@settings(max_examples=100, deadline=None)
@given(st.lists(gold_lists, min_size=1, max_size=8), st.randoms())
def test_a_perfect_result_scores_one(gold, rng):
    perfect = []
    for answers in gold:
        line = [f" {a} " for a in answers] + list(answers)  # padded and repeated
        rng.shuffle(line)
        perfect.append(line)
    ccks = ccks_scores(perfect, gold)
    assert close(ccks.precision, 1) and close(ccks.recall, 1) and close(ccks.f1, 1)
    kbqa = nlpcc_kbqa_scores(gold, gold, ns=(1, 3))
    assert close(kbqa.mrr, 1) and close(kbqa.f1, 1) and all(close(v, 1) for v in kbqa.accuracy.values())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0, 1]), min_size=1, max_size=6).filter(any), min_size=1, max_size=6))
def test_a_perfect_dbqa_ranking_scores_one(label_groups):
    dbqa = nlpcc_dbqa_scores([([float(label) for label in labels], labels) for labels in label_groups])
    assert close(dbqa.mrr, 1) and close(dbqa.map, 1) and close(dbqa.accuracy_at_1, 1)


def unit(value: float) -> bool:
    return 0.0 <= value <= 1.0 + 1e-12


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(answer_lists, answer_lists), min_size=0, max_size=8))
def test_answer_metrics_stay_in_unit_interval(pairs):
    given_lines, gold = [p[0] for p in pairs], [p[1] for p in pairs]
    ccks = ccks_scores(given_lines, gold)
    kbqa = nlpcc_kbqa_scores(given_lines, gold, ns=(1, 2))
    values = [ccks.precision, ccks.recall, ccks.f1, ccks.f1_of_macro_means, kbqa.mrr, kbqa.f1, *kbqa.accuracy.values()]
    for c, a in pairs:
        per = question_prf(c, a)
        values += [per.precision, per.recall, per.f1]
        assert per.f1 <= max(per.precision, per.recall) + 1e-12
    assert all(unit(v) for v in values)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0, -2.0, 3.25]), st.sampled_from([0, 1])), max_size=6),
        min_size=0,
        max_size=6,
    )
)
def test_dbqa_metrics_stay_in_unit_interval(groups):
    scores = nlpcc_dbqa_scores([([s for s, _ in g], [label for _, label in g]) for g in groups])
    assert unit(scores.mrr) and unit(scores.map) and unit(scores.accuracy_at_1)
    for g in groups:
        ranked = rank_labels([s for s, _ in g], [label for _, label in g])
        assert unit(average_precision(ranked)) and sorted(ranked) == sorted(label for _, label in g)
