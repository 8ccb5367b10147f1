"""Serving a coqa store over HTTP with `oxigraph serve` (from the `oxigraph`
PyPI package, extra `coqa[server]`), for the sparql backend, tests and benchmarks."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from coqa.kb.base import KBError
from coqa.testing.local_process import free_port, stop_process

START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def oxigraph_binary() -> str:
    """The `oxigraph` server binary next to this Python, else on PATH."""
    binary = shutil.which("oxigraph", path=str(Path(sys.executable).parent)) or shutil.which("oxigraph")
    if binary is None:
        raise KBError("the oxigraph server binary is missing: pip install 'coqa[server]'")
    return binary


@contextmanager
def serve_store_copy(store_path: Path, work: Path, start_timeout: float = START_TIMEOUT) -> Iterator[str]:
    """Run `oxigraph serve` on 127.0.0.1 over a copy of the pyoxigraph store at
    `store_path` (the copy keeps the original free for embedded readers), in
    the directory `work`; yield its query URL once it answers; stop it after."""
    binary = oxigraph_binary()
    copy = work / "served-store"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(store_path, copy)
    port = free_port()
    log_path = work / "server.log"
    with log_path.open("wb") as log:
        command = [binary, "serve", "--location", str(copy), "--bind", f"127.0.0.1:{port}"]
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/query"
    try:
        _wait_until_answering(url, process, log_path, start_timeout)
        yield url
    finally:
        stop_process(process, STOP_TIMEOUT)
        shutil.rmtree(copy, ignore_errors=True)


def _wait_until_answering(url: str, process: subprocess.Popen, log_path: Path, timeout: float) -> None:
    probe = url + "?" + urllib.parse.urlencode({"query": "ASK {}"})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = log_path.read_text(errors="replace").strip().splitlines()
            raise KBError(f"oxigraph serve exited with {process.returncode}: {log[-1] if log else 'no output'}")
        try:
            with urllib.request.urlopen(probe, timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise KBError(f"oxigraph serve did not answer within {timeout:g} s")
