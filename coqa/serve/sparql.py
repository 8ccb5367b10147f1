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
import signal
import threading
from dataclasses import dataclass

from coqa.config import Settings
from coqa.kb import KnowledgeBase, QueryResult, open_kb
from coqa.kb.base import KBError
from coqa.kb.sparql_text import COMMENT, PUNCT, SPACE, Token, structure, tokens

PROCESS_START_TIMEOUT = 120.0


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
    """QueryRejected unless `query` is a SELECT query.

    The form is the first keyword after the prologue (PREFIX and BASE
    declarations), read from the engine's tokens (`coqa.kb.sparql_text`):
    read here because the knowledge-base layer only tells a non-SELECT query
    after running it.
    """
    words = [token.text.upper() for token in structure(query)]
    position = 0
    while position < len(words) and words[position] in ("PREFIX", "BASE"):
        position += 2 if words[position] == "PREFIX" else 1
    if position >= len(words) or words[position] != "SELECT":
        raise QueryRejected("only SELECT queries are accepted")


_AGGREGATES = {"COUNT", "SUM", "MIN", "MAX", "AVG", "SAMPLE", "GROUP_CONCAT"}


def with_row_cap(query: str, rows: int) -> str:
    """`query` (without its comments) returning at most `rows` solutions: its
    own top-level LIMIT lowered to `rows`, or `LIMIT rows` added at its end.

    The solution modifiers are what follows the WHERE clause's closing
    brace (a LIMIT in a comment is no LIMIT: comments are the engine's, see
    `coqa.kb.sparql_text`); a query ending in a VALUES block gets the LIMIT
    after that block, which engines refuse, and the caller reports the
    engine's message. A query that aggregates with no GROUP BY has one row
    and gets no LIMIT (a LIMIT of 1 or more is dropped): gStore applies a
    LIMIT before counting, so `COUNT(*) ... LIMIT 3` answers 3 there.
    """
    parts = [token for token in tokens(query) if token.kind != COMMENT]
    closing = [index for index, token in enumerate(parts) if token.kind == PUNCT and token.text == "}"]
    after = [index for index in range(closing[-1] + 1 if closing else 0, len(parts)) if parts[index].is_structure]
    words = [parts[index].text.upper() for index in after]
    one_row = "GROUP" not in words and _aggregates(parts)
    for position, index in enumerate(after[:-1]):
        number = parts[after[position + 1]]
        if words[position] == "LIMIT" and number.text.isdigit():
            if one_row and int(number.text) > 0:
                parts[index] = parts[after[position + 1]] = Token(SPACE, "")
            else:
                parts[after[position + 1]] = Token(number.kind, str(min(int(number.text), rows)))
            return "".join(token.text for token in parts)
    text = "".join(token.text for token in parts)
    return text if one_row else text.rstrip() + f"\nLIMIT {rows}"


def _aggregates(parts: list[Token]) -> bool:
    """True when the outermost projection (between SELECT and the first `{`) calls an aggregate."""
    words = []
    for token in parts:
        if token.kind == PUNCT and token.text == "{":
            break
        if token.is_structure:
            words.append(token.text.upper())
    return "SELECT" in words and any(word in _AGGREGATES for word in words[words.index("SELECT") :])


_child_kb: KnowledgeBase | KBError | None = None


def _open_in_child(settings: Settings) -> None:
    # A failure is kept for the first query to raise: an initializer that
    # raises would make the pool start new processes forever.
    global _child_kb
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops this process
    try:
        _child_kb = open_kb(settings)
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

