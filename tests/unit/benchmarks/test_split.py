"""benchmarks/split.py: held-out splits keep every record whole, in order, and read back as the original's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from coqa.dataset import read_gold_questions

SPLIT = Path(__file__).resolve().parents[3] / "benchmarks" / "split.py"

CCKS = "".join(
    f"q{n}:问题{n}是什么？\nselect ?x where {{ <实体{n}> <属性> ?x . }}\n\"值{n}\"\n\n" for n in range(1, 6)
)
NLPCC = "".join(
    f"<question id={n}>\t问题{n}是什么？\n<triple id={n}>\t实体{n} ||| 属性 ||| 值{n}\n<answer id={n}>\t值{n}\n{'=' * 50}\n"
    for n in range(1, 6)
)


def _split(tmp_path: Path, text: str, held: str) -> tuple[list[str], list[str]]:
    source = tmp_path / "train.in"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    subprocess.run([sys.executable, str(SPLIT), str(source), "--held", held, "--out", str(out)], check=True, capture_output=True)
    return (
        [q.question for q in read_gold_questions(out / "train.txt")],
        [q.question for q in read_gold_questions(out / "held.txt")],
    )


def test_ccks_split_holds_out_the_range_and_keeps_the_rest(tmp_path: Path) -> None:
    kept, held = _split(tmp_path, CCKS, "2-3")
    assert held == ["问题2是什么？", "问题3是什么？"]
    assert kept == ["问题1是什么？", "问题4是什么？", "问题5是什么？"]


def test_nlpcc_split_holds_out_the_range_and_keeps_the_rest(tmp_path: Path) -> None:
    kept, held = _split(tmp_path, NLPCC, "4-5")
    assert held == ["问题4是什么？", "问题5是什么？"]
    assert kept == ["问题1是什么？", "问题2是什么？", "问题3是什么？"]


def test_a_range_outside_the_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "train.in").write_text(CCKS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(SPLIT), str(tmp_path / "train.in"), "--held", "4-9", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0 and "outside the file's 5 records" in done.stderr
