"""`coqa sparql`: output formats, query sources, and clean one-line errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from conftest import BENCH_DIR, WRITER

from coqa.cli.main import main
from coqa.testing.gstore_server import GStoreServer
from coqa.testing.local_process import clean_environment, free_port

TWO_COLUMNS = (
    "select ?x ?a where { ?x <类型> <虚构长篇小说> . ?x <出版社> <青石出版社> optional { ?x <别名> ?a } } order by ?x"
)
BENCH_TRIPLES = BENCH_DIR / "pkubase-triples.txt"
TEXT = '<雪夜行>\t"又名"雪行""\n<青石志>\t\n'


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("output_format", "expected"),
    [
        ("text", TEXT),
        ("tsv", "?x\t?a\n" + TEXT),
        (
            "json",
            json.dumps(
                {"variables": ["x", "a"], "rows": [["<雪夜行>", '"又名"雪行""'], ["<青石志>", None]]}, ensure_ascii=False
            )
            + "\n",
        ),
    ],
)
def test_formats_on_store_and_server(
    capsys: pytest.CaptureFixture[str], kb_store_dir: Path, oxigraph_server: str, output_format: str, expected: str
) -> None:
    for backend in (["--store", str(kb_store_dir)], ["--endpoint", oxigraph_server]):
        assert run_cli(capsys, "sparql", TWO_COLUMNS, "--format", output_format, *backend) == (0, expected, "")


def test_tabs_and_line_breaks_in_values_stay_on_one_line(capsys: pytest.CaptureFixture[str], kb_store_dir: Path) -> None:
    query = "select ?y where { <A^B {C}\\D> <备注> ?y }"
    assert run_cli(capsys, "sparql", query, "--store", str(kb_store_dir)) == (0, '"制表\\t符"\n', "")


def test_query_from_file_and_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, kb_store_dir: Path, tmp_path: Path
) -> None:
    query = "select ?x where { <2030年云溪运动会 > <举办城市> ?x }"
    (tmp_path / "q.rq").write_text(query, encoding="utf-8")
    assert run_cli(capsys, "sparql", f"@{tmp_path / 'q.rq'}", "--store", str(kb_store_dir)) == (0, "<云溪市>\n", "")
    monkeypatch.setattr(sys, "stdin", io.StringIO(query))
    assert run_cli(capsys, "sparql", "-", "--store", str(kb_store_dir)) == (0, "<云溪市>\n", "")


def test_gstore_options(capsys: pytest.CaptureFixture[str], gstore_server: GStoreServer) -> None:
    query = f"select ?x where {{ ?x <作者> <{WRITER}> }} order by ?x"
    server = ["--gstore", gstore_server.url, "--db", gstore_server.db]
    assert run_cli(capsys, "sparql", query, *server) == (0, "<北河记>\n<雪夜行>\n", "")
    assert run_cli(capsys, "sparql", f"ask {{ ?x <作者> <{WRITER}> }}", *server) == (0, "true\n", "")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["@/nonexistent/q.rq"], "coqa: error: cannot read the query from /nonexistent/q.rq: No such file or directory\n"),
        (["  "], "coqa: error: the query is empty\n"),
        (
            ["select ?x where { ?x ?p ?o }", "--gstore", "http://127.0.0.1:1"],
            "coqa: error: the gstore backend needs a server URL and a database (--gstore URL --db NAME)\n",
        ),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run_cli(capsys, "sparql", *argv)
    assert (code != 0, out, err) == (True, "", message)


def run_process(*argv: str) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a fresh interpreter, with no COQA_* settings."""
    env = clean_environment(COQA_TIMEOUT="2", COQA_RETRIES="1", COQA_RETRY_BACKOFF="0.01")
    return subprocess.run(
        [sys.executable, "-m", "coqa.cli.main", *argv], capture_output=True, text=True, env=env, timeout=60
    )


def test_server_down_is_one_clean_line() -> None:
    url = f"http://127.0.0.1:{free_port()}/query"
    done = run_process("sparql", "select ?x where { ?x ?p ?o }", "--endpoint", url)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"coqa: error: cannot reach the SPARQL endpoint {url}: connection refused (2 attempts)\n"


@pytest.mark.parametrize("backend", ["store", "endpoint"])
def test_bad_sparql_is_one_clean_line(kb_store_dir: Path, oxigraph_server: str, backend: str) -> None:
    option = ["--store", str(kb_store_dir)] if backend == "store" else ["--endpoint", oxigraph_server]
    done = run_process("sparql", "select ?x wher { ?x ?p ?o }", *option)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("coqa: error: ")
    assert "error at 1:" in done.stderr
    assert done.stderr.count("\n") == 1


@pytest.mark.slow
def test_bench_fact_with_a_space_in_a_name(
    capsys: pytest.CaptureFixture[str], bench_store_dir: Path, bench_server: str
) -> None:
    """A fact read from pkubase-bench at run time (a subject with a space,
    an entity object) comes back from both the store and the server."""
    subject, predicate, obj = first_fact(lambda fields: " " in fields[0] and fields[2].startswith("<"))
    query = f"select ?x where {{ {subject} {predicate} ?x. }}"
    for backend in (["--store", str(bench_store_dir)], ["--endpoint", bench_server]):
        code, out, err = run_cli(capsys, "sparql", query, *backend)
        assert (code, err) == (0, "")
        assert obj in out.splitlines()


def first_fact(wanted: Callable[[list[str]], bool]) -> list[str]:
    """The fields (`<s>`, `<p>`, object) of the first pkubase-bench triple line that `wanted` accepts."""
    with BENCH_TRIPLES.open(encoding="utf-8") as lines:
        for line in lines:
            fields = line.rstrip("\n").removesuffix(" .").split("\t")
            if wanted(fields):
                return fields
    raise AssertionError(f"no such fact in {BENCH_TRIPLES}")
