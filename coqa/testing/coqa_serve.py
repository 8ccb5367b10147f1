"""Running `coqa serve` as a child process on 127.0.0.1 (for tests and benchmarks)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from coqa.testing.local_process import free_port, stop_process

START_TIMEOUT = 90.0
STOP_TIMEOUT = 15.0


class ServerFailed(RuntimeError):
    """`coqa serve` exited or did not answer in time; the message has its last log line."""


@dataclass
class RunningServer:
    url: str
    process: subprocess.Popen
    log_path: Path


@contextmanager
def coqa_serve(
    options: Sequence[str],
    log_path: Path,
    env: Mapping[str, str] | None = None,
    start_timeout: float = START_TIMEOUT,
) -> Iterator[RunningServer]:
    """Start `coqa serve OPTIONS --port P` on a free port of 127.0.0.1 with
    this Python, yield it once it answers HTTP, stop it (SIGTERM, then kill) after."""
    port = free_port()
    command = [sys.executable, "-m", "coqa.cli.main", "serve", "--host", "127.0.0.1", "--port", str(port), *options]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=None if env is None else dict(env))
    server = RunningServer(f"http://127.0.0.1:{port}", process, log_path)
    try:
        _wait_until_answering(server, start_timeout)
        yield server
    finally:
        stop_process(process, STOP_TIMEOUT)


def _last_log_line(path: Path) -> str:
    lines = path.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else "no output"


def _wait_until_answering(server: RunningServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise ServerFailed(f"coqa serve exited with {server.process.returncode}: {_last_log_line(server.log_path)}")
        try:
            with urllib.request.urlopen(server.url + "/examples", timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    raise ServerFailed(f"coqa serve did not answer within {timeout:g} s: {_last_log_line(server.log_path)}")
