"""Server processes on 127.0.0.1 that coqa starts for itself, its tests and
its benchmarks (`oxigraph serve`, gStore, Virtuoso, `coqa serve`): a free
port to give them, and a bounded way to stop them; and the worker processes
a coqa process spawned (`coqa answer --jobs`, `coqa serve --workers`)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (right now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float) -> None:
    """SIGTERM, then SIGKILL if the process has not ended within `timeout` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def clean_environment(**extra: str) -> dict[str, str]:
    """The environment of a coqa command run by a test or a benchmark: no COQA_* of the caller, plus `extra`."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("COQA_")}
    environment.update(extra)
    return environment


def worker_pids(parent: int) -> list[int]:
    """The spawned worker processes of `parent` (not its resource tracker), from
    /proc; a process that ends while /proc is read is skipped."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"spawn_main" in command:
            pids.append(int(entry.name))
    return pids
