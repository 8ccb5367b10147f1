"""`coqa serve` and its SPARQL runner under hostile and heavy use: the row
cap cannot be commented away and leaves aggregates right; expensive queries
are bounded in memory and do not hold up /health."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
import requests

pytest.importorskip("fastapi", reason="coqa serve needs the serve extra: pip install -e '.[serve]'")

from coqa.kb import STORE_SUBDIR  # noqa: E402
from coqa.kb.backends.gstore import GStore  # noqa: E402
from coqa.testing.gstore_server import GStoreServer  # noqa: E402
from coqa.kb.backends.oxigraph_store import OxigraphStore  # noqa: E402
from coqa.testing.coqa_serve import RunningServer, coqa_serve  # noqa: E402
from coqa.serve.server import WRITE_STALL_SECONDS  # noqa: E402
from coqa.serve.sparql import with_row_cap  # noqa: E402

from conftest import Loopback, Reply, Request, never_in_time  # noqa: E402
from coqa.testing.local_process import clean_environment, worker_pids  # noqa: E402



def test_a_limit_in_a_comment_is_no_limit(embedded_kb: OxigraphStore) -> None:
    for comment in ("#LIMIT 1", "# x\rLIMIT 1", "#LIMIT 1\r"):
        capped = with_row_cap(f"SELECT * WHERE {{ ?s ?p ?o }} {comment}", 3)
        rows = embedded_kb.select(capped).rows
        assert len(rows) == (1 if "\rLIMIT" in comment else 3), (comment, capped)
    assert with_row_cap("SELECT * WHERE { ?s ?p ?o } LIMIT 500 # LIMIT 1", 11).split() == [
        "SELECT", "*", "WHERE", "{", "?s", "?p", "?o", "}", "LIMIT", "11"
    ]


COUNT_ALL = "SELECT (COUNT(?s) AS ?n) WHERE { ?s ?p ?o }"


@pytest.mark.parametrize(
    "query",
    [COUNT_ALL, COUNT_ALL + " LIMIT 3", "SELECT ?p (COUNT(?s) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p"],
)
def test_the_row_cap_leaves_counts_right_on_gstore_and_the_store(
    gstore_server: GStoreServer, embedded_kb: OxigraphStore, query: str
) -> None:
    kb = GStore(gstore_server.url, gstore_server.db, timeout=10, retries=0)
    try:
        whole = kb.select(query.replace(" LIMIT 3", "")).rows
        capped = kb.select(with_row_cap(query, 3)).rows
    finally:
        kb.close()
    assert capped == whole[:3]
    if "GROUP BY" not in query:
        assert capped == [(embedded_kb.select(COUNT_ALL).rows[0][0],)] and int(capped[0][0].value) > 3


# --- coqa serve over pkubase-bench under expensive /sparql queries ----------

CROSS_PRODUCT = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?c ?f"
MEMORY_BOUND = 3 << 30
HEALTH_WAIT = 2


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, []))
    return found


def resident_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += sum(int(line.split()[1]) << 10 for line in status.splitlines() if line.startswith("VmRSS:"))
    return total


def server_env(work: Path) -> dict[str, str]:
    """The environment of a server: no COQA_* of the caller, a private cache."""
    return clean_environment(COQA_CACHE_DIR=str(work / "cache"))


@pytest.fixture(scope="module")
def bench_serve(bench_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """`coqa serve` over the pkubase-bench store, with the default SPARQL limits."""
    work = tmp_path_factory.mktemp("bench-serve")
    with coqa_serve(["--store", str(bench_store_dir)], work / "serve.log", env=server_env(work)) as server:
        yield server


@pytest.mark.slow
def test_six_expensive_queries_leave_health_answering_and_memory_bounded(bench_serve: RunningServer) -> None:
    replies: list[requests.Response] = []

    def expensive() -> None:
        replies.append(requests.post(bench_serve.url + "/sparql", json={"query": CROSS_PRODUCT}, timeout=120))

    clients = [threading.Thread(target=expensive) for _ in range(6)]
    for client in clients:
        client.start()
    peak, health_checks = 0, 0
    while any(client.is_alive() for client in clients):
        peak = max(peak, resident_bytes(descendants(bench_serve.process.pid)))
        health = requests.get(bench_serve.url + "/health", timeout=HEALTH_WAIT)
        assert health.status_code == 200, health.text
        health_checks += 1
    for client in clients:
        client.join()
    assert peak < MEMORY_BOUND, f"{peak >> 20} MB"
    statuses = sorted(reply.status_code for reply in replies)
    assert health_checks >= 1 and len(statuses) == 6
    assert set(statuses) <= {422, 503} and 503 in statuses, [reply.text for reply in replies]
    busy = next(reply for reply in replies if reply.status_code == 503)
    assert busy.headers["Retry-After"] == "1"
    stopped = [reply.json()["error"] for reply in replies if reply.status_code == 422]
    assert stopped and all("memory limit" in error or "s limit" in error for error in stopped), stopped
    # The query process is started afresh: the next query answers.
    small = requests.post(bench_serve.url + "/sparql", json={"query": "SELECT ?s WHERE { ?s ?p ?o } LIMIT 2"}, timeout=60)
    assert small.status_code == 200 and len(small.json()["rows"]) == 2, small.text


@pytest.mark.slow
@pytest.mark.parametrize("quote", ['"""', "'''"])
@pytest.mark.parametrize("end", ["\n", "\r", "\r\n"])
def test_sparql_refuses_service_hidden_by_a_comment_and_calls_nobody(
    bench_serve: RunningServer, loopback: Callable[[Callable[[Request], Reply]], Loopback], quote: str, end: str
) -> None:
    target = loopback(lambda request: Reply(200, '{"head":{"vars":[]},"results":{"bindings":[{}]}}'))
    query = f"SELECT * WHERE {{ # {quote}{end}SERVICE <{target.url}/x> {{ ?s ?p ?o }} # {quote}{end}}}"
    reply = requests.post(bench_serve.url + "/sparql", json={"query": query}, timeout=60)
    assert reply.status_code == 422, reply.text
    assert "SERVICE is refused" in reply.json()["error"]
    assert target.requests == []


# --- questions with control characters, over the demo knowledge base ----------


@pytest.fixture(scope="module")
def demo_serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    work = tmp_path_factory.mktemp("demo-serve")
    with coqa_serve(["--sparql-timeout", "2"], work / "serve.log", env=server_env(work)) as server:
        yield server


@pytest.mark.parametrize("char", ["\x00", "\n", "\x1b", "\x7f"])
def test_a_control_character_in_a_question_is_a_4xx_naming_it(demo_serve: RunningServer, char: str) -> None:
    question = f"周星驰{char}的身高是多少？"
    reply = requests.post(demo_serve.url + "/answer", json={"question": question}, timeout=60)
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"] == f"question: must not hold control characters (U+{ord(char):04X} at position 3)"
    batch = requests.post(demo_serve.url + "/answer/batch", json={"questions": ["周星驰的身高是多少？", question]}, timeout=60)
    assert batch.status_code == 422, batch.text
    assert batch.json()["error"].startswith("questions[1]: must not hold control characters")
    fine = requests.post(demo_serve.url + "/answer", json={"question": "周星驰的身高是多少？"}, timeout=60)
    assert fine.status_code == 200 and fine.json()["answers"] == ['"174cm"']


# --- the connection level: Host header, slow clients ------------------------


@pytest.mark.parametrize(
    "host, status", [("evil.example", 400), ("127.0.0.1.evil.example:80", 400), ("localhost:1", 200), ("127.0.0.1", 200)]
)
def test_a_host_header_naming_another_host_is_refused_on_loopback(
    demo_serve: RunningServer, host: str, status: int
) -> None:
    reply = requests.get(demo_serve.url + "/examples", headers={"Host": host}, timeout=10)
    assert reply.status_code == status, reply.text
    if status == 400:
        assert "answers requests for" in reply.json()["error"]


SLOW_CLIENT_WAIT = 30  # the server's REQUEST_SECONDS (10) and a margin


def closed_by_server(connection: socket.socket) -> bool:
    """True when the server closes `connection` before SLOW_CLIENT_WAIT passes."""
    connection.settimeout(SLOW_CLIENT_WAIT)
    try:
        return connection.recv(65536) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_slow_clients_are_disconnected(demo_serve: RunningServer) -> None:
    port = int(demo_serve.url.rsplit(":", 1)[1])
    idle, half_headers, slow_body = (socket.create_connection(("127.0.0.1", port)) for _ in range(3))
    try:
        half_headers.sendall(b"POST /answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        slow_body.sendall(
            b"POST /answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        for connection in (idle, half_headers, slow_body):
            assert closed_by_server(connection)
    finally:
        for connection in (idle, half_headers, slow_body):
            connection.close()
    assert requests.get(demo_serve.url + "/examples", timeout=10).status_code == 200


ALL_TRIPLES = "SELECT * WHERE { ?s ?p ?o }"


def reply_bytes(connection: socket.socket) -> tuple[int, int]:
    """(bytes the reply's headers announce, bytes that arrived) of the
    reply on `connection`, read until the server closes or resets it."""
    received = b""
    while True:
        try:
            chunk = connection.recv(1 << 20)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:"))
    return length, len(body)


@pytest.mark.slow
def test_a_client_that_stops_reading_its_reply_is_disconnected(bench_store_dir: Path, tmp_path: Path) -> None:
    with coqa_serve(
        ["--store", str(bench_store_dir), "--sparql-rows", "100000"], tmp_path / "serve.log", env=server_env(tmp_path)
    ) as server:
        body = ('{"query": "%s"}' % ALL_TRIPLES).encode()
        request = (
            f"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode() + body
        reading, stalled = socket.socket(), socket.socket()
        try:
            stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the reply cannot hide in our buffer
            for connection in (reading, stalled):
                connection.settimeout(SLOW_CLIENT_WAIT + WRITE_STALL_SECONDS)
                connection.connect(("127.0.0.1", int(server.url.rsplit(":", 1)[1])))
            reading.sendall(request)
            announced, arrived = reply_bytes(reading)
            assert arrived == announced > 5 << 20  # larger than the socket buffers
            stalled.sendall(request)
            assert stalled.recv(1, socket.MSG_PEEK)  # the reply has begun
            time.sleep(WRITE_STALL_SECONDS + 3)
            announced, arrived = reply_bytes(stalled)
            assert arrived < announced, "the stalled reply was kept for its client"
        finally:
            reading.close()
            stalled.close()
        assert requests.get(server.url + "/health", timeout=10).status_code == 200


# --- a hung knowledge base; the server's end --------------------------------

STOP_WAIT = 15  # SIGTERM: uvicorn's 3 s grace, the processes' shutdown, a margin
CHILDREN_WAIT = 10


def wait_until_gone(pids: list[int]) -> list[int]:
    """The processes of `pids` still running (not ended, not zombies) after CHILDREN_WAIT seconds."""
    deadline = time.monotonic() + CHILDREN_WAIT
    while True:
        running = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                running.append(pid)
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.1)


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGKILL"])
def test_with_a_hung_backend_health_and_page_answer_and_the_server_ends_with_its_children(
    kb_store_dir: Path,
    loopback: Callable[[Callable[[Request], Reply]], Loopback],
    tmp_path: Path,
    stop: str,
) -> None:
    hung = loopback(never_in_time)
    env = {**server_env(tmp_path), "COQA_TIMEOUT": "60", "COQA_RETRIES": "0"}
    options = ["--store", str(kb_store_dir), "--endpoint", hung.url + "/query", "--workers", "2"]
    with coqa_serve(options, tmp_path / "serve.log", env=env) as server:
        question = {"question": "周星驰的身高是多少？"}
        waiting = [
            threading.Thread(target=post_quietly, args=(server.url + "/answer", question), daemon=True) for _ in range(4)
        ]
        query = {"query": "SELECT * WHERE { ?s ?p ?o }"}
        waiting.append(threading.Thread(target=post_quietly, args=(server.url + "/sparql", query), daemon=True))
        for thread in waiting:
            thread.start()
        wait_for_requests(hung, 2)
        for _ in range(3):
            health = requests.get(server.url + "/health", timeout=HEALTH_WAIT)
            assert health.status_code == 503 and "did not answer within" in health.json()["error"], health.text
            assert requests.get(server.url + "/", timeout=HEALTH_WAIT).status_code == 200
        children = descendants(server.process.pid)[1:]
        assert len(children) >= 3  # two pipeline processes and the SPARQL process
        started = time.monotonic()
        server.process.send_signal(getattr(signal, stop))
        server.process.wait(STOP_WAIT)
        assert time.monotonic() - started < STOP_WAIT
        assert wait_until_gone(children) == []


def post_quietly(url: str, body: dict[str, str]) -> None:
    """POST that expects to see the server go away (the test stops it)."""
    try:
        requests.post(url, json=body, timeout=60)
    except requests.ConnectionError:
        pass


def wait_for_requests(server: Loopback, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(server.requests) < count:
        assert time.monotonic() < deadline, f"{len(server.requests)} requests reached the backend"
        time.sleep(0.05)


def test_abandoned_batches_are_dropped_not_answered(demo_serve: RunningServer) -> None:
    demo = requests.get(demo_serve.url + "/examples", timeout=10).json()
    batch = {"questions": (demo * 64)[:64]}
    before = requests.get(demo_serve.url + "/health", timeout=10).json()["counts"].get("questions", 0)

    def abandon() -> None:
        try:
            requests.post(demo_serve.url + "/answer/batch", json=batch, timeout=0.3)
        except requests.Timeout:
            pass

    clients = [threading.Thread(target=abandon) for _ in range(20)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    reply = requests.post(demo_serve.url + "/answer", json={"question": "周星驰的身高是多少？"}, timeout=60)
    assert reply.status_code == 200 and reply.json()["answers"] == ['"174cm"']
    answered = requests.get(demo_serve.url + "/health", timeout=10).json()["counts"]["questions"] - before - 1
    assert answered < 20 * 64 // 2, f"{answered} of {20 * 64} abandoned questions were answered"


def test_a_store_removed_under_the_server_is_noticed(kb_store_dir: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    shutil.copytree(kb_store_dir, store)
    with coqa_serve(["--store", str(store)], tmp_path / "serve.log", env=server_env(tmp_path)) as server:
        assert requests.get(server.url + "/health", timeout=10).status_code == 200
        (store / STORE_SUBDIR).rename(tmp_path / "moved-away")
        health = requests.get(server.url + "/health", timeout=10)
        assert health.status_code == 503 and "was replaced or removed" in health.json()["error"], health.text
        # A pipeline process started anew cannot open the store: 503 with the reason, not 500.
        workers = worker_pids(server.process.pid)
        os.kill(workers[0], signal.SIGKILL)
        replies = [requests.post(server.url + "/answer", json={"question": "周星驰的身高是多少？"}, timeout=60) for _ in range(3)]
        assert [reply.status_code for reply in replies][-1] == 503, [reply.text for reply in replies]
        assert "no store at" in replies[-1].json()["error"]
