"""The official metrics of CCKS COQA / CKBQA and NLPCC KBQA / DBQA, as pure
functions over answers that are already read.

Conventions shared by every metric here:
- An answer is compared as an exact string after trimming surrounding white
  space (`str.strip`), in its written form (`coqa.dataset.escape_field`: a
  tab, LF or CR inside it as `\\t`, `\\n`, `\\r`), so an answer from the
  knowledge base equals what a result file holds for it. Fields that are
  empty after trimming are not answers. An empty result line is therefore an
  empty answer set.
- A line's answers form a set, as in the official CCKS script: an answer
  listed twice counts once (in precision as well as recall). Ranked lists
  (NLPCC KBQA) keep the order of first appearance and drop repeats.
- Scores are averaged over all gold questions. A question without gold
  answers (or, in DBQA, without a correct sentence) scores 0 on every
  metric: C ∩ A is empty whatever the system says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from coqa.dataset import escape_field


def answer_list(answers: Iterable[str]) -> list[str]:
    """Distinct trimmed non-empty answers in written form, in order of first appearance."""
    seen: dict[str, None] = {}
    for answer in answers:
        answer = escape_field(answer.strip())
        if answer:
            seen.setdefault(answer, None)
    return list(seen)


def answer_set(answers: Iterable[str]) -> frozenset[str]:
    """The set of trimmed non-empty answers."""
    return frozenset(answer_list(answers))


def split_answer_line(line: str) -> list[str]:
    """The answers of one tab-separated result or gold line, distinct, in order."""
    return answer_list(line.split("\t"))


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of one question."""

    precision: float
    recall: float
    f1: float


def question_prf(given: Iterable[str], gold: Iterable[str]) -> PRF:
    """CCKS COQA per-question scores, with C the given answers and A the gold
    answers (both as sets): P = |C∩A|/|C|, R = |C∩A|/|A|, F = 2PR/(P+R);
    P = R = F = 0 when C is empty or C∩A is empty (hence also when A is empty)."""
    candidates, gold_set = answer_set(given), answer_set(gold)
    hits = len(candidates & gold_set)
    if hits == 0:
        return PRF(0.0, 0.0, 0.0)
    precision, recall = hits / len(candidates), hits / len(gold_set)
    return PRF(precision, recall, 2 * precision * recall / (precision + recall))


@dataclass(frozen=True)
class MacroScores:
    """CCKS COQA scores of a result set.

    `precision` and `recall` are the macro averages of the per-question P and R;
    `f1` is the averaged F1 of the CCKS evaluation: the mean of the
    per-question F1 values, NOT the harmonic mean of macro P and macro R
    (that one is `f1_of_macro_means`, reported only for comparison with papers
    that use it)."""

    questions: int
    precision: float
    recall: float
    f1: float

    @property
    def f1_of_macro_means(self) -> float:
        """2PR/(P+R) of macro P and macro R (not the official averaged F1)."""
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def _check_aligned(given: Sequence[object], gold: Sequence[object]) -> None:
    if len(given) != len(gold):
        raise ValueError(f"{len(given)} result lines for {len(gold)} gold questions")


def macro_scores(per_question: Sequence[PRF]) -> MacroScores:
    """Macro P, macro R and averaged F1 over per-question scores (0 when empty)."""
    count = len(per_question)
    if count == 0:
        return MacroScores(0, 0.0, 0.0, 0.0)
    return MacroScores(
        count,
        math.fsum(s.precision for s in per_question) / count,
        math.fsum(s.recall for s in per_question) / count,
        math.fsum(s.f1 for s in per_question) / count,
    )


def ccks_scores(given: Sequence[Iterable[str]], gold: Sequence[Iterable[str]]) -> MacroScores:
    """CCKS COQA macro precision, macro recall and averaged F1 (CCKS 2018-2023
    CKBQA guidelines): the per-question scores of `question_prf`, averaged over
    all gold questions. `given[i]` answers `gold[i]`; the lengths must match."""
    _check_aligned(given, gold)
    return macro_scores([question_prf(c, a) for c, a in zip(given, gold)])


# NLPCC 2016 KBQA (guidelines of the NLPCC-ICCPOL 2016 shared task on open
# domain QA, KBQA part): for each question i, C_i is the gold answer set and
# A_i the system's ranked answer list.


def nlpcc_answer_key(answer: str) -> str:
    """The form in which NLPCC KBQA compares answers, as the organisers'
    scorer does: all white space removed, lower case."""
    return "".join(answer.split()).lower()


def _nlpcc_keys(answers: Iterable[str]) -> list[str]:
    """Distinct NLPCC comparison keys of answers, in order of first appearance."""
    return answer_list(map(nlpcc_answer_key, answer_list(answers)))


def reciprocal_rank(ranked: Iterable[str], gold: Iterable[str]) -> float:
    """1/rank_i of NLPCC MRR: rank_i is the 1-based position of the first gold
    answer in the ranked list (repeats dropped); 0 when none is in the list."""
    gold_set = answer_set(gold)
    for position, answer in enumerate(answer_list(ranked), start=1):
        if answer in gold_set:
            return 1.0 / position
    return 0.0


def hit_at(ranked: Iterable[str], gold: Iterable[str], n: int) -> float:
    """δ(C_i, A_i^N) of NLPCC Accuracy@N: 1 when one of the top `n` distinct
    ranked answers is a gold answer, else 0."""
    if n < 1:
        raise ValueError(f"Accuracy@N needs N >= 1, not {n}")
    return 1.0 if answer_set(gold) & set(answer_list(ranked)[:n]) else 0.0


@dataclass(frozen=True)
class KbqaScores:
    """NLPCC KBQA scores: MRR, Accuracy@N for each N asked for, averaged F1."""

    questions: int
    mrr: float
    accuracy: dict[int, float]
    f1: float


def nlpcc_kbqa_scores(
    ranked: Sequence[Iterable[str]], gold: Sequence[Iterable[str]], ns: Sequence[int] = (1, 5)
) -> KbqaScores:
    """NLPCC 2016 KBQA metrics over ranked answer lists:
    MRR = 1/|Q| Σ 1/rank_i; Accuracy@N = 1/|Q| Σ δ(C_i, A_i^N);
    averaged F1 = 1/|Q| Σ F_i with P_i = |C_i∩A_i|/|A_i|, R_i = |C_i∩A_i|/|C_i|
    and F_i = 0 when C_i∩A_i is empty (the whole list is A_i, as a set).
    Answers compare by `nlpcc_answer_key` (white space removed, lower case).
    `ranked[i]` answers `gold[i]`; the lengths must match."""
    _check_aligned(ranked, gold)
    ranked_lists = [_nlpcc_keys(r) for r in ranked]
    gold_sets = [frozenset(_nlpcc_keys(g)) for g in gold]
    count = len(gold_sets)
    if count == 0:
        return KbqaScores(0, 0.0, {n: 0.0 for n in ns}, 0.0)
    pairs = list(zip(ranked_lists, gold_sets))
    return KbqaScores(
        count,
        math.fsum(reciprocal_rank(r, g) for r, g in pairs) / count,
        {n: math.fsum(hit_at(r, g, n) for r, g in pairs) / count for n in ns},
        math.fsum(question_prf(r, g).f1 for r, g in pairs) / count,
    )


# NLPCC 2016/2017 DBQA (document-based QA guidelines): each question comes
# with candidate sentences labelled 1 (answers the question) or 0; the system
# gives each sentence a score, and sentences are ranked by decreasing score.


def rank_labels(scores: Sequence[float], labels: Sequence[int]) -> list[int]:
    """The labels in rank order (decreasing score). Ties are broken
    pessimistically: among equal scores, wrong sentences (label 0) rank before
    correct ones, so a system cannot gain from the order of the input file."""
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores for {len(labels)} labelled sentences")
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], labels[i]))
    return [labels[i] for i in order]


def average_precision(ranked_labels: Sequence[int]) -> float:
    """AveP(C, A) = Σ_{k=1..n} P(k)·rel(k) / min(m, n), with n the number of
    ranked sentences, m the number of correct ones, P(k) the precision of the
    top k and rel(k) = 1 when sentence k is correct; 0 when min(m, n) = 0."""
    correct = sum(1 for label in ranked_labels if label)
    denominator = min(correct, len(ranked_labels))
    if denominator == 0:
        return 0.0
    hits = 0
    total = 0.0
    for k, label in enumerate(ranked_labels, start=1):
        if label:
            hits += 1
            total += hits / k
    return total / denominator


def first_correct_reciprocal(ranked_labels: Sequence[int]) -> float:
    """1/rank of the first correct sentence; 0 when there is none."""
    for position, label in enumerate(ranked_labels, start=1):
        if label:
            return 1.0 / position
    return 0.0


@dataclass(frozen=True)
class DbqaScores:
    """NLPCC DBQA scores: MRR, MAP and ACC@1."""

    questions: int
    mrr: float
    map: float
    accuracy_at_1: float


def nlpcc_dbqa_scores(groups: Sequence[tuple[Sequence[float], Sequence[int]]]) -> DbqaScores:
    """NLPCC DBQA metrics over questions given as (scores, labels) of their
    candidate sentences: MRR = 1/|Q| Σ 1/rank_i, MAP = 1/|Q| Σ AveP(C_i, A_i)
    (see `average_precision`), ACC@1 = 1/|Q| Σ δ(C_i, A_i^1) where δ = 1 when
    the top-ranked sentence is correct. Ties: see `rank_labels`."""
    ranked = [rank_labels(scores, labels) for scores, labels in groups]
    count = len(ranked)
    if count == 0:
        return DbqaScores(0, 0.0, 0.0, 0.0)
    return DbqaScores(
        count,
        math.fsum(first_correct_reciprocal(r) for r in ranked) / count,
        math.fsum(average_precision(r) for r in ranked) / count,
        math.fsum(1.0 if r and r[0] else 0.0 for r in ranked) / count,
    )
