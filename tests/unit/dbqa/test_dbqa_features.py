"""DBQA features on hand-written Chinese examples."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from coqa.dbqa.answer_types import TYPE_NAMES, fits, question_type, sentence_values
from coqa.dbqa.features import FEATURE_NAMES, document_features
from coqa.dbqa.text import normalise, segment, split_sentences

DOCUMENT = [
    "长江是中国第一大河。",
    "长江全长约6300公里，流域面积180万平方公里。",
    "长江流经青海、西藏、四川等省区。",
    "黄河是中国第二长河。",
]


@pytest.mark.parametrize(
    "question, kind",
    [
        ("红楼梦的作者是谁？", "who"),
        ("黄山位于哪个省？", "where"),
        ("北京奥运会是哪一年举办的？", "year"),
        ("辛亥革命发生在什么时候？", "when"),
        ("长江有多长？", "how_long"),
        ("太阳系有多少颗行星？", "how_many"),
        ("恐龙为什么灭绝？", "why"),
        ("数独是什么？", "definition"),
        ("故宫的门票多少钱？", "money"),
        ("如何制作豆腐？", "how"),
        ("熊猫吃竹子吗？", "yes_no"),
        ("苹果", "other"),
    ],
)
def test_question_types(question, kind):
    assert question_type(normalise(question)) == kind
    assert kind in TYPE_NAMES


def test_sentence_values():
    values = sentence_values(segment("1949年10月1日，毛泽东在北京宣布成立新中国，当时有4亿多人。"))
    assert values.years == 1 and values.dates >= 1 and values.counts >= 1
    assert values.persons >= 1 and values.places >= 1
    length = sentence_values(segment("泰山海拔1545米。"))
    assert length.measures == 1 and fits("how_long", length) == 1.0
    assert fits("who", length) == 0.0
    assert fits("definition", length) == 0.5


def test_normalise_folds_full_width_and_space():
    assert normalise("ＡＢＣ１２３  长江\u3000全长") == "abc123 长江 全长"


def test_rows_have_exactly_the_feature_names_in_order():
    rows = document_features("长江有多长？", DOCUMENT)
    assert len(rows) == len(DOCUMENT)
    assert all(row.keys() == set(FEATURE_NAMES) for row in rows)
    assert all(isinstance(value, float) for row in rows for value in row.values())


def test_the_answer_sentence_stands_out():
    rows = document_features("长江全长多少公里？", DOCUMENT)
    answer, unrelated = rows[1], rows[3]
    assert answer["idf_overlap"] == max(row["idf_overlap"] for row in rows)
    assert answer["idf_overlap_gap"] == 0.0 and answer["idf_overlap_rank"] == 0.0
    assert answer["bm25_rank"] == 0.0 and answer["bm25_share"] == 1.0
    assert answer["lcs"] >= 4  # 长江全长
    assert answer["type_fit"] == 1.0 and answer["has_measures"] >= 1
    assert unrelated["bm25"] == 0.0 and unrelated["missing_words"] > answer["missing_words"]
    assert unrelated["type_fit"] == 0.0


def test_position_length_and_neighbours():
    rows = document_features("长江流经哪些省区？", DOCUMENT)
    assert [row["position"] for row in rows] == [0.0, 1.0, 2.0, 3.0]
    assert rows[0]["position_share"] == 0.0 and rows[-1]["position_share"] == 1.0
    assert rows[0]["previous_idf_overlap"] == -1.0 and rows[-1]["next_idf_overlap"] == -1.0
    assert rows[1]["next_idf_overlap"] == rows[2]["idf_overlap"]
    assert rows[0]["document_size"] == 4.0
    assert rows[2]["word_in_text_overlap"] == 1.0


def test_a_definition_sentence_is_marked():
    rows = document_features("数独是什么？", ["数独是一种数字填充游戏。", "玩家需要逻辑思维。"])
    assert rows[0]["defines_subject"] == 1.0 and rows[1]["defines_subject"] == 0.0


def test_empty_and_odd_inputs_do_not_fail():
    assert document_features("？？", ["", "。。。"])[0]["char_overlap"] == 0.0
    assert document_features("长江", []) == []
    long_sentence = "长江" * 5000
    assert document_features("长江有多长？", [long_sentence])[0]["length"] == 1000.0


def test_rows_do_not_depend_on_the_hash_seed():
    program = (
        "import json, sys; from coqa.dbqa.features import document_features; "
        f"print(json.dumps(document_features('长江全长多少公里？', {DOCUMENT!r})))"
    )
    outputs = set()
    for seed in ("1", "2", "12345"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=environment, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == len(DOCUMENT)


def test_slot_context_is_the_words_beside_the_interrogative():
    rows = document_features("红楼梦的作者是谁？", ["红楼梦的作者是曹雪芹。", "红楼梦是一部小说。"])
    assert rows[0]["slot_context"] == 1.0 and rows[1]["slot_context"] == 0.0
    assert document_features("长江", ["长江很长。"])[0]["slot_context"] == -1.0  # no interrogative


def test_split_sentences():
    assert split_sentences("长江全长6300公里。它流经十一个省！\n是吗？  是的…") == ["长江全长6300公里。", "它流经十一个省！", "是吗？", "是的…"]
    assert split_sentences(" \n ") == []
