"""Every answer has a confidence in [0, 1]: `coqa answer --details` writes it
per question, `--min-confidence` leaves answers below it empty, `coqa ask`
and the HTTP API show it."""

from __future__ import annotations

import json
from pathlib import Path

import requests

from coqa.kb.demo import DEMO_QUESTIONS
from coqa.testing.coqa_serve import coqa_serve
from coqa.testing.local_process import clean_environment
from tests.integration.cli_run import run_coqa


def _answer(store: str, model: Path, tmp_path: Path, *extra: str) -> tuple[list[str], list[dict]]:
    tmp_path.mkdir(exist_ok=True)
    result, details = tmp_path / "result.txt", tmp_path / "details.jsonl"
    done = run_coqa(["answer", str(DEMO_QUESTIONS), "-o", str(result), "--details", str(details), "--store", store,
                     "--model", str(model), *extra])  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    records = [json.loads(line) for line in details.read_text(encoding="utf-8").splitlines()]
    return result.read_text(encoding="utf-8").split("\n")[:-1], records


def test_details_hold_one_record_per_question_in_order(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    lines, records = _answer(demo_store, demo_model, tmp_path)
    questions = [q for q in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in records] == questions and len(lines) == len(questions)
    for record, line in zip(records, lines):
        assert set(record) >= {"question", "answers", "confidence", "sparql", "failure"}
        assert 0.0 <= record["confidence"] <= 1.0
        assert bool(line) == bool(record["answers"]) and (record["failure"] is None) == bool(record["answers"])
        if not record["answers"]:
            assert record["confidence"] == 0.0
    assert any(0.0 < r["confidence"] < 1.0 for r in records)


def test_a_high_minimum_confidence_leaves_fewer_answered_lines(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    every, records = _answer(demo_store, demo_model, tmp_path / "every")
    strict, strict_records = _answer(demo_store, demo_model, tmp_path / "strict", "--min-confidence", "0.99")
    assert sum(map(bool, strict)) < sum(map(bool, every))
    for before, after in zip(records, strict_records):
        assert bool(after["answers"]) == (bool(before["answers"]) and before["confidence"] >= 0.99)
        if before["answers"] and not after["answers"]:
            assert after["failure"] == {"kind": "low_confidence", "message": f"confidence below min_confidence: {before['confidence']:.4f} < 0.99"}


def test_ask_and_the_api_show_the_confidence(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    asked = run_coqa(["ask", "周星驰的身高是多少？", "--store", demo_store, "--model", str(demo_model)])
    assert asked.returncode == 0 and any(line.startswith("confidence: ") for line in asked.stdout.splitlines())
    options = ["--store", demo_store, "--model", str(demo_model)]
    with coqa_serve(options, tmp_path / "serve.log", env=clean_environment()) as server:
        reply = requests.post(server.url + "/answer", json={"question": "周星驰的身高是多少？"}, timeout=30).json()
    assert reply["answers"] == ['"174cm"'] and 0.0 < reply["confidence"] <= 1.0
    assert reply["explanation"]["confidence"] == reply["confidence"]
