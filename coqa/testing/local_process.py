"""Server processes on 127.0.0.1 that coqa starts for itself, its tests and
its benchmarks (`oxigraph serve`, gStore, Virtuoso, `coqa serve`): a free
port to give them, and a bounded way to stop them."""

from __future__ import annotations

import socket
import subprocess


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
