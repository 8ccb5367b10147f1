"""The demo knowledge base is never used silently: every command that falls
back to it says so on stderr, and the page's example questions are the demo's
only when the demo knowledge base is loaded."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from coqa.cli.common import DEMO_NOTICE
from coqa.kb.demo import DEMO_QUESTIONS
from coqa.testing.coqa_serve import coqa_serve
from coqa.testing.local_process import clean_environment
from tests.integration.cli_run import run_coqa


@pytest.mark.parametrize(
    "arguments",
    [["answer", str(DEMO_QUESTIONS), "-o", "-"], ["ask", "周星驰的身高是多少？"], ["sparql", "SELECT ?x WHERE { <周星驰> <身高> ?x }"]],
)
def test_a_command_without_a_knowledge_base_option_names_the_demo(arguments: list[str], demo_model: Path, tmp_path: Path) -> None:
    model = ["--model", str(demo_model)] if arguments[0] != "sparql" else []
    done = run_coqa([*arguments, *model], COQA_CACHE_DIR=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    assert DEMO_NOTICE in done.stderr.splitlines() and "demo knowledge base" in DEMO_NOTICE
    assert "demo knowledge base" not in done.stdout


def test_a_command_given_a_store_prints_no_notice(demo_store: str, demo_model: Path) -> None:
    done = run_coqa(["answer", str(DEMO_QUESTIONS), "-o", "-", "--store", demo_store, "--model", str(demo_model)])
    assert done.returncode == 0, done.stderr
    assert "demo knowledge base" not in done.stderr


def test_the_page_offers_the_demo_questions_only_over_the_demo_knowledge_base(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    environment = clean_environment(COQA_CACHE_DIR=str(tmp_path / "cache"))
    with coqa_serve(["--model", str(demo_model)], tmp_path / "demo.log", env=environment) as demo:
        assert "周星驰的身高是多少？" in requests.get(demo.url + "/examples", timeout=10).json()
    assert DEMO_NOTICE in (tmp_path / "demo.log").read_text(encoding="utf-8")
    with coqa_serve(["--store", demo_store, "--model", str(demo_model)], tmp_path / "store.log", env=environment) as other:
        assert requests.get(other.url + "/examples", timeout=10).json() == []
