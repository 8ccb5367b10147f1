"""Raw SPARQL for the HTTP API: SELECT only, at most a number of rows, within a time limit.

The rows are capped by the query itself (a LIMIT one above the cap is put
on it, so the engine stops early and the reply can say it was cut), and the
time and memory by running the query in a child process that is stopped
when the time limit passes and whose data memory is capped (RLIMIT_DATA):
the embedded pyoxigraph store can neither cancel a running query nor bound
its memory, and a thread left running would keep a core and its memory.
One query runs at a time; another arriving meanwhile is refused at once
(the API answers 503 with Retry-After) rather than queued.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.process
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from coqa.child_process import die_with_parent, ignore_interrupt, limit_memory
from coqa.config import Settings
from coqa.kb import KnowledgeBase, QueryResult, open_kb
from coqa.kb.base import KBError
from coqa.kb.sparql_text import COMMENT, PUNCT, SPACE, Token, structure, tokens

PROCESS_START_TIMEOUT = 120.0
# Data memory of the query process: the store opened read-only needs about
# 100 MB; a cross product sorted by ORDER BY asks for gigabytes.
DEFAULT_MEMORY_MB = 1024


class QueryRejected(ValueError):
    """The query is not one the API runs (not SELECT); the message says why."""


class QueryTimeout(Exception):
    """The query ran past the time limit and was stopped."""


class QueryTooLarge(Exception):
    """The query needed more memory than the limit and was stopped."""


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


def _serve_queries(settings: Settings, connection: Connection, memory_mb: int) -> None:
    """The query process: open the knowledge base, then answer each query
    received on `connection` with ("rows", QueryResult) or ("error", message)."""
    ignore_interrupt()
    die_with_parent()
    limit_memory(memory_mb)
    kb: KnowledgeBase | KBError
    try:
        kb = open_kb(settings.kb_config())
    except KBError as error:  # kept for every query to report: the server itself still serves questions
        kb = error
    connection.send(("ready", None))
    while True:
        try:
            query = connection.recv()
        except EOFError:
            return
        try:
            if isinstance(kb, KBError):
                raise kb
            connection.send(("rows", kb.select(query)))
        except KBError as error:
            connection.send(("error", str(error)))
        except MemoryError:
            connection.send(("memory", None))


class SparqlRunner:
    """Runs SELECT queries against the settings' knowledge base in a child
    process of its own (started by the first query), one query at a time,
    within `memory_mb` of data memory; it stops that process (starting a
    fresh one for the next query) when a query runs too long or dies."""

    def __init__(self, settings: Settings, row_limit: int, time_limit: float, memory_mb: int = DEFAULT_MEMORY_MB) -> None:
        self.settings = settings
        self.row_limit = row_limit
        self.time_limit = time_limit
        self.memory_mb = memory_mb
        self._process: multiprocessing.process.BaseProcess | None = None
        self._connection: Connection | None = None
        self._lock = threading.Lock()

    def select(self, query: str, rows: int | None = None) -> LimitedResult:
        """At most `rows` (capped at `row_limit`) rows of a SELECT query.

        Raises QueryRejected for another query form, KBError for what the
        knowledge base refused or failed with, QueryTimeout past the time
        limit, QueryTooLarge past the memory limit, RunnerUnavailable at once
        when another query holds the process (the caller answers 503 with
        Retry-After) or when the process does not start.
        """
        check_select(query)
        cap = min(rows or self.row_limit, self.row_limit)
        capped = with_row_cap(query, cap + 1)
        if not self._lock.acquire(blocking=False):
            raise RunnerUnavailable("another SPARQL query is running; try again shortly")
        try:
            kind, value = self._run(capped)
        finally:
            self._lock.release()
        if kind == "error":
            raise KBError(value)
        if kind == "memory":
            raise QueryTooLarge(f"the query needed more than the {self.memory_mb:,} MB memory limit and was stopped")
        truncated = len(value.rows) > cap
        return LimitedResult(QueryResult(value.variables, value.rows[:cap]), truncated)

    def _run(self, query: str) -> tuple[str, Any]:
        """("rows", result), ("error", message) or ("memory", None) for
        `query` from the query process; QueryTimeout past the time limit."""
        connection = self._ready_connection()
        connection.send(query)
        if not connection.poll(self.time_limit):
            self._stop()
            raise QueryTimeout(f"the query ran longer than the {self.time_limit:g} s limit and was stopped")
        try:
            return connection.recv()
        except (EOFError, OSError):
            # The process died: past its memory limit (pyoxigraph aborts when an allocation fails).
            self._stop()
            return "memory", None

    def _ready_connection(self) -> Connection:
        """The connection to the query process, started and ready (its
        start-up is not counted in the time limit of a query)."""
        if self._connection is not None and self._process is not None and self._process.is_alive():
            return self._connection
        self._stop()
        context = multiprocessing.get_context("spawn")
        parent_end, child_end = context.Pipe()
        process = context.Process(
            target=_serve_queries, args=(self.settings, child_end, self.memory_mb), name="coqa-sparql", daemon=True
        )
        process.start()
        child_end.close()
        self._process, self._connection = process, parent_end
        try:
            if not parent_end.poll(PROCESS_START_TIMEOUT):
                raise EOFError
            parent_end.recv()
        except (EOFError, OSError):
            self._stop()
            raise RunnerUnavailable(f"the SPARQL query process did not start within {PROCESS_START_TIMEOUT:g} s") from None
        return parent_end

    def _stop(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._process = None

    def close(self) -> None:
        """Stop the query process (if one was started) at once, even while a
        query runs (the request waiting for it gets an error)."""
        process = self._process
        if process is not None:
            process.kill()
        if self._lock.acquire(blocking=False):
            try:
                self._stop()
            finally:
                self._lock.release()
