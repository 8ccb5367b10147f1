"""Predicate paraphrases (coqa.ranking.paraphrase): model 1 learns from invented
training pairs which wording stands for which predicate name, and scores a
new question's wording against candidate names with it, in both directions;
the tables round-trip through the model directory."""

from __future__ import annotations

from pathlib import Path

from coqa.ranking.paraphrase import PredicateParaphrases, TranslationTable, units

PAIRS = [
    ("|多少钱?", "价格"), ("|卖多少钱", "价格"), ("请问|要多少钱", "售价"), ("|的价钱是多少", "价格"),
    ("|哪一年建成的", "建成时间"), ("|是哪年建的", "建造时间"), ("|什么时候建的", "建造时间"), ("|哪一年开始建", "始建年代"),
    ("|有多高", "高度"), ("|高多少米", "高度"), ("请问|有多高呢", "身高"), ("|在哪里", "所在地"), ("|位于哪里", "位置"),
]  # fmt: skip


def test_units_skip_mention_marks_punctuation_and_de() -> None:
    assert units("|的价钱是多少?") == list("价钱是多少")


def test_model_one_learns_which_characters_translate_into_which() -> None:
    table = TranslationTable.fit([(list("多少钱"), list("价格")), (list("多少米"), list("高度")), (list("钱"), list("价"))])
    assert table.probabilities["钱"]["价"] > table.probabilities["多"]["价"]
    assert table.score(list("要多少钱"), list("价格")) > table.score(list("要多少钱"), list("高度"))


def test_a_new_wording_scores_the_predicate_it_paraphrases_above_the_others() -> None:
    paraphrases = PredicateParaphrases.fit(PAIRS)
    wording = "|这座塔是哪一年建的"
    when, height, place = (paraphrases.scores(wording, name) for name in ("建造时间", "高度", "所在地"))
    assert when[0] > height[0] and when[0] > place[0]
    assert when[1] > height[1] and when[1] > place[1]
    price, height = paraphrases.scores("|门票要多少钱", "售价"), paraphrases.scores("|门票要多少钱", "身高")
    assert price > height  # both directions


def test_paraphrases_round_trip_through_the_model_directory(tmp_path: Path) -> None:
    paraphrases = PredicateParaphrases.fit(PAIRS)
    paraphrases.save(tmp_path)
    loaded = PredicateParaphrases.load(tmp_path)
    for name in ("价格", "高度", "所在地", "从未见过"):
        assert loaded.scores("|有多高", name) == paraphrases.scores("|有多高", name)
