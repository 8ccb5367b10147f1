"""`coqa score --task nlpcc-kbqa` reads the result lines `coqa answer` writes
for a plain question file (PKU BASE terms, literals in quotes) as NLPCC
answers: the quotes used to make every answer wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.evaluation.scoring import score_nlpcc_kbqa

GOLD = """<question id=1>\t空灵山有多高？
<triple id=1>\t空灵山 ||| 海拔 ||| 1500米
<answer id=1>\t1500米
==================================================
<question id=2>\t雪夜行的作者是谁？
<triple id=2>\t雪夜行 ||| 作者 ||| 林海
<answer id=2>\t林海
==================================================
"""


@pytest.mark.parametrize(
    "written",
    ['"1500米"\n"林海"\n', '"1500米"\n<林海>\n', "<question id=1>\t空灵山有多高？\n<answer id=1>\t1500米\n====\n"
     "<question id=2>\t雪夜行的作者是谁？\n<answer id=2>\t林海\n====\n"],
)  # fmt: skip
def test_result_lines_and_submissions_score_the_same(written: str, tmp_path: Path) -> None:
    (tmp_path / "gold.txt").write_text(GOLD, encoding="utf-8")
    (tmp_path / "result.txt").write_text(written, encoding="utf-8")
    scores = score_nlpcc_kbqa(tmp_path / "result.txt", tmp_path / "gold.txt")
    assert scores.f1 == 1.0


def test_a_wrong_answer_line_still_scores_zero(tmp_path: Path) -> None:
    (tmp_path / "gold.txt").write_text(GOLD, encoding="utf-8")
    (tmp_path / "result.txt").write_text('"1500米"\n"苏岚"\n', encoding="utf-8")
    assert score_nlpcc_kbqa(tmp_path / "result.txt", tmp_path / "gold.txt").f1 == 0.5
