"""The remote backends against servers on 127.0.0.1 that time out or die
under a query: a query the server got is never sent again; only a request
that never left (connection refused) is retried."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from typing import Callable, Iterator

import pytest

from coqa.kb.local_process import free_port

from conftest import Loopback, Reply, Request, never_in_time

QUERY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"


def run_sparql(*options: str, timeout: str = "1", retries: str = "2") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("COQA_")}
    env.update(COQA_TIMEOUT=timeout, COQA_RETRIES=retries, COQA_RETRY_BACKOFF="0.01")
    return subprocess.run(
        [sys.executable, "-m", "coqa.cli.main", "sparql", QUERY, *options],
        capture_output=True, text=True, env=env, timeout=60,
    )


class DyingServer:
    """A server that reads each request and closes the connection without a
    reply, as gStore does when a query is killed for memory; counts requests."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            with connection:
                connection.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data:
                    self.requests += 1

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def dying_server() -> Iterator[DyingServer]:
    server = DyingServer()
    yield server
    server.close()


def backend_options(kind: str, url: str) -> list[str]:
    return ["--gstore", url, "--db", "pkubase"] if kind == "gstore" else ["--endpoint", url + "/query"]


@pytest.mark.parametrize("kind", ["gstore", "sparql"])
def test_a_query_that_timed_out_is_sent_once(
    loopback: Callable[[Callable[[Request], Reply]], Loopback], kind: str
) -> None:
    server = loopback(never_in_time)
    done = run_sparql(*backend_options(kind, server.url))
    assert done.returncode == 1
    assert done.stderr.endswith("no reply within 1 s\n") and done.stderr.count("\n") == 1, done.stderr
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", ["gstore", "sparql"])
def test_a_query_whose_server_died_under_it_is_sent_once(dying_server: DyingServer, kind: str) -> None:
    done = run_sparql(*backend_options(kind, dying_server.url), timeout="5")
    assert done.returncode == 1
    assert "connection closed without a reply" in done.stderr and "attempts" not in done.stderr, done.stderr
    assert dying_server.requests == 1


def test_a_refused_connection_is_retried() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = run_sparql(*backend_options("gstore", url))
    assert done.returncode == 1
    assert done.stderr.endswith("connection refused (3 attempts)\n"), done.stderr
