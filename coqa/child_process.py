"""Child processes of coqa (the pipeline processes of `coqa serve` and of
`coqa answer --jobs`, the server's SPARQL query process): what each does
first (end when its parent ends, leave Ctrl-C to the parent, stay within a
memory limit), how the parent stops a pool of them at once, and a map over
processes that keeps the input's order."""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

PARENT_POLL_SECONDS = 0.5
# How far ahead of the oldest unanswered chunk the children may go (their results are kept meanwhile).
CHUNKS_AHEAD_PER_CHILD = 8
STOP_SECONDS = 5.0

Item = TypeVar("Item")
Result = TypeVar("Result")


class ChildDied(Exception):
    """A child process of `ordered_map` ended before answering what it was sent."""


def die_with_parent() -> None:
    """End this process (at once, without cleanup) soon after its parent has
    gone, however it went (`kill -9` included).

    A thread polling the parent's id rather than prctl(PR_SET_PDEATHSIG):
    that signal fires when the *thread* that started the child ends, and
    process pools start children from threads that come and go.
    """
    # The parent multiprocessing recorded when it started this process: it
    # may have gone before this runs, and then os.getppid() names init.
    started_by = multiprocessing.parent_process()
    parent = started_by.pid if started_by is not None and started_by.pid is not None else os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def ignore_interrupt() -> None:
    """Ctrl-C (sent to every process of the terminal's group) stops the
    parent, which stops this process: ignore it here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def interrupt_ignored_while_spawning() -> Iterator[None]:
    """Children spawned inside this block ignore Ctrl-C from their first
    instruction, while they still import coqa (an `ignore_interrupt()` in
    their initializer comes after that): a Python started with SIGINT
    ignored keeps it ignored. A Ctrl-C that arrives inside the block is lost,
    so keep it to the start of the processes. Only the main thread can set a
    signal's handler; elsewhere the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """Shut `pool` down and kill its processes now, without waiting for the
    questions they are answering (for as long as a hung knowledge base holds
    them): Python joins a process pool's manager thread at exit, which waits
    for them. Before Python 3.14 (`terminate_workers`) there is no public way to do it."""
    terminate = getattr(pool, "terminate_workers", None)
    if terminate is not None:
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()


@dataclass
class _Child:
    process: BaseProcess
    connection: Connection
    holding: int | None = None  # the number of the chunk it is working on


def _serve_chunks(
    connection: Connection, function: Callable[[Any], Any], initializer: Callable[..., None], initargs: tuple[Any, ...]
) -> None:
    ignore_interrupt()
    die_with_parent()
    initializer(*initargs)
    while True:
        try:
            chunk = connection.recv()
        except EOFError:  # the parent closed its end: no more work
            return
        connection.send([function(item) for item in chunk])


def ordered_map(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    processes: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...] = (),
    chunk_size: int = 4,
) -> Iterator[Result]:
    """`function` of each item, in the items' order, computed in `processes`
    spawned children that each first run `initializer(*initargs)`; function,
    initializer, items and results must pickle. ChildDied when a child ends
    (killed, out of memory, an exception) before answering what it was sent.
    The children ignore Ctrl-C and end with this process; when the iteration
    stops early (an exception here, an interrupt, the caller closing it)
    they are killed at once.

    Written here rather than taken from the standard library: a
    multiprocessing.Pool whose worker dies waits for its tasks for ever, and
    concurrent.futures' process pool, whose manager thread races with the
    cancellation of its futures, prints an InvalidStateError traceback on
    Ctrl-C and, on Python 3.10, can hang at exit after a worker died. Each
    child here has its own pipe, which nothing else holds: a child's death
    shows at once as the end of its pipe.
    """
    chunks = [items[start : start + chunk_size] for start in range(0, len(items), chunk_size)]
    context = multiprocessing.get_context("spawn")
    children: list[_Child] = []
    finished = False
    try:
        with interrupt_ignored_while_spawning():
            for _ in range(min(processes, len(chunks))):
                ours, theirs = context.Pipe()
                process = context.Process(target=_serve_chunks, args=(theirs, function, initializer, initargs), daemon=True)
                process.start()
                theirs.close()
                children.append(_Child(process, ours))
        results: dict[int, list[Result]] = {}
        next_to_send = next_to_yield = 0
        while next_to_yield < len(chunks):
            limit = min(len(chunks), next_to_yield + CHUNKS_AHEAD_PER_CHILD * len(children))
            for child in children:
                if child.holding is None and next_to_send < limit:
                    _send(child, next_to_send, chunks[next_to_send])
                    next_to_send += 1
            working = {child.connection: child for child in children if child.holding is not None}
            for ready in wait(list(working)):
                child = working[ready]  # type: ignore[index]
                results[child.holding] = _receive(child)  # type: ignore[index]
                child.holding = None
            while next_to_yield in results:
                yield from results.pop(next_to_yield)
                next_to_yield += 1
        finished = True
    finally:
        _end_children(children, finished)


def _send(child: _Child, number: int, chunk: Sequence[Any]) -> None:
    # One chunk at a time, sent only while the child waits for it: neither
    # side can block writing to a full pipe the other is not reading.
    try:
        child.connection.send(chunk)
    except OSError:
        raise ChildDied(_how_it_ended(child.process)) from None
    child.holding = number


def _receive(child: _Child) -> list[Any]:
    try:
        return child.connection.recv()  # type: ignore[no-any-return]
    except (EOFError, OSError):  # its end of the pipe closed: it ended, maybe within a message
        raise ChildDied(_how_it_ended(child.process)) from None


def _how_it_ended(process: BaseProcess) -> str:
    process.join(STOP_SECONDS)
    code = process.exitcode
    if code is not None and code < 0:
        return f"process {process.pid} was killed by {signal.Signals(-code).name}"
    return f"process {process.pid} ended with exit code {code}"


def _end_children(children: list[_Child], finished: bool) -> None:
    """Idle children (`finished`) end when their pipe closes; otherwise kill them."""
    for child in children:
        child.connection.close()
        if not finished:
            child.process.kill()
    for child in children:
        child.process.join(STOP_SECONDS)
        if child.process.is_alive():
            child.process.kill()
            child.process.join()
