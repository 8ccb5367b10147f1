"""What every child process of `coqa serve` does first: end when the server
ends, and (for the SPARQL query process) stay within a memory limit."""

from __future__ import annotations

import os
import resource
import signal
import threading
import time

PARENT_POLL_SECONDS = 0.5


def die_with_parent() -> None:
    """End this process (at once, without cleanup) soon after its parent has
    gone, however it went (`kill -9` included).

    A thread polling the parent's id rather than prctl(PR_SET_PDEATHSIG):
    that signal fires when the *thread* that started the child ends, and the
    server starts children from worker threads that come and go.
    """
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def ignore_interrupt() -> None:
    """Ctrl-C stops the server, which stops this process: ignore it here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def limit_memory(megabytes: int) -> None:
    """Cap this process's data memory (heap and private writable mappings,
    RLIMIT_DATA) at `megabytes`: past it, allocation fails (MemoryError in
    Python, an abort in pyoxigraph's Rust code) instead of the machine
    running out. RLIMIT_DATA rather than RLIMIT_AS: the store's threads
    reserve address space they never use, which RLIMIT_AS would count."""
    limit = megabytes << 20
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
