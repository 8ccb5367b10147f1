"""`coqa serve`: the JSON API of a real server process on 127.0.0.1.

Every test talks HTTP to `coqa serve` started as a subprocess (over the demo
knowledge base, the pkubase-bench store, or a real `oxigraph serve` that is
stopped to see the API report the failure).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Iterator

import pytest
import requests

pytest.importorskip("fastapi", reason="coqa serve needs the serve extra: pip install -e '.[serve]'")

from conftest import BENCH_DIR  # noqa: E402

from coqa.dataset import read_ccks  # noqa: E402
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR  # noqa: E402
from coqa.kb.demo import DEMO_QUESTIONS  # noqa: E402
from coqa.pipeline import MAX_QUESTION_LENGTH  # noqa: E402
from coqa.serve.schemas import MAX_BATCH  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.testing.oxigraph_server import serve_store_copy  # noqa: E402
from coqa.testing.local_process import clean_environment, worker_pids  # noqa: E402

TIMEOUT = 60
SPARQL_SECONDS = 2
DEV_SAMPLE_STEP = 20  # every 20th dev question: 36 of 703


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a server or CLI run: no COQA_* of the caller, a private cache."""
    return clean_environment(**{"COQA_CACHE_DIR": str(tmp_path / "cache"), **extra})


def coqa_answer(questions: list[str], options: list[str], env: dict[str, str], work: Path) -> list[str]:
    """The answer lines `coqa answer` writes for `questions`."""
    source, result = work / "questions.txt", work / "result.txt"
    source.write_text("".join(q + "\n" for q in questions), encoding="utf-8")
    command = [sys.executable, "-m", "coqa.cli.main", "answer", str(source), "-o", str(result), *options]
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=600)
    return result.read_text(encoding="utf-8").split("\n")[:-1]


def post(server: RunningServer, path: str, body: Any) -> requests.Response:
    return requests.post(server.url + path, json=body, timeout=TIMEOUT)


def error_of(reply: requests.Response) -> str:
    """The one-line error of a 4xx/5xx reply (asserting its form)."""
    assert reply.headers["content-type"].startswith("application/json"), reply.text
    message = reply.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message
    return message


@pytest.fixture(scope="module")
def demo_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-demo")


@pytest.fixture(scope="module")
def demo_server(demo_cache: Path) -> Iterator[RunningServer]:
    """`coqa serve` with no knowledge-base option: the shipped demo knowledge base."""
    options = ["--sparql-timeout", str(SPARQL_SECONDS), "--sparql-rows", "50"]
    with coqa_serve(options, demo_cache / "serve.log", env=server_env(demo_cache)) as server:
        yield server


def test_answer_gives_174cm_with_the_explanation(demo_server: RunningServer) -> None:
    reply = requests.post(
        demo_server.url + "/answer",
        data='{"question":"周星驰的身高是多少？"}'.encode("utf-8"),
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["answers"] == ['"174cm"']
    explanation = result["explanation"]
    assert explanation["normalized"] == "周星驰的身高是多少?"
    assert {"text": "周星驰", "start": 0, "end": 3} == {k: explanation["mentions"][0][k] for k in ("text", "start", "end")}
    assert explanation["linked"][0]["term"] == "<周星驰>"
    assert explanation["chosen"]["sparql"] == "SELECT DISTINCT ?x WHERE { <周星驰> <身高> ?x . }"
    assert explanation["chosen"]["answers"] == ['"174cm"']
    assert 1 <= len(explanation["candidates"]) <= 5 <= result["candidates_total"]
    assert explanation["candidates"][0]["sparql"] == explanation["chosen"]["sparql"]
    assert {"shape", "score", "answers"} <= set(explanation["candidates"][0])
    graph = result["query_graph"]
    assert graph["edges"] == [{"source": "<周星驰>", "target": "?x", "label": "身高", "variable": False}]
    assert [(n["id"], n["kind"], n["answer"]) for n in graph["nodes"]] == [
        ("<周星驰>", "entity", False),
        ("?x", "variable", True),
    ]


def test_top_sets_how_many_candidates_come_back(demo_server: RunningServer) -> None:
    result = post(demo_server, "/answer", {"question": "冯小刚导演了哪些电影？", "top": 1}).json()
    assert len(result["explanation"]["candidates"]) == 1
    assert result["candidates_total"] >= 1


def test_answers_equal_coqa_answer_on_the_demo_questions(demo_server: RunningServer, demo_cache: Path, tmp_path: Path) -> None:
    questions = [line for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    expected = coqa_answer(questions, [], server_env(demo_cache), tmp_path)
    batch = post(demo_server, "/answer/batch", {"questions": questions})
    assert batch.status_code == 200, batch.text
    assert ["\t".join(r["answers"]) for r in batch.json()["results"]] == expected
    assert [r["question"] for r in batch.json()["results"]] == questions
    singles = ["\t".join(post(demo_server, "/answer", {"question": q}).json()["answers"]) for q in questions]
    assert singles == expected
    assert sum(1 for line in expected if line) >= 8


@pytest.mark.slow
def test_answers_equal_coqa_answer_on_dev_questions(bench_store_dir: Path, tmp_path: Path) -> None:
    questions = [q.question for q in read_ccks(BENCH_DIR / "dev.txt")][::DEV_SAMPLE_STEP]
    options = ["--store", str(bench_store_dir)]
    env = server_env(tmp_path)
    expected = coqa_answer(questions, options, env, tmp_path)
    with coqa_serve(options, tmp_path / "serve.log", env=env) as server:
        batch = post(server, "/answer/batch", {"questions": questions})
        assert batch.status_code == 200, batch.text
        got = ["\t".join(r["answers"]) for r in batch.json()["results"]]
    assert got == expected
    assert sum(1 for line in got if line) > len(questions) // 2


LONG_QUESTION = "问" * (MAX_QUESTION_LENGTH + 1)


@pytest.mark.parametrize(
    "path, body, status, words",
    [
        ("/answer", {"question": ""}, 422, "question"),
        ("/answer", {"question": "   "}, 422, "blank"),
        ("/answer", {"question": LONG_QUESTION}, 422, str(MAX_QUESTION_LENGTH)),
        ("/answer", {"question": 42}, 422, "string"),
        ("/answer", {"question": ["周星驰"]}, 422, "string"),
        ("/answer", {}, 422, "required"),
        ("/answer", ["周星驰的身高是多少？"], 422, "dictionary"),
        ("/answer", {"question": "周星驰的身高是多少？", "top": -1}, 422, "top"),
        ("/answer", {"question": "周星驰的身高是多少？", "colour": 1}, 422, "colour"),
        ("/answer/batch", {"questions": "周星驰的身高是多少？"}, 422, "list"),
        ("/answer/batch", {"questions": []}, 422, "questions"),
        ("/answer/batch", {"questions": ["周星驰的身高是多少？", ""]}, 422, "questions[1]"),
        ("/answer/batch", {"questions": ["周星驰的身高是多少？"] * (MAX_BATCH + 1)}, 422, str(MAX_BATCH)),
        ("/sparql", {"query": "ASK { ?s ?p ?o }"}, 422, "only SELECT"),
        ("/sparql", {"query": "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"}, 422, "only SELECT"),
        ("/sparql", {"query": "PREFIX x: <http://x/> DELETE WHERE { ?s ?p ?o }"}, 422, "only SELECT"),
        ("/sparql", {"query": "SELECT ?x WHERE { ?x"}, 422, "refused"),
        ("/sparql", {"query": "SELECT ?x WHERE { ?x ?p ?o }", "limit": 0}, 422, "limit"),
        ("/sparql", {"query": 7}, 422, "string"),
    ],
)
def test_bad_input_gets_a_one_line_4xx(demo_server: RunningServer, path: str, body: Any, status: int, words: str) -> None:
    reply = post(demo_server, path, body)
    assert reply.status_code == status, reply.text
    assert words in error_of(reply)


@pytest.mark.parametrize("path", ["/answer", "/answer/batch", "/sparql"])
def test_malformed_json_gets_400(demo_server: RunningServer, path: str) -> None:
    reply = requests.post(demo_server.url + path, data=b'{"question": "a', headers={"content-type": "application/json"}, timeout=TIMEOUT)
    assert reply.status_code == 400
    assert "not valid JSON" in error_of(reply)


def test_oversized_body_and_unknown_route_get_json_errors(demo_server: RunningServer) -> None:
    huge = json.dumps({"question": "问" * 400_000})
    reply = requests.post(demo_server.url + "/answer", data=huge.encode(), headers={"content-type": "application/json"}, timeout=TIMEOUT)
    assert reply.status_code == 413
    assert "larger than" in error_of(reply)
    reply = requests.get(demo_server.url + "/nowhere", timeout=TIMEOUT)
    assert reply.status_code == 404 and error_of(reply)
    reply = requests.get(demo_server.url + "/answer", timeout=TIMEOUT)
    assert reply.status_code == 405 and error_of(reply)


def test_sparql_gives_pku_base_terms_within_the_row_limit(demo_server: RunningServer) -> None:
    reply = post(demo_server, "/sparql", {"query": "select ?x where { <周星驰> <身高> ?x . }"})
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert (result["variables"], result["rows"], result["truncated"]) == (["x"], [['"174cm"']], False)

    query = "PREFIX ex: <http://example.org/> SELECT ?s ?o WHERE { ?s <类型> ?o . } ORDER BY ?s LIMIT 500"
    result = post(demo_server, "/sparql", {"query": query}).json()
    assert len(result["rows"]) == 50 and result["truncated"]  # the server's --sparql-rows 50
    assert all(row[0].startswith("<") for row in result["rows"])
    small = post(demo_server, "/sparql", {"query": query, "limit": 3}).json()
    assert small["rows"] == result["rows"][:3] and small["truncated"]
    unbound = post(demo_server, "/sparql", {"query": "SELECT ?x ?y WHERE { <周星驰> <身高> ?x . OPTIONAL { ?x <无> ?y } }"})
    assert unbound.json()["rows"] == [['"174cm"', None]]


def test_sparql_time_limit_stops_the_query_and_the_next_one_runs(demo_server: RunningServer) -> None:
    slow = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . }"
    reply = post(demo_server, "/sparql", {"query": slow})
    assert reply.status_code == 422
    assert f"{SPARQL_SECONDS} s limit" in error_of(reply)
    after = post(demo_server, "/sparql", {"query": "select ?x where { <周星驰> <身高> ?x . }"})
    assert after.status_code == 200 and after.json()["rows"] == [['"174cm"']]


def test_health_reports_backend_model_and_counts(demo_server: RunningServer) -> None:
    post(demo_server, "/answer", {"question": "周星驰的身高是多少？"})
    reply = requests.get(demo_server.url + "/health", timeout=TIMEOUT)
    assert reply.status_code == 200, reply.text
    health = reply.json()
    assert health["status"] == "ok" and health["backend"] == "oxigraph"
    assert "oxigraph store" in health["kb"] and health["model"].endswith("models/default")
    assert health["triples"] > 500 and health["mention_index_entries"] > 100
    assert health["counts"]["questions"] >= 1 and health["counts"]["answered"] >= 1


def test_openapi_page_works_offline(demo_server: RunningServer) -> None:
    spec = requests.get(demo_server.url + "/openapi.json", timeout=TIMEOUT).json()
    assert {"/answer", "/answer/batch", "/sparql", "/health"} <= set(spec["paths"])
    page = requests.get(demo_server.url + "/docs", timeout=TIMEOUT)
    assert page.status_code == 200 and "swagger-ui" in page.text and "cdn" not in page.text.lower()
    asset = page.text.split('<script src="', 1)[1].split('"', 1)[0]
    assert asset.startswith("/") and requests.get(demo_server.url + asset, timeout=TIMEOUT).status_code == 200


def test_web_page_and_its_files_are_served(demo_server: RunningServer) -> None:
    page = requests.get(demo_server.url + "/", timeout=TIMEOUT)
    assert page.status_code == 200 and 'id="question"' in page.text
    for name in ("app.js", "style.css"):
        assert requests.get(f"{demo_server.url}/static/{name}", timeout=TIMEOUT).status_code == 200
    examples = requests.get(demo_server.url + "/examples", timeout=TIMEOUT).json()
    assert "周星驰的身高是多少？" in examples


def test_knowledge_base_down_gives_503_with_the_reason(kb_store_dir: Path, tmp_path: Path) -> None:
    # Rows serving only the question that asked (else the same question is answered from memory for kb_cache_seconds).
    env = server_env(tmp_path, COQA_RETRIES="0", COQA_KB_CACHE_SECONDS="0")
    endpoint_running = ExitStack()
    with endpoint_running:
        endpoint = endpoint_running.enter_context(serve_store_copy(kb_store_dir / STORE_SUBDIR, tmp_path))
        options = ["--endpoint", endpoint, "--mention-index", str(kb_store_dir / INDEX_SUBDIR)]
        with coqa_serve(options, tmp_path / "serve.log", env=env) as server:
            assert requests.get(server.url + "/health", timeout=TIMEOUT).json()["backend"] == "sparql"
            assert post(server, "/answer", {"question": "周星驰的身高是多少？"}).json()["answers"] == ['"174cm"']
            assert post(server, "/sparql", {"query": "select ?x where { <周星驰> <身高> ?x }"}).status_code == 200

            endpoint_running.close()  # the knowledge base goes down under the running server
            for method, path, body in [
                ("get", "/health", None),
                ("post", "/answer", {"question": "周星驰的身高是多少？"}),
                ("post", "/answer/batch", {"questions": ["周星驰的身高是多少？"]}),
                ("post", "/sparql", {"query": "select ?x where { <周星驰> <身高> ?x }"}),
            ]:
                reply = requests.request(method, server.url + path, json=body, timeout=TIMEOUT)
                assert reply.status_code == 503, (path, reply.text)
                assert "SPARQL endpoint" in error_of(reply) and endpoint in error_of(reply)
            assert requests.get(server.url + "/examples", timeout=TIMEOUT).status_code == 200
            assert server.process.poll() is None


def test_two_workers_answer_and_a_dead_one_is_replaced(tmp_path: Path) -> None:
    with coqa_serve(["--workers", "2"], tmp_path / "serve.log", env=server_env(tmp_path)) as server:
        questions = [line for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
        batch = post(server, "/answer/batch", {"questions": questions})
        assert batch.status_code == 200 and batch.json()["results"][0]["answers"] == ['"174cm"']
        assert requests.get(server.url + "/health", timeout=TIMEOUT).json()["workers"] == 2
        workers = worker_pids(server.process.pid)
        assert len(workers) == 2

        os.kill(workers[0], signal.SIGKILL)
        # The live worker may answer before the pool sees the death; the
        # request that finds the pool broken gets one 503, the next a new pool.
        replies = [post(server, "/answer", {"question": "周星驰的身高是多少？"}) for _ in range(4)]
        failed = [r for r in replies if r.status_code != 200]
        assert len(failed) <= 1 and all(r.status_code == 503 and "started anew" in error_of(r) for r in failed)
        assert replies[-1].json()["answers"] == ['"174cm"']
        assert server.process.poll() is None


def test_serve_refuses_a_missing_store_in_one_line(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "coqa.cli.main", "serve", "--store", str(tmp_path / "none"), "--port", "1"]
    run = subprocess.run(command, env=server_env(tmp_path), capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [run.stderr.strip()]
    assert run.stderr.startswith("coqa: error: ") and str(tmp_path / "none") in run.stderr


# --- the pieces the API is made of, without a server -------------------------


@pytest.mark.parametrize(
    "query, expected",
    [
        ("SELECT ?x WHERE { ?x ?p ?o }", "SELECT ?x WHERE { ?x ?p ?o }\nLIMIT 11"),
        ("select ?x where { ?x ?p ?o } order by ?x limit 500", "select ?x where { ?x ?p ?o } order by ?x limit 11"),
        ("SELECT ?x WHERE { ?x ?p ?o } LIMIT 3 OFFSET 2", "SELECT ?x WHERE { ?x ?p ?o } LIMIT 3 OFFSET 2"),
        ('SELECT ?x WHERE { ?x ?p "LIMIT 99" }', 'SELECT ?x WHERE { ?x ?p "LIMIT 99" }\nLIMIT 11'),
        ("SELECT ?x WHERE { { SELECT ?x WHERE { ?x ?p ?o } LIMIT 50 } }", "SELECT ?x WHERE { { SELECT ?x WHERE { ?x ?p ?o } LIMIT 50 } }\nLIMIT 11"),
    ],
)
def test_row_cap_lowers_or_adds_the_top_level_limit(query: str, expected: str) -> None:
    from coqa.serve.sparql import with_row_cap

    assert with_row_cap(query, 11) == expected


@pytest.mark.parametrize(
    "query, accepted",
    [
        ("SELECT ?x WHERE { ?x ?p ?o }", True),
        ("  # a comment\n PREFIX ex: <http://example.org/#a>\nBASE <http://b/>\nselect * { ?s ?p ?o }", True),
        ("ASK { ?s ?p ?o }", False),
        ("DESCRIBE <周星驰>", False),
        ("PREFIX ex: <http://example.org/> INSERT DATA { ex:a ex:b ex:c }", False),
        ("# SELECT\nCONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", False),
        ("SELECTED", False),
    ],
)
def test_only_select_queries_are_accepted(query: str, accepted: bool) -> None:
    from coqa.serve.sparql import QueryRejected, check_select

    if accepted:
        check_select(query)
    else:
        with pytest.raises(QueryRejected):
            check_select(query)


def graph_of(query: str) -> tuple[list[tuple[str, str, bool]], list[tuple[str, str, str, bool]]]:
    from coqa.serve.query_graph import query_graph

    graph = query_graph(query)
    return [(n.id, n.kind, n.answer) for n in graph.nodes], [(e.source, e.label, e.target, e.variable) for e in graph.edges]


def test_query_graph_of_a_chain_and_a_literal_constraint() -> None:
    nodes, edges = graph_of('SELECT DISTINCT ?x WHERE { <李白_（唐朝著名诗人）> <妻子> ?y . ?y <誉称> "a \\"b\\"" ; <父亲> ?x . }')
    assert nodes == [
        ("<李白_（唐朝著名诗人）>", "entity", False),
        ("?y", "variable", False),
        ('"a "b""', "literal", False),
        ("?x", "variable", True),
    ]
    assert edges == [
        ("<李白_（唐朝著名诗人）>", "妻子", "?y", False),
        ("?y", "誉称", '"a "b""', False),
        ("?y", "父亲", "?x", False),
    ]


def test_query_graph_of_a_count_a_relation_answer_and_a_filter() -> None:
    from coqa.kb.names import name_to_iri

    nodes, edges = graph_of("SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x <类型> <电影>, <作品> . FILTER(?x != <a>) }")
    assert ("?x", "variable", True) in nodes and len(edges) == 2
    nodes, edges = graph_of(f"SELECT DISTINCT ?x WHERE {{ <{name_to_iri('A <B>')}> ?x <周杰伦> . }}")
    assert nodes == [("<A <B>>", "entity", False), ("<周杰伦>", "entity", False)]
    assert edges == [("<A <B>>", "?x", "<周杰伦>", True)]
    assert graph_of("SELECT ?x WHERE { ?x ?p ?o . FILTER(?o < 3) ?x a <人物> }")[1][-1] == ("?x", "rdf:type", "<人物>", False)
    assert graph_of("not a query") == ([], [])
