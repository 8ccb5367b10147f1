"""benchmarks/dbqa_kb_coverage.py: which DBQA questions write a knowledge-base subject, and whose documents hold its values."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "dbqa_kb_coverage.py"

KB = "甲乙丙 ||| 首都 ||| 丁戊城\n甲乙丙 ||| 人口 ||| 三百万\n江河 ||| 长度 ||| 一千公里\n坏行\n"
DBQA = "\n".join(
    [
        "甲乙丙的首都是哪里？\t甲乙丙位于东方。\t0",
        "甲乙丙的首都是哪里？\t它的首都是丁戊城。\t1",
        "江河有多长？\t江河全长一千公里。\t0",
        "江河有多长？\t江河很长。\t1",
        "某物是什么？\t某物是一种东西。\t1",
    ]
)


def test_counts_questions_writing_a_subject_and_values_in_their_documents(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text(KB, encoding="utf-8")
    dbqa = tmp_path / "train.txt"
    dbqa.write_text(DBQA + "\n", encoding="utf-8")
    kbqa = tmp_path / "kbqa.txt"
    kbqa.write_text("<question id=1>\t江河有多长？\n<triple id=1>\t江河 ||| 长度 ||| 一千公里\n<answer id=1>\t一千公里\n", encoding="utf-8")
    command = [sys.executable, str(SCRIPT), str(kb), str(dbqa), "--kbqa-questions", str(kbqa)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert "kb.txt: 2 subjects" in out
    assert "train.txt: 1 of 3 questions written the same in kbqa.txt" in out
    assert (
        "train.txt: 3 questions; writing a subject of >= 2 characters 2, >= 3 characters 1; "
        "a value of one in the document 2, in a right sentence 1"
    ) in out
