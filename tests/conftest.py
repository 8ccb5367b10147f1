"""Shared fixtures: a knowledge base in an embedded store, the same data behind
a real `oxigraph serve` process and a real gStore, and small loopback HTTP
servers for protocol-level tests (error replies, slow servers)."""

from __future__ import annotations

import http.server
import os
import socket
import socketserver
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

import pyoxigraph as ox
import pytest

from coqa.config import default_settings
from coqa.dataset import read_ccks
from coqa.kb import STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KnowledgeBase, QueryResult
from coqa.kb.demo import DEMO_CCKS, DEMO_DIR, DEMO_KB_FILES, ensure_demo_store
from coqa.kb.loading.export import GSTORE, NTRIPLES, export_kb, render_triple
from coqa.kb.loading.formats import Triple
from coqa.kb.loading.loader import load_kb
from coqa.kb.loading.report import LoadReport
from coqa.kb.names import Term, name_to_iri
from coqa.pipeline import Pipeline
from coqa.testing.gstore_server import GStoreServer, gstore_available, serve_gstore
from coqa.testing.oxigraph_server import serve_store_copy
from coqa.testing.virtuoso_server import serve_virtuoso, virtuoso_available
from coqa.training import Trainer

REPO_ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = REPO_ROOT.parent / "shared" / "data" / "pkubase-bench"
GSTORE_TOOLS = REPO_ROOT.parent / "shared" / "tools" / "gstore-1.2"
# Tests of code that reads the shared pkubase-bench files: skipped, saying why, when they are absent.
needs_bench = pytest.mark.skipif(not BENCH_DIR.is_dir(), reason=f"the pkubase-bench data set is not at {BENCH_DIR}")
VIRTUOSO_SCRIPT = REPO_ROOT.parent / "shared" / "tools" / "virtuoso" / "start-virtuoso.sh"
SERVER_START_TIMEOUT = 30.0

WRITER = "林海_（虚构作家）"

# Invented facts, added to the shipped demo knowledge base so that every quirk the
# backends must agree on is present: names with a trailing space, quotes, `|`,
# `^`, braces and a backslash; literals with quotes and a tab; numbers for FILTER.
FIXTURE_FACTS: list[tuple[str, str, Term]] = [
    (WRITER, "代表作品", Term.entity("雪夜行")),
    (WRITER, "代表作品", Term.entity("北河记")),
    (WRITER, "出生日期", Term.literal("1931年5月2日")),
    ("雪夜行", "作者", Term.entity(WRITER)),
    ("北河记", "作者", Term.entity(WRITER)),
    ("青石志", "作者", Term.entity("苏岚_（虚构作家）")),
    ("雪夜行", "类型", Term.entity("虚构长篇小说")),
    ("北河记", "类型", Term.entity("虚构长篇小说")),
    ("青石志", "类型", Term.entity("虚构长篇小说")),
    ("雪夜行", "出版社", Term.entity("青石出版社")),
    ("青石志", "出版社", Term.entity("青石出版社")),
    ("青石出版社", "所在地", Term.entity("云溪市")),
    ("云溪市", "誉称", Term.literal("千湖之城")),
    ("雪夜行", "别名", Term.literal('又名"雪行"')),
    ("雪夜行", "页数", Term.literal("320")),
    ("北河记", "页数", Term.literal("512")),
    ("青石志", "页数", Term.literal("88")),
    ("2030年云溪运动会 ", "举办城市", Term.entity("云溪市")),
    ('"红线"行动', "发起者", Term.entity(WRITER)),
    ("甲|乙", "组成", Term.entity("甲")),
    ("甲|乙", "组成", Term.entity("乙")),
    ("A^B {C}\\D", "备注", Term.literal("制表\t符")),
]


class CountingStore(OxigraphStore):
    """The real embedded store, counting the queries that reach it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.sent: list[str] = []

    def select(self, query: str) -> QueryResult:
        self.sent.append(query)
        return super().select(query)


class CountingKnowledgeBase:
    """Any knowledge base, counting the queries that reach it."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb, self.description, self.sent = kb, kb.description, 0

    def select(self, query: str) -> QueryResult:
        self.sent += 1
        return self.kb.select(query)

    def close(self) -> None:
        self.kb.close()


def _node(term: Term) -> ox.NamedNode | ox.Literal:
    return ox.Literal(term.value) if term.is_literal else ox.NamedNode(name_to_iri(term.value))


def add_facts(store_path: Path, facts: list[tuple[str, str, Term]]) -> None:
    """Write facts into the pyoxigraph store at `store_path` with the name codec."""
    store = ox.Store(str(store_path))
    store.extend(
        ox.Quad(_node(Term.entity(s)), _node(Term.entity(p)), _node(o), ox.DefaultGraph()) for s, p, o in facts
    )
    store.flush()
    del store


@pytest.fixture(autouse=True)
def _no_coqa_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see the built-in settings, not the COQA_* variables of whoever runs them."""
    for key in [key for key in os.environ if key.startswith("COQA_")]:
        monkeypatch.delenv(key)


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where browser tests save what the page showed: $COQA_SCREENSHOT_DIR, else
    `screenshots0/` in pytest's temporary directory (read before the COQA_
    variables are hidden from each test)."""
    configured = os.environ.get("COQA_SCREENSHOT_DIR")
    if configured:
        Path(configured).mkdir(parents=True, exist_ok=True)
        return Path(configured)
    return tmp_path_factory.mktemp("screenshots", numbered=True)


@pytest.fixture(scope="session")
def kb_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store directory (`coqa load` layout) holding the demo KB plus FIXTURE_FACTS."""
    store_dir = tmp_path_factory.mktemp("kb") / "store"
    load_kb([DEMO_DIR / name for name in DEMO_KB_FILES], store_dir, progress=False)
    add_facts(store_dir / STORE_SUBDIR, FIXTURE_FACTS)
    return store_dir


@pytest.fixture(scope="session")
def embedded_kb(kb_store_dir: Path) -> Iterator[OxigraphStore]:
    """The embedded backend over `kb_store_dir`."""
    kb = OxigraphStore(kb_store_dir / STORE_SUBDIR)
    yield kb
    kb.close()


@pytest.fixture(scope="session")
def oxigraph_server(kb_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The query URL of a real `oxigraph serve` on 127.0.0.1 over a copy of `kb_store_dir`."""
    with serve_store_copy(kb_store_dir / STORE_SUBDIR, tmp_path_factory.mktemp("server")) as url:
        yield url


@pytest.fixture(scope="session")
def bench_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared pkubase-bench data set loaded by `load_kb` (skips when it is absent)."""
    if not (BENCH_DIR / "pkubase-triples.txt").is_file():
        pytest.skip(f"the pkubase-bench data set is not at {BENCH_DIR}")
    store_dir = tmp_path_factory.mktemp("bench") / "store"
    load_kb([BENCH_DIR], store_dir, progress=False)
    return store_dir


@pytest.fixture(scope="session")
def bench_server(bench_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The query URL of `oxigraph serve` over a copy of `bench_store_dir`."""
    with serve_store_copy(bench_store_dir / STORE_SUBDIR, tmp_path_factory.mktemp("bench-server")) as url:
        yield url


def gstore_tools() -> Path:
    """The gStore tools folder; skips the test, saying why, when no gStore can run here."""
    reason = gstore_available(GSTORE_TOOLS)
    if reason:
        pytest.skip(f"no real gStore on this machine: {reason}")
    return GSTORE_TOOLS


@pytest.fixture(scope="session")
def gstore_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GStoreServer]:
    """A real gStore on 127.0.0.1 holding the demo KB plus FIXTURE_FACTS, from `coqa export --to gstore`."""
    tools = gstore_tools()
    work = tmp_path_factory.mktemp("gstore")
    nt_file = work / "kb.nt"
    export_kb([DEMO_DIR / name for name in DEMO_KB_FILES], GSTORE, nt_file, progress=False)
    with nt_file.open("a", encoding="utf-8") as out:
        out.writelines(render_triple(Triple(s, p, o), GSTORE) for s, p, o in FIXTURE_FACTS)
    with serve_gstore(tools, nt_file, work) as server:
        yield server


@pytest.fixture(scope="session")
def bench_gstore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GStoreServer]:
    """A real gStore holding pkubase-bench as `coqa export --to gstore` writes it."""
    if not (BENCH_DIR / "pkubase-triples.txt").is_file():
        pytest.skip(f"the pkubase-bench data set is not at {BENCH_DIR}")
    tools = gstore_tools()
    work = tmp_path_factory.mktemp("bench-gstore")
    nt_file = work / "pkubase.nt"
    export_kb([BENCH_DIR], GSTORE, nt_file, progress=False)
    with serve_gstore(tools, nt_file, work) as server:
        yield server


@pytest.fixture(scope="session")
def bench_virtuoso(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The SPARQL endpoint URL of a real Virtuoso holding pkubase-bench as
    `coqa export --to ntriples` writes it (skips, saying why, when Virtuoso cannot run here)."""
    if not (BENCH_DIR / "pkubase-triples.txt").is_file():
        pytest.skip(f"the pkubase-bench data set is not at {BENCH_DIR}")
    reason = virtuoso_available(VIRTUOSO_SCRIPT)
    if reason:
        pytest.skip(f"no real Virtuoso on this machine: {reason}")
    work = tmp_path_factory.mktemp("bench-virtuoso")
    (work / "load").mkdir()
    export_kb([BENCH_DIR], NTRIPLES, work / "load" / "pkubase.nt", progress=False)
    with serve_virtuoso(VIRTUOSO_SCRIPT, work / "load", work) as url:
        yield url


# --- loopback HTTP servers for protocol tests -------------------------------


@dataclass
class Request:
    """What a loopback server received."""

    method: str
    path: str
    params: dict[str, list[str]]
    body: bytes
    time: float
    stopping: threading.Event


@dataclass
class Reply:
    status: int
    body: bytes | str
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Loopback:
    """A running loopback server; `requests` lists what it received, in order."""

    url: str
    requests: list[Request] = field(default_factory=list)


def never_in_time(request: Request) -> Reply:
    """A reply that comes only when the test is over (a server that hangs)."""
    request.stopping.wait(SERVER_START_TIMEOUT)
    return Reply(503, "too late", "text/plain")


@pytest.fixture
def loopback() -> Iterator[Callable[[Callable[[Request], Reply]], Loopback]]:
    """Factory: start an HTTP server on 127.0.0.1 answering with `respond(request)`.

    A slow `respond` waits on `request.stopping`, which is set at the end of
    the test, when every server is shut down.
    """
    servers: list[http.server.ThreadingHTTPServer] = []
    stopping = threading.Event()

    def start(respond: Callable[[Request], Reply]) -> Loopback:
        state = Loopback("")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(respond, state, stopping))
        server.daemon_threads = True
        state.url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(server)
        return state

    yield start
    stopping.set()
    for server in servers:
        server.shutdown()
        server.server_close()


def _handler(
    respond: Callable[[Request], Reply], state: Loopback, stopping: threading.Event
) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _serve(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            params = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
            if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
                params.update(urllib.parse.parse_qs(body.decode("utf-8"), keep_blank_values=True))
            request = Request(self.command, parts.path, params, body, time.monotonic(), stopping)
            state.requests.append(request)
            reply = respond(request)
            payload = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # the client gave up (timeout tests)

        do_GET = do_POST = _serve

        def log_message(self, format: str, *args: object) -> None:
            """Silent: pytest output stays readable."""

    return Handler


# Helpers of the loading tests (unit and integration).
def write(directory: Path, name: str, content: str | bytes) -> Path:
    path = directory / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def rejects_rows(path: Path) -> list[list[str]]:
    lines = path.read_bytes().decode("utf-8").split("\n")  # raw lines may hold a "\r"
    assert lines[0] == "file\tline\treason\traw"
    return [line.split("\t", 3) for line in lines[1:] if line]


def assert_counts_add_up(report: LoadReport) -> None:
    for file in [*report.files, report.total]:
        assert file.lines == file.loaded + file.repaired + file.rejected + file.blank, file


# A small labelled DBQA file written for the tests (invented places and facts).
RIVERS = ["青川河", "白石江", "落霞河", "云溪江", "松岭河", "碧水江", "金沙溪", "望月河", "清风江", "鹿鸣河"]


def labelled_lines() -> list[str]:
    """Ten questions in the 2016 order, four sentences each, the second one right."""
    lines = []
    for number, river in enumerate(RIVERS):
        other = RIVERS[(number + 1) % len(RIVERS)]
        question = f"{river}全长多少公里？"
        sentences = [
            (f"{river}是一条美丽的河流。", 0),
            (f"{river}全长约{300 + number * 17}公里，流域面积很大。", 1),
            (f"{other}的两岸有很多村庄。", 0),
            ("当地人每年都会举办节日。", 0),
        ]
        lines += [f"{question}\t{sentence}\t{label}" for sentence, label in sentences]
    return lines


@pytest.fixture
def labelled_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.txt"
    path.write_text("\n".join(labelled_lines()) + "\n", encoding="utf-8")
    return path


# The demo knowledge base in a private cache and a small model trained on it
# (the shipped model is trained on pkubase-bench and may be retrained at any time).
@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def demo_model(demo_store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model trained on the demo CCKS questions over the demo knowledge base."""
    settings = replace(default_settings(), store=demo_store)
    model, _ = Trainer(Pipeline.without_model(settings), settings).train(read_ccks(DEMO_CCKS))
    path = tmp_path_factory.mktemp("model") / "demo"
    model.save(path)
    return path


RawBehaviour = Callable[[socket.socket, bytes, "RawServer"], object]


class RawServer:
    """A server on 127.0.0.1 that speaks raw HTTP over its sockets, so it can
    trickle bytes, close mid-reply or say nothing: it reads each request
    (head and Content-Length body, whole, so that closing never resets the
    connection) on kept-alive connections, keeps it in `requests`, and
    answers with `behaviour(connection, request, server)`; the connection
    ends when the behaviour returns "close" or the server is stopping."""

    def __init__(self, behaviour: RawBehaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[bytes] = []
        self.connections = 0
        self.stopping = threading.Event()
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner.connections += 1
                self.request.settimeout(10)
                reader = self.request.makefile("rb")
                while not owner.stopping.is_set():
                    head = b""
                    while not head.endswith(b"\r\n\r\n"):
                        line = reader.readline()
                        if not line:
                            return
                        head += line
                    length = next(
                        (int(h.split(b":")[1]) for h in head.split(b"\r\n") if h.lower().startswith(b"content-length:")), 0
                    )
                    request = head + reader.read(length)
                    owner.requests.append(request)
                    try:
                        if owner.behaviour(self.request, request, owner) == "close":
                            return
                    except OSError:
                        return

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def raw_server() -> Iterator[Callable[[RawBehaviour], RawServer]]:
    """Factory: start a `RawServer` with a behaviour; all are closed at the end of the test."""
    servers: list[RawServer] = []

    def start(behaviour: RawBehaviour) -> RawServer:
        servers.append(RawServer(behaviour))
        return servers[-1]

    yield start
    for server in servers:
        server.close()
