"""The rows of recently sent queries, kept in memory in front of any backend.

Questions about the same entities send the same queries again: the degree of
a link candidate, the predicates counted around a node, the answers of its
most relevant predicates, the two-hop paths of a hub (on pkubase-bench dev,
answered in order, 4 queries in 10 repeat one sent before). A repeated query
is answered from memory: the same rows, without parsing, planning,
evaluating and converting them again (or a round trip to a server).

How long rows are kept is the cache's `lifetime` (see `CachedKnowledgeBase`):
for a run of `coqa answer`/`eval`/`train` the knowledge base is taken not to
change while coqa reads it, so rows stay until the row budget pushes them
out; `coqa serve`, which runs for days in front of an engine whose data may
change, reads a query again once its rows are older than `kb_cache_seconds`.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Sequence

from coqa.kb.base import KBError, KnowledgeBase, QueryResult
from coqa.kb.names import Term

# A result larger than this share of the budget is not kept: one hub's rows must not flush the rest.
LARGEST_SHARE = 0.1


class CachedKnowledgeBase:
    """`kb` answering a query it answered recently from memory. At most
    `max_rows` rows are kept in all, for the most recently used queries;
    0 keeps none. Every call gets its own QueryResult (a copy of the row
    list; the rows are tuples, shared).

    `lifetime`: None keeps rows until the budget pushes them out (a run over
    a knowledge base that does not change meanwhile); a positive number of
    seconds reads a query again once its rows are older than that (a server
    whose data may change); 0 keeps rows for the question that asked only
    (`start_question` forgets them)."""

    def __init__(
        self,
        kb: KnowledgeBase,
        max_rows: int,
        lifetime: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if lifetime is not None and lifetime < 0:
            raise ValueError(f"lifetime must be None or at least 0 seconds, not {lifetime}")
        self.kb = kb
        self.description = kb.description
        self.max_rows = max_rows
        self.lifetime = lifetime
        self._clock = clock
        self._results: dict[str, tuple[QueryResult, float]] = {}  # query -> (rows, when read); least recently used first
        self._rows = 0
        # Queries may come from several threads where `kb` takes them (querygen's bounded pool): the kept rows
        # change under this lock; the queries themselves run outside it.
        self._lock = threading.Lock()
        self.parallel_queries: int = getattr(kb, "parallel_queries", 1)

    @property
    def across_questions(self) -> bool:
        """Whether rows may serve a later question than the one that asked."""
        return self.max_rows > 0 and self.lifetime != 0

    def start_question(self) -> None:
        """Called before each question: forgets the rows when they serve one question only."""
        if self.lifetime == 0:
            self._forget()

    def _forget(self) -> None:
        with self._lock:
            self._results.clear()
            self._rows = 0

    def select(self, query: str) -> QueryResult:
        if self.max_rows <= 0:
            return self.kb.select(query)
        result = self._kept(query)
        if result is None:
            result = self.kb.select(query)
            self._keep(query, result)
        return QueryResult(list(result.variables), list(result.rows), result.boolean)

    def select_by_value(self, query_for: Callable[[Sequence[Term]], str], values: Sequence[Term]) -> list[tuple[Term | None, ...]]:
        """The rows of `query_for(values)`, a query whose first variable takes
        each of `values` (a VALUES block) and whose rows for one value are
        those of `query_for([value])`, grouped by value in the order of
        `values`. Across questions, the rows of each value are kept as the
        result of its own query, so the values of a recent query (a hub's
        predicates, asked again by the next question beside a few others)
        are not asked again: the others are, in one query. A knowledge base
        whose rows serve one question only is sent `query_for(values)`."""
        return self._by_value(query_for, values, limit=0) or []

    def select_by_value_within(
        self, query_for: Callable[[Sequence[Term]], str], values: Sequence[Term], limit: int
    ) -> list[tuple[Term | None, ...]] | None:
        """`select_by_value` for a query that ends in a LIMIT of `limit` rows:
        its rows are returned (and kept) only when the query sent got fewer,
        so that they are all its rows on every engine; None when it reached
        the limit (which rows an engine returns then is its choice)."""
        return self._by_value(query_for, values, limit)

    def _by_value(
        self, query_for: Callable[[Sequence[Term]], str], values: Sequence[Term], limit: int
    ) -> list[tuple[Term | None, ...]] | None:
        """`select_by_value_within`; `limit` 0: the query has no LIMIT."""
        if not self.across_questions:
            rows = self.kb.select(query_for(values)).rows
            return None if limit and len(rows) >= limit else rows
        single = lambda value: query_for([value])  # noqa: E731
        parts, missing = self._kept_parts(values, single)
        read = read_split(self.kb, query_for, missing, single, projected=False)
        if limit and sum(len(result.rows) for result in read.values()) >= limit:
            return None
        self._keep_parts(read, single)
        parts.update((value, result.rows) for value, result in read.items())
        return [row for value in values for row in parts[value]]

    def select_split(
        self,
        batched: Callable[[Sequence[Term]], str],
        values: Sequence[Term],
        single: Callable[[Term], str],
        projected: bool,
        per_query: int = 0,
    ) -> dict[Term, list[tuple[Term | None, ...]]]:
        """The rows of `single(value)` for each of `values`, read with as few
        queries as the kept rows allow: `batched(missing)` is a query whose
        first variable takes each missing value (a VALUES block) and whose rows
        of one value are those of `single(value)`, with that first column too
        when the single query has it (`projected` False) or without it
        (`projected` True: the single query names the value as a constant).
        The rows of each value are kept as the result of `single(value)` (for
        as long as the cache keeps rows), so a later query asking it alone or
        beside others finds them. The missing values are asked `per_query` at a
        time (0: all in one query); a single one with its own query when the
        single query does not name the value in a column (`projected`)."""
        parts, missing = self._kept_parts(values, single)
        read = read_split(self.kb, batched, missing, single, projected, per_query)
        self._keep_parts(read, single)
        parts.update((value, result.rows) for value, result in read.items())
        return parts

    def _kept_parts(
        self, values: Sequence[Term], single: Callable[[Term], str]
    ) -> tuple[dict[Term, list[tuple[Term | None, ...]]], list[Term]]:
        """The kept rows of `single(value)` per value, and the distinct values that have none."""
        parts: dict[Term, list[tuple[Term | None, ...]]] = {}
        if self.max_rows > 0:
            for value in values:
                kept = self._kept(single(value))
                if kept is not None:
                    parts[value] = kept.rows
        return parts, [value for value in dict.fromkeys(values) if value not in parts]

    def _keep_parts(self, read: dict[Term, QueryResult], single: Callable[[Term], str]) -> None:
        """Keep each value's rows just read as the result of `single(value)`."""
        if self.max_rows > 0:
            for value, result in read.items():
                self._keep(single(value), result)

    def _kept(self, query: str) -> QueryResult | None:
        """The kept rows of `query`, now the most recently used; None when
        they are not kept or older than the lifetime (then they are dropped)."""
        with self._lock:
            entry = self._results.pop(query, None)
            if entry is None:
                return None
            result, read_at = entry
            if self.lifetime and self._clock() - read_at > self.lifetime:
                self._rows -= _size(result)
                return None
            self._results[query] = entry
            return result

    def _keep(self, query: str, result: QueryResult) -> None:
        """Keep the rows of a query just answered, unless they take too large a share; drop the least recently used."""
        if len(result.rows) > self.max_rows * LARGEST_SHARE:
            return
        with self._lock:
            replaced = self._results.pop(query, None)
            if replaced is not None:
                self._rows -= _size(replaced[0])
            self._results[query] = (result, self._clock())
            self._rows += _size(result)
            while self._rows > self.max_rows and self._results:
                self._rows -= _size(self._results.pop(next(iter(self._results)))[0])

    def close(self) -> None:
        self._forget()
        self.kb.close()


def _size(result: QueryResult) -> int:
    """The room a result takes in the budget: its rows, and one for the entry (an empty result takes room too)."""
    return len(result.rows) + 1


def read_split(
    kb: KnowledgeBase,
    batched: Callable[[Sequence[Term]], str],
    values: Sequence[Term],
    single: Callable[[Term], str],
    projected: bool,
    per_query: int = 0,
) -> dict[Term, QueryResult]:
    """The result of `single(value)` for each of the distinct `values`, read
    `per_query` values a query (0: all in one) through `batched`, as
    `CachedKnowledgeBase.select_split` describes; a value alone in its query
    is asked with its own query when that does not name the value in a
    column (`projected`)."""
    results: dict[Term, QueryResult] = {}
    size = per_query or max(len(values), 1)
    for chunk in (values[start : start + size] for start in range(0, len(values), size)):
        if len(chunk) == 1 and projected:
            results[chunk[0]] = kb.select(single(chunk[0]))
            continue
        result = kb.select(batched(chunk))
        variables = result.variables[1:] if projected else list(result.variables)
        for value, rows in split_rows(result.rows, chunk, projected).items():
            results[value] = QueryResult(variables, rows)
    return results


def split_rows(
    rows: Sequence[tuple[Term | None, ...]], values: Sequence[Term], projected: bool
) -> dict[Term, list[tuple[Term | None, ...]]]:
    """The rows of a query over several `values` (its first column), grouped
    by value: every value gets its list (empty when it has no row), in row
    order, without the first column when `projected`. KBError for a row
    whose first column is none of the values: an engine that answered
    another value than asked would otherwise lose rows unseen."""
    parts: dict[Term, list[tuple[Term | None, ...]]] = {value: [] for value in values}
    for row in rows:
        part = parts.get(row[0]) if row[0] is not None else None
        if part is None:
            raise KBError(f"a query over several values answered for {row[0]}, which it was not asked about")
        part.append(row[1:] if projected else row)
    return parts
