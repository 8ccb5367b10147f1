"""`coqa score` and `coqa compare` end to end through the CLI, checked
against an independent implementation of the CCKS definition."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.evaluation.scoring import read_gold, read_lines, read_result

# Facts made up for these tests. Gold in CCKS format: qN / SPARQL / answers.
GOLD_CCKS = """q1:青石镇在哪个县？
select ?x where { <青石镇> <所属县> ?x. }
<云岭县>

q2:河图乐队有哪些成员？
select ?x where { <河图乐队> <成员> ?x. }
<甲一>\t<乙二>\t<丙三>\t<丁四>

q3:白鹭湖的面积是多少？
select ?x where { <白鹭湖> <面积> ?x. }
"12平方公里"

q4:哪些山在云岭县？
select ?x where { ?x <所在地> <云岭县>. ?x <类型> <山>. }
<鹰嘴山>\t<笔架山>

q5:陈默的妻子是谁？
select ?x where { <陈默> <妻子> ?x. }
<林晚>

q6:甲一出生在哪里？
select ?x where { <甲一> <出生地> ?y. ?y <所属县> ?x. }
<云岭县>\t<苍山县>

"""

# Empty lines (q3, q6), partial overlaps (q2, q4), wrong extra answers (q2,
# q5), a duplicate (q2) and stray white space (q4).
RESULT = "<云岭县>\n<甲一>\t<乙二>\t<戊五>\t<甲一>\n\n <鹰嘴山> \n<林晚>\t<陈默>\t<白鹭湖>\n\n"


def independent_ccks(result_text: str, gold_lines: list[str]) -> tuple[float, float, float]:
    """Macro P, macro R and averaged F1 straight from the CCKS definition."""
    result_lines = result_text.split("\n")[:-1]
    assert len(result_lines) == len(gold_lines)
    precisions, recalls, f1s = [], [], []
    for result_line, gold_line in zip(result_lines, gold_lines):
        given = {a.strip() for a in result_line.split("\t")} - {""}
        gold = {a.strip() for a in gold_line.split("\t")} - {""}
        common = given & gold
        if not given or not common:
            p = r = f = 0.0
        else:
            p, r = len(common) / len(given), len(common) / len(gold)
            f = 2 * p * r / (p + r)
        precisions.append(p)
        recalls.append(r)
        f1s.append(f)
    n = len(gold_lines)
    return sum(precisions) / n, sum(recalls) / n, sum(f1s) / n


def gold_answer_lines() -> list[str]:
    blocks = [b for b in GOLD_CCKS.split("\n\n") if b.strip()]
    return [block.split("\n")[-1] for block in blocks]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        "gold": tmp_path / "gold.txt",
        "gold_lines": tmp_path / "gold_lines.txt",
        "result": tmp_path / "result.txt",
    }
    paths["gold"].write_text(GOLD_CCKS, encoding="utf-8")
    paths["gold_lines"].write_text("\n".join(gold_answer_lines()) + "\n", encoding="utf-8")
    paths["result"].write_text(RESULT, encoding="utf-8")
    return paths


def printed(capsys: pytest.CaptureFixture[str], label: str) -> str:
    out = capsys.readouterr().out
    match = re.search(rf"^{re.escape(label)}\s+([0-9.]+)", out, re.M)
    assert match, out
    return match.group(1)


@pytest.mark.parametrize("gold_kind", ["gold", "gold_lines"])
def test_score_prints_the_averaged_f1_of_the_definition(files, capsys, gold_kind):
    precision, recall, f1 = independent_ccks(RESULT, gold_answer_lines())
    assert 0.2 < f1 < 0.8  # the file really mixes right, partial and wrong lines

    assert main(["score", str(files["result"]), str(files[gold_kind])]) == 0
    assert printed(capsys, "averaged F1") == f"{f1:.4f}"

    assert main(["score", str(files["result"]), str(files[gold_kind]), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["questions"] == 6
    assert scores["f1"] == pytest.approx(f1, abs=1e-12)
    assert scores["precision"] == pytest.approx(precision, abs=1e-12)
    assert scores["recall"] == pytest.approx(recall, abs=1e-12)


def test_score_refuses_a_result_with_fewer_lines(files, capsys):
    short = files["result"].with_name("short.txt")
    short.write_text("\n".join(RESULT.split("\n")[:5]) + "\n", encoding="utf-8")
    assert main(["score", str(short), str(files["gold"])]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err.strip()
    assert "\n" not in error
    assert error.startswith("coqa: error:") and "has 5 lines" in error and "has 6 questions" in error


def test_score_refuses_a_result_with_more_lines(files, capsys):
    long = files["result"].with_name("long.txt")
    long.write_text(RESULT + "\n", encoding="utf-8")  # one empty line too many
    assert main(["score", str(long), str(files["gold_lines"])]) == 2
    assert "has 7 lines" in capsys.readouterr().err


def test_score_reports_unreadable_files_in_one_line(tmp_path, files, capsys):
    assert main(["score", str(tmp_path / "missing.txt"), str(files["gold"])]) == 2
    assert "cannot read" in capsys.readouterr().err
    latin = tmp_path / "latin.txt"
    latin.write_bytes("é\n".encode("latin-1"))
    assert main(["score", str(latin), str(files["gold"])]) == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_result_lines_keep_empty_lines_and_drop_only_the_final_newline(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"\xef\xbb\xbf<a>\r\n\r\n<b>\t <c>\n")
    assert read_lines(path) == ["<a>", "", "<b>\t <c>"]
    assert read_result(path) == [["<a>"], [], ["<b>", "<c>"]]
    path.write_text("\n\n", encoding="utf-8")
    assert read_lines(path) == ["", ""]
    path.write_text("", encoding="utf-8")
    assert read_lines(path) == []
    path.write_text("<a>", encoding="utf-8")
    assert read_lines(path) == ["<a>"]


def test_gold_format_is_detected(files):
    ccks = read_gold(files["gold"])
    lines = read_gold(files["gold_lines"])
    assert ccks.answers == lines.answers
    assert ccks.questions[0] == "青石镇在哪个县？" and lines.questions == []


def test_compare_counts_questions_won_and_lost(files, capsys):
    better = files["result"].with_name("better.txt")
    # q3 and q6 now right, q1 now wrong; the rest unchanged
    lines = RESULT.split("\n")[:-1]
    lines[0], lines[2], lines[5] = "", '"12平方公里"', "<云岭县>\t<苍山县>"
    better.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert main(["compare", str(files["result"]), str(better), str(files["gold"])]) == 0
    out = capsys.readouterr().out
    _, _, f1_a = independent_ccks(RESULT, gold_answer_lines())
    _, _, f1_b = independent_ccks("\n".join(lines) + "\n", gold_answer_lines())
    assert f"averaged F1 {f1_a:.4f}" in out and f"averaged F1 {f1_b:.4f}" in out
    assert "B wins 2, loses 1, 3 unchanged" in out
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d+\s+\d\.\d{4}", line)]
    assert [tuple(r[:3]) for r in rows] == [
        ("1", "1.0000", "0.0000"),
        ("3", "0.0000", "1.0000"),
        ("6", "0.0000", "1.0000"),
    ]
    assert "青石镇在哪个县？" in out


def test_compare_refuses_misaligned_files(files, capsys):
    short = files["result"].with_name("short.txt")
    short.write_text("<云岭县>\n", encoding="utf-8")
    assert main(["compare", str(files["result"]), str(short), str(files["gold"])]) == 2
    assert "short.txt has 1 lines" in capsys.readouterr().err


def test_nlpcc_kbqa_task(tmp_path, capsys):
    gold = tmp_path / "gold.txt"
    gold.write_text("a\na\tb\nc\n", encoding="utf-8")
    result = tmp_path / "result.txt"
    result.write_text("x\ta\tb\na\n\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-kbqa", "--at", "2", "--at", "1", str(result), str(gold), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["mrr"] == pytest.approx(0.5)  # (1/2 + 1 + 0) / 3
    assert scores["accuracy"] == {"1": pytest.approx(1 / 3), "2": pytest.approx(2 / 3)}
    assert scores["f1"] == pytest.approx(7 / 18)  # (1/2 + 2/3 + 0) / 3
    assert main(["score", "--task", "nlpcc-kbqa", str(result), str(gold)]) == 0
    out = capsys.readouterr().out
    assert "Accuracy@1" in out and "Accuracy@5" in out


def test_nlpcc_dbqa_task(tmp_path, capsys):
    labels = tmp_path / "labels.txt"
    labels.write_text(
        "问一\t句子甲\t0\n问一\t句子乙\t1\n问一\t句子丙\t1\n问二\t句子丁\t0\n问二\t句子戊\t1\n问三\t句子己\t0\n",
        encoding="utf-8",
    )
    scores_file = tmp_path / "scores.txt"
    scores_file.write_text("0.9\n0.5\n0.7\n0.1\n0.8\n0.3\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["questions"] == 3
    assert scores["mrr"] == pytest.approx(1 / 2)  # (1/2 + 1 + 0) / 3
    assert scores["map"] == pytest.approx(19 / 36)  # (7/12 + 1 + 0) / 3
    assert scores["accuracy_at_1"] == pytest.approx(1 / 3)


def test_nlpcc_dbqa_reads_the_2017_column_order_and_refuses_a_split_question(tmp_path, capsys):
    labels = tmp_path / "labels.txt"
    labels.write_text("1\t问一\t句子甲\r\n0\t问一\t句子乙\r\n", encoding="utf-8")
    scores_file = tmp_path / "scores.txt"
    scores_file.write_text("0.2\n0.9\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mrr"] == pytest.approx(1 / 2)
    labels.write_text("问一\t甲\t1\n问二\t乙\t1\n问一\t丙\t0\n", encoding="utf-8")
    scores_file.write_text("0.1\n0.2\n0.3\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels)]) == 2
    assert "labels.txt:3:" in capsys.readouterr().err


def test_nlpcc_dbqa_refuses_bad_files(tmp_path, capsys):
    labels = tmp_path / "labels.txt"
    labels.write_text("问\t句\t1\n问\t句\t2\n", encoding="utf-8")
    scores_file = tmp_path / "scores.txt"
    scores_file.write_text("0.1\n0.2\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels)]) == 2
    assert "labels.txt:2:" in capsys.readouterr().err
    labels.write_text("问\t句\t1\n问\t句\t0\n", encoding="utf-8")
    scores_file.write_text("0.1\nabc\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels)]) == 2
    assert "scores.txt:2:" in capsys.readouterr().err
    scores_file.write_text("0.1\n", encoding="utf-8")
    assert main(["score", "--task", "nlpcc-dbqa", str(scores_file), str(labels)]) == 2
    assert "1 scores" in capsys.readouterr().err
