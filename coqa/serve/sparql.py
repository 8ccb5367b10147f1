"""Raw SPARQL for the HTTP API: SELECT only, at most a number of rows, within a time limit.

The rows are capped by the query itself (a LIMIT one above the cap is put
on it, so the engine stops early and the reply can say it was cut), and the
time by running the query in a child process that is stopped when the
limit passes: the embedded pyoxigraph store cannot cancel a running query,
and a thread left running would keep a core and its memory.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.pool
import re
import signal
import threading
from dataclasses import dataclass

from coqa.config import Settings
from coqa.kb import KnowledgeBase, QueryResult, open_kb
from coqa.kb.base import KBError

# The query form is its first keyword after the prologue (comments, PREFIX
# and BASE declarations); read here because the knowledge-base layer only
# tells a non-SELECT query after running it.
_SELECT_FORM = re.compile(
    r"(?:\s+|\#[^\n]*\n|PREFIX\s+[^\s:]*:\s*<[^<>]*>|BASE\s*<[^<>]*>)*SELECT\b", re.IGNORECASE
)
PROCESS_START_TIMEOUT = 120.0
_TRAILING_LIMIT = re.compile(r"\bLIMIT\s+(\d+)", re.IGNORECASE)


class QueryRejected(ValueError):
    """The query is not one the API runs (not SELECT); the message says why."""


class QueryTimeout(Exception):
    """The query ran past the time limit and was stopped."""


class RunnerUnavailable(Exception):
    """The query process cannot take a query now (busy with another one, or not starting)."""


@dataclass
class LimitedResult:
    """At most `row_limit` rows of a query; `truncated` when it had more."""

    result: QueryResult
    truncated: bool


def check_select(query: str) -> None:
    """QueryRejected unless `query` is a SELECT query."""
    if not _SELECT_FORM.match(query):
        raise QueryRejected("only SELECT queries are accepted")


def with_row_cap(query: str, rows: int) -> str:
    """`query` returning at most `rows` solutions: its own top-level LIMIT
    lowered to `rows`, or `LIMIT rows` added after its last closing brace.

    The solution modifiers are what follows the WHERE clause's closing
    brace; a query ending in a VALUES block gets the LIMIT after that block,
    which engines refuse, and the caller reports the engine's message.
    """
    body_end = query.rfind("}")
    head, tail = query[: body_end + 1], query[body_end + 1 :]
    match = _TRAILING_LIMIT.search(tail)
    if match:
        lowered = min(int(match.group(1)), rows)
        return head + tail[: match.start(1)] + str(lowered) + tail[match.end(1) :]
    return f"{query.rstrip()}\nLIMIT {rows}"


_child_kb: KnowledgeBase | KBError | None = None


def _open_in_child(settings: Settings) -> None:
    # A failure is kept for the first query to raise: an initializer that
    # raises would make the pool start new processes forever.
    global _child_kb
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops this process
    try:
        _child_kb = open_kb(settings.kb_config())
    except KBError as error:
        _child_kb = error


def _ready_in_child() -> bool:
    return True


def _select_in_child(query: str) -> QueryResult:
    if isinstance(_child_kb, KBError):
        raise _child_kb
    assert _child_kb is not None, "query process not initialised"
    return _child_kb.select(query)


class SparqlRunner:
    """Runs SELECT queries against the settings' knowledge base in a child
    process of its own (started by the first query), one query at a time, and
    stops that process (starting a fresh one for the next query) when a query
    runs too long."""

    def __init__(self, settings: Settings, row_limit: int, time_limit: float) -> None:
        self.settings = settings
        self.row_limit = row_limit
        self.time_limit = time_limit
        self._pool: multiprocessing.pool.Pool | None = None
        self._ready = False
        self._lock = threading.Lock()

    def select(self, query: str, rows: int | None = None) -> LimitedResult:
        """At most `rows` (capped at `row_limit`) rows of a SELECT query.

        Raises QueryRejected for another query form, KBError for what the
        knowledge base refused or failed with, QueryTimeout past the time
        limit, RunnerUnavailable when an earlier query still holds the process
        after waiting as long as the time limit or the process does not start.
        """
        check_select(query)
        cap = min(rows or self.row_limit, self.row_limit)
        capped = with_row_cap(query, cap + 1)
        if not self._lock.acquire(timeout=self.time_limit):
            raise RunnerUnavailable("another SPARQL query is still running in this worker; try again")
        try:
            pending = self._ready_process().apply_async(_select_in_child, (capped,))
            try:
                result = pending.get(self.time_limit)
            except multiprocessing.TimeoutError:
                self._stop()
                self._process()  # the next query need not wait for a fresh process to start
                raise QueryTimeout(f"the query ran longer than the {self.time_limit:g} s limit and was stopped") from None
        finally:
            self._lock.release()
        truncated = len(result.rows) > cap
        return LimitedResult(QueryResult(result.variables, result.rows[:cap]), truncated)

    def _process(self) -> multiprocessing.pool.Pool:
        """The query process, started (in the background) if there is none."""
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = context.Pool(1, initializer=_open_in_child, initargs=(self.settings,))
            self._ready = False
        return self._pool

    def _ready_process(self) -> multiprocessing.pool.Pool:
        """The query process once it has started, so that its start-up is not
        counted in the time limit of a query."""
        pool = self._process()
        if not self._ready:
            try:
                pool.apply_async(_ready_in_child).get(PROCESS_START_TIMEOUT)
            except multiprocessing.TimeoutError:
                self._stop()
                raise RunnerUnavailable(f"the SPARQL query process did not start within {PROCESS_START_TIMEOUT:g} s") from None
            self._ready = True
        return pool

    def _stop(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            # The pool's queues hold named semaphores that are released only
            # when the pool object is collected (it sits in reference cycles).
            gc.collect()

    def close(self) -> None:
        """Stop the query process (if one was started)."""
        with self._lock:
            self._stop()

