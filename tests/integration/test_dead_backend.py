"""A dead SPARQL endpoint ends `coqa answer` fast: after a few questions in a
row find it unreachable, one line, exit 1, no result file."""

from __future__ import annotations

import socket
from pathlib import Path

from coqa.kb import INDEX_SUBDIR
from tests.integration.cli_run import run_coqa


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_hundred_questions_against_a_closed_port_stop_after_three(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    questions = tmp_path / "questions.txt"
    questions.write_text("周星驰的身高是多少？\n" * 100, encoding="utf-8")
    result = tmp_path / "result.txt"
    endpoint = f"http://127.0.0.1:{closed_port()}/query"
    done = run_coqa(
        ["answer", str(questions), "-o", str(result), "--endpoint", endpoint,
         "--mention-index", str(Path(demo_store) / INDEX_SUBDIR), "--model", str(demo_model), "--progress-every", "0"],
        timeout=120, COQA_RETRY_BACKOFF="0.01",
    )  # fmt: skip
    assert done.returncode == 1
    error = done.stderr.splitlines()[-1]
    assert error.startswith("coqa: error: stopped after question 3: the knowledge base was unreachable")
    assert endpoint in error and "connection refused" in error
    assert "answered 2/100 (2%), 2 failed" in done.stderr
    assert not result.exists()
