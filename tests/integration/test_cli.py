"""The command-line layer: result files written atomically or to stdout,
question-file formats, help and version, progress lines in logs, failures of
the knowledge base and of single questions, hostile characters in questions,
answers and arguments."""

from __future__ import annotations

import io
import logging
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import coqa
from coqa.cli.common import is_utf8_text
from coqa.cli.main import build_parser, main
from coqa.cli.progress import Progress
from coqa.config import default_settings
from coqa.dataset import (
    DatasetError,
    QuestionFormat,
    file_format,
    format_result_line,
    read_ccks,
    read_question_file,
)
from coqa.evaluation.metrics import question_prf
from coqa.explanation import Answer, Explanation
from coqa.kb.demo import DEMO_DIR, ensure_demo_store
from coqa.mentions.detection import normalize_question
from coqa.pipeline import Pipeline
from coqa.testing.local_process import free_port

DEMO_QUESTIONS = DEMO_DIR / "questions.txt"
DEMO_CCKS = DEMO_DIR / "questions.ccks.txt"
PROGRESS_LINE = re.compile(r"^coqa: answered \d+/\d+ \(\d+%\), \d+\.\d q/s, eta \d+ s$", re.M)
MODEL_STACK = ("sklearn", "numpy", "pyoxigraph", "lightgbm")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


def demo_lines() -> list[str]:
    return DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()


def dead_endpoint_args(store: str) -> list[str]:
    """KB options naming a SPARQL endpoint on a closed port of 127.0.0.1 (a server that is down)."""
    return ["--endpoint", f"http://127.0.0.1:{free_port()}/query", "--mention-index", str(Path(store) / "mentions")]


def one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("coqa: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# --- -o: atomic file, stdout ---------------------------------------------------


def test_a_failed_run_leaves_an_existing_result_file_intact(store: str, tmp_path: Path, capsys) -> None:
    result = tmp_path / "result.txt"
    result.write_text("old\n", encoding="utf-8")
    code = main(["answer", str(DEMO_QUESTIONS), "-o", str(result), "--store", store, "--model", str(tmp_path / "none")])
    assert code == 1 and "no model" in one_line_error(capsys.readouterr().err)
    assert result.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.txt"]  # no temporary file left


def test_a_run_replaces_the_result_file_with_the_usual_permissions(store: str, tmp_path: Path) -> None:
    result = tmp_path / "result.txt"
    result.write_text("old\n", encoding="utf-8")
    assert main(["answer", str(DEMO_QUESTIONS), "-o", str(result), "--store", store]) == 0
    assert result.read_text(encoding="utf-8").count("\n") == len(demo_lines())
    mask = os.umask(0)
    os.umask(mask)
    assert result.stat().st_mode & 0o777 == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result.txt"]


def test_dash_writes_the_result_lines_to_stdout(store: str, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["answer", str(DEMO_QUESTIONS), "-o", "-", "--store", store]) == 0
    captured = capsys.readouterr()
    assert captured.out.count("\n") == len(demo_lines()) and "<" in captured.out
    assert "-> stdout" in captured.err
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("target", ["missing/r.txt", "."])
def test_an_unwritable_output_fails_before_answering(store: str, tmp_path: Path, capsys, target: str) -> None:
    code = main(["answer", str(DEMO_QUESTIONS), "-o", str(tmp_path / target), "--store", store])
    err = capsys.readouterr().err
    assert code == 1 and "cannot write" in one_line_error(err) and "questions," not in err  # nothing answered


# --- question-file formats ------------------------------------------------------


def test_a_ccks_file_is_answered_question_by_question(store: str, tmp_path: Path, capsys) -> None:
    result = tmp_path / "result.txt"
    assert main(["answer", str(DEMO_CCKS), "-o", str(result), "--store", store]) == 0
    blocks = read_ccks(DEMO_CCKS)
    assert result.read_text(encoding="utf-8").count("\n") == len(blocks)
    assert "is a CCKS file" in capsys.readouterr().err


def test_file_formats() -> None:
    assert file_format(["q1:谁？", "select ?x where { <a> <b> ?x }", "<c>"]) == QuestionFormat.CCKS
    assert file_format(["", "  ", "q1: 谁？", "", "SELECT ?x { }"]) == QuestionFormat.CCKS
    assert file_format(["q1:谁？", "q2:什么？"]) == QuestionFormat.PLAIN  # numbered questions, one per line
    assert file_format(["<a>\t<b>", ""]) == QuestionFormat.PLAIN
    assert file_format([]) == QuestionFormat.PLAIN


CCKS_WITH_SPACE_SEPARATORS = (
    "q1:第一问\nselect ?x where { <a> <p> ?x. }\n<x1>\n   \n"
    "q2:第二问\nselect ?x where { <b> <p> ?x. }\n<x2>\t<x3>\n \t \n"
    "q3:第三问\nselect ?x where { <c> <p> ?x. }\n\"x4\"\n"
)


def test_lines_of_white_space_separate_ccks_blocks(tmp_path: Path, capsys) -> None:
    gold = tmp_path / "gold.txt"
    gold.write_text(CCKS_WITH_SPACE_SEPARATORS, encoding="utf-8")
    assert [(q.question, q.answers) for q in read_ccks(gold)] == [
        ("第一问", ("<x1>",)),
        ("第二问", ("<x2>", "<x3>")),
        ("第三问", ('"x4"',)),
    ]
    result = tmp_path / "result.txt"
    result.write_text("<x1>\n<x2>\n\"x4\"\n", encoding="utf-8")
    assert main(["score", str(result), str(gold), "--json"]) == 0
    assert '"questions": 3' in capsys.readouterr().out


def test_a_missing_separator_is_refused_with_its_line_number(tmp_path: Path) -> None:
    gold = tmp_path / "gold.txt"
    gold.write_text(CCKS_WITH_SPACE_SEPARATORS.replace("<x1>\n   \n", "<x1>\n"), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"gold.txt:4: a second question"):
        read_ccks(gold)


# --- help, version, imports --------------------------------------------------------


def test_every_command_help_has_examples() -> None:
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for name, command in commands.items():
        assert "examples:" in command.format_help(), name


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.strip() == f"coqa {coqa.__version__}"


def test_help_does_not_import_the_model_stack() -> None:
    commands = [[], *([name, "--help"] for name in build_parser()._subparsers._group_actions[0].choices)]  # type: ignore[union-attr]
    script = (
        "import sys\nfrom coqa.cli.main import main\n"
        "for argv in sys.argv[1:]:\n"
        "    try:\n        main(argv.split() + ['--help'])\n    except SystemExit:\n        pass\n"
        f"print(sorted(m for m in {MODEL_STACK!r} if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, *(" ".join(c[:1]) for c in commands)], capture_output=True, text=True, timeout=60
    )
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr


# --- progress lines ------------------------------------------------------------------


def test_progress_lines_come_every_interval_when_not_on_a_terminal(tmp_path: Path) -> None:
    now = [0.0]
    with open(tmp_path / "log", "w", encoding="utf-8") as log:
        progress = Progress(100, "answered", interval=10, stream=log, clock=lambda: now[0])
        for done in range(1, 101):
            now[0] = done * 0.5  # 2 questions per second
            progress.update(done)
        progress.close()
    lines = (tmp_path / "log").read_text(encoding="utf-8").splitlines()
    assert lines == [
        "coqa: answered 20/100 (20%), 2.0 q/s, eta 40 s",
        "coqa: answered 40/100 (40%), 2.0 q/s, eta 30 s",
        "coqa: answered 60/100 (60%), 2.0 q/s, eta 20 s",
        "coqa: answered 80/100 (80%), 2.0 q/s, eta 10 s",
    ]


def test_answer_and_eval_print_progress_lines_in_logs(store: str, tmp_path: Path, capsys) -> None:
    args = ["--store", store, "--progress-every", "0"]
    assert main(["answer", str(DEMO_QUESTIONS), "-o", str(tmp_path / "r.txt"), *args]) == 0
    assert len(PROGRESS_LINE.findall(capsys.readouterr().err)) == len(demo_lines()) - 1
    assert main(["eval", str(DEMO_CCKS), "--out", str(tmp_path / "eval"), *args]) == 0
    assert len(PROGRESS_LINE.findall(capsys.readouterr().err)) == len(read_ccks(DEMO_CCKS)) - 1


def test_train_prints_progress_lines_in_logs(store: str, tmp_path: Path, capsys) -> None:
    args = ["train", str(DEMO_CCKS), "-o", str(tmp_path / "model"), "--store", store, "--limit", "8", "--progress-every", "0"]
    assert main(args) == 0
    lines = re.findall(r"^coqa: training \(pass \d\) \d+/8 \(\d+%\), \d+\.\d q/s, eta \d+ s$", capsys.readouterr().err, re.M)
    assert len(lines) == 2 * 7  # two passes over the questions, no line for the last one (the summary follows)


# --- the knowledge base down, nothing answered, a question that raises ---------------------


def test_kb_down_for_every_question_is_a_failed_run(store: str, tmp_path: Path, capsys, caplog, monkeypatch) -> None:
    monkeypatch.setenv("COQA_RETRIES", "0")  # the retry policy has its own tests
    result = tmp_path / "result.txt"
    result.write_text("old\n", encoding="utf-8")
    with caplog.at_level(logging.INFO, logger="coqa"):
        code = main(["answer", str(DEMO_QUESTIONS), "-o", str(result), *dead_endpoint_args(store)])
    error = one_line_error(capsys.readouterr().err)
    assert code == 1
    # An unreachable knowledge base ends the run after 3 questions in a row (stop_after_unreachable).
    assert "stopped after question 3: the knowledge base was unreachable for 3 questions in a row" in error
    assert "connection refused" in error
    assert result.read_text(encoding="utf-8") == "old\n"
    assert caplog.text.count("knowledge base unreachable") >= 3  # each question's reason stays logged


def test_ask_with_the_kb_down_exits_non_zero(store: str, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COQA_RETRIES", "0")
    code = main(["ask", demo_lines()[0], *dead_endpoint_args(store)])
    assert code == 1 and "knowledge base failed for 1 of 1 questions" in one_line_error(capsys.readouterr().err)


def test_a_run_without_any_answer_is_not_a_success(store: str, tmp_path: Path, capsys) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text("？？？\n\n", encoding="utf-8")
    result = tmp_path / "result.txt"
    assert main(["answer", str(questions), "-o", str(result), "--store", store]) == 1
    assert "none of the 2 questions got an answer" in one_line_error(capsys.readouterr().err)
    assert result.read_text(encoding="utf-8") == "\n\n"


def test_a_question_that_raises_gets_an_empty_line_and_the_batch_goes_on(
    store: str, tmp_path: Path, caplog, monkeypatch
) -> None:
    poisoned = demo_lines()[1]
    analyse = Pipeline.analyse

    def failing_analyse(self: Pipeline, text: str):  # type: ignore[no-untyped-def]
        if text == normalize_question(poisoned):
            raise OverflowError("int too large to convert")  # as a bad index entry did
        return analyse(self, text)

    monkeypatch.setattr(Pipeline, "analyse", failing_analyse)
    result = tmp_path / "result.txt"
    with caplog.at_level(logging.INFO, logger="coqa"):
        assert main(["answer", str(DEMO_QUESTIONS), "-o", str(result), "--store", store]) == 0
    lines = result.read_text(encoding="utf-8").split("\n")[:-1]
    assert len(lines) == len(demo_lines()) and lines[1] == "" and lines[0] and lines[2]
    assert "question 2: no answer: internal error: OverflowError: int too large to convert" in caplog.text


# --- hostile characters ------------------------------------------------------------------


def test_a_carriage_return_inside_a_question_does_not_shift_the_lines(store: str, tmp_path: Path) -> None:
    questions = tmp_path / "q.txt"
    questions.write_bytes("周星驰的\r身高是多少？\r\n鲁迅的原名是什么？\n".encode("utf-8"))
    assert read_question_file(questions).questions == ["周星驰的\r身高是多少？", "鲁迅的原名是什么？"]
    result = tmp_path / "result.txt"
    assert main(["answer", str(questions), "-o", str(result), "--store", store]) == 0
    assert result.read_bytes().count(b"\n") == 2 and b"\r" not in result.read_bytes()


def test_tabs_and_line_breaks_inside_answers_are_written_escaped_and_read_back(tmp_path: Path, capsys) -> None:
    answers = ['"制表\t符"', '"两\r\n行"', "<a\\b>"]
    line = format_result_line(answers)
    assert line == '"制表\\t符"\t"两\\r\\n行"\t<a\\b>'
    assert Answer(answers, Explanation(question="q")).line() == line
    assert question_prf(answers, line.split("\t")).f1 == 1.0  # KB values equal their written form
    result, gold = tmp_path / "result.txt", tmp_path / "gold.txt"
    result.write_text(line + "\n\n", encoding="utf-8")
    gold.write_text("q1:问一\nselect ?x where { <e> <p> ?x }\n" + line + "\n\nq2:问二\nselect ?x where { <e> <q> ?x }\n<c>\n", "utf-8")
    assert main(["score", str(result), str(gold), "--json"]) == 0
    assert '"f1": 0.5' in capsys.readouterr().out


def test_a_long_question_is_measured_after_normalisation(store: str) -> None:
    pipeline = Pipeline.from_settings(replace(default_settings(), store=store))
    try:
        answer = pipeline.answer("\ufdfa" * 20)  # 20 characters, 360 once normalized
        assert answer.answers == [] and "longer than 300 characters once normalized" in str(answer.explanation.failure)
        assert answer.explanation.normalized == ""
    finally:
        pipeline.close()


def test_an_argument_in_gbk_is_a_one_line_error() -> None:
    environment = {**os.environ, "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "coqa.cli.main", "ask", "周星驰的身高是多少？".encode("gbk")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert done.returncode == 2 and "argument 2 is not UTF-8 text" in one_line_error(done.stderr)


def test_a_gbk_line_at_the_ask_prompt_is_refused_and_the_prompt_goes_on(store: str, capsys, monkeypatch) -> None:
    typed = "周星驰的身高是多少？".encode("gbk") + b"\n" + "周星驰的身高是多少？\n".encode("utf-8")
    # stdin as Python opens it under a UTF-8 locale: undecodable bytes become lone surrogates
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(typed), encoding="utf-8", errors="surrogateescape"))
    assert main(["ask", "--store", store]) == 0
    captured = capsys.readouterr()
    assert "that line is not UTF-8 text" in one_line_error(captured.err)
    assert captured.out.count("question:   周星驰的身高是多少？") == 1
    assert is_utf8_text(captured.out)  # the refused line was not echoed


def test_eval_refuses_an_unwritable_report_directory_before_the_run(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    code = main(["eval", str(DEMO_CCKS), "--out", str(blocker / "reports")])
    captured = capsys.readouterr()
    assert code == 2 and "cannot write reports to" in one_line_error(captured.err)
    assert captured.out == ""  # nothing was answered
