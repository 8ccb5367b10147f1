"""The answering pipeline end to end on real stores: the shipped demo KB with
the shipped model, a KB of hostile names for escaping, a dead server."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.explanation import KB_FAILURES
from coqa.config import Settings, default_settings, load_settings
from coqa.dataset import read_ccks
from coqa.evaluation.metrics import ccks_scores
from coqa.kb import open_kb
from coqa.kb.demo import DEMO_DIR, ensure_demo_store
from coqa.kb.loading.loader import load_kb
from coqa.kb.names import Term
from coqa.pipeline import Pipeline
from coqa.templates import sparql_term

DEMO_QUESTIONS = DEMO_DIR / "questions.txt"
DEMO_CCKS = DEMO_DIR / "questions.ccks.txt"


@pytest.fixture(scope="module")
def demo_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    cache = tmp_path_factory.mktemp("cache")
    return replace(default_settings(), store=str(ensure_demo_store(cache)))


@pytest.fixture(scope="module")
def demo_pipeline(demo_settings: Settings) -> Pipeline:
    return Pipeline.from_settings(demo_settings)


def test_demo_questions_are_answered_right_by_the_shipped_model(demo_pipeline: Pipeline) -> None:
    questions = read_ccks(DEMO_CCKS)
    given = [demo_pipeline.answer(q.question).answers for q in questions]
    scores = ccks_scores(given, [q.answers for q in questions])
    assert scores.f1 >= 0.7, scores


def test_answer_writes_one_line_per_input_line_in_order(demo_settings: Settings, tmp_path: Path) -> None:
    demo = DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()
    lines = ["q1:" + demo[0], "", "   ", "？？？", "x" * 400, demo[1], "q7:" + demo[2]]
    questions = tmp_path / "questions.txt"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = tmp_path / "result.txt"
    code = main(["answer", str(questions), "-o", str(result), "--store", demo_settings.store])
    assert code == 0
    out = result.read_text(encoding="utf-8").split("\n")
    assert out[-1] == "" and len(out) - 1 == len(lines)
    assert out[0] and out[5] and out[6]
    assert out[1] == out[2] == out[3] == out[4] == ""
    for line in out[:-1]:
        for answer in filter(None, line.split("\t")):
            assert (answer.startswith("<") and answer.endswith(">")) or (answer.startswith('"') and answer.endswith('"'))


def test_answer_with_two_jobs_gives_the_same_lines(demo_settings: Settings, tmp_path: Path) -> None:
    outputs = []
    for jobs in ("1", "2"):
        result = tmp_path / f"result{jobs}.txt"
        assert main(["answer", str(DEMO_QUESTIONS), "-o", str(result), "--store", demo_settings.store, "--jobs", jobs]) == 0
        outputs.append(result.read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") == len(DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines())


def test_ask_json_explains_every_stage(demo_settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    question = DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()[0]
    assert main(["ask", question, "--json", "--store", demo_settings.store]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["mentions"] and record["linked"] and record["candidates"]
    assert record["chosen"]["answers"] and record["failure"] is None
    assert len(record["candidates"]) <= 5


def test_ask_text_shows_links_queries_and_answers(demo_settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    question = DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()[0]
    assert main(["ask", question, "--store", demo_settings.store]) == 0
    out = capsys.readouterr().out
    for heading in ("mentions:", "linked:", "candidates:", "query:", "answers:"):
        assert heading in out


HOSTILE_NAME = 'A"} . ?s ?p ?o . {<x> \\ SELECT'
HOSTILE_LITERAL = 'x" } UNION { ?s ?p ?o } #'


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB whose names and literals try to break out of a query."""
    source = tmp_path_factory.mktemp("hostile-kb")
    (source / "pkubase-triples.txt").write_text(
        f"<{HOSTILE_NAME}>\t<别名>\t\"{HOSTILE_LITERAL}\" .\n"
        f"<{HOSTILE_NAME}>\t<作者>\t<平常人> .\n"
        "<平常人>\t<国籍>\t<中国> .\n"
        "<另一人>\t<国籍>\t<中国> .\n",
        encoding="utf-8",
    )
    (source / "pkubase-mention2ent.txt").write_text(f"怪名\t{HOSTILE_NAME}\t1\n", encoding="utf-8")
    store = tmp_path_factory.mktemp("hostile-store") / "s"
    load_kb([source], store)
    return store


@pytest.mark.parametrize("text", [HOSTILE_NAME, HOSTILE_LITERAL, "a\nb", "}", ">", "\\", '"', "SELECT * WHERE {", "'"])
def test_any_text_becomes_one_well_formed_term(hostile_store: Path, text: str) -> None:
    kb = open_kb(replace(default_settings(), store=str(hostile_store)).kb_config())
    for term in (Term.entity(text), Term.literal(text)):
        rows = kb.select(f"SELECT ?p ?o WHERE {{ {sparql_term(term)} ?p ?o . }}").rows
        expected = {
            HOSTILE_NAME: [(Term.entity("作者"), Term.entity("平常人")), (Term.entity("别名"), Term.literal(HOSTILE_LITERAL))]
        }.get(text if not term.is_literal else "", [])
        assert sorted(rows) == sorted(expected)


def test_hostile_question_is_answered_without_breaking_queries(hostile_store: Path) -> None:
    pipeline = Pipeline.from_settings(replace(default_settings(), store=str(hostile_store)))
    for question in (f"{HOSTILE_LITERAL}是谁的别名？", "怪名的作者是谁？", 'x" } UNION { ?s ?p ?o }的作者？'):
        answer = pipeline.answer(question)
        assert answer.explanation.failure is None or answer.explanation.failure.kind not in KB_FAILURES
        assert len(answer.answers) <= 2
        assert "<另一人>" not in answer.answers


def test_missing_model_is_a_one_line_error(demo_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ask", "测试", "--store", demo_settings.store, "--model", str(tmp_path / "none.pkl")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("coqa: error: no model at") and "Traceback" not in err


def test_hanlp_without_its_package_says_so(demo_settings: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COQA_HANLP", "true")
    monkeypatch.setitem(sys.modules, "hanlp", None)  # as if not installed, whatever this machine has
    code = main(["ask", "测试", "--store", demo_settings.store])
    assert code == 1 and "hanlp" in capsys.readouterr().err.lower()


def test_training_is_deterministic_and_learns_the_demo(demo_settings: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = []
    for name in ("a", "b"):
        model = tmp_path / name
        assert main(["train", str(DEMO_CCKS), "--store", demo_settings.store, "-o", str(model), "--seed", "3"]) == 0
        models.append(model)
    assert "trained on" in capsys.readouterr().out
    files = sorted(path.name for path in models[0].iterdir())
    assert files == sorted(path.name for path in models[1].iterdir())
    assert all((models[0] / name).read_bytes() == (models[1] / name).read_bytes() for name in files)
    pipeline = Pipeline.from_settings(load_settings(flags={"store": demo_settings.store, "model": str(models[0])}))
    questions = read_ccks(DEMO_CCKS)
    assert ccks_scores([pipeline.answer(q.question).answers for q in questions], [q.answers for q in questions]).f1 > 0.9
