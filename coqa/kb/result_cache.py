"""The rows of recently sent queries, kept in memory in front of any backend.

Questions about the same entities send the same queries again: the degree of
a link candidate, the predicates counted around a node, the answers of its
most relevant predicates, the two-hop paths of a hub (on pkubase-bench dev,
answered in order, 4 queries in 10 repeat one sent before). A repeated query
is answered from memory: the same rows, without parsing, planning,
evaluating and converting them again (or a round trip to a server). The
rows are kept from one question to the next only where the knowledge base
cannot change meanwhile (see `CachedKnowledgeBase`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Sequence

from coqa.kb.base import KnowledgeBase, QueryResult
from coqa.kb.names import Term

# A result larger than this share of the budget is not kept: one hub's rows must not flush the rest.
LARGEST_SHARE = 0.1


class CachedKnowledgeBase:
    """`kb` answering a query it answered recently from memory. At most
    `max_rows` rows are kept in all, for the most recently used queries;
    0 keeps none. Every call gets its own QueryResult (a copy of the row
    list; the rows are tuples, shared). `across_questions`: keep the rows
    from one question to the next, for a knowledge base that cannot change
    while coqa runs; otherwise `start_question` forgets them, so they serve
    only the question that asked (a server's data may change, or the server
    go down, between two questions, and that must show)."""

    def __init__(self, kb: KnowledgeBase, max_rows: int, across_questions: bool = True) -> None:
        self.kb = kb
        self.description = kb.description
        self.max_rows = max_rows
        self.across_questions = across_questions
        self._results: dict[str, QueryResult] = {}  # least recently used first
        self._rows = 0

    def start_question(self) -> None:
        """Called before each question: forgets the rows unless they are kept across questions."""
        if not self.across_questions:
            self._forget()

    def _forget(self) -> None:
        self._results.clear()
        self._rows = 0

    def select(self, query: str) -> QueryResult:
        if self.max_rows <= 0:
            return self.kb.select(query)
        result = self._results.pop(query, None)
        if result is None:
            result = self.kb.select(query)
            self._keep(query, result)
        else:
            self._results[query] = result
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
        if self.max_rows <= 0 or not self.across_questions:
            return self.kb.select(query_for(values)).rows
        alone = {value: query_for([value]) for value in values}
        parts: dict[Term, list[tuple[Term | None, ...]]] = {}
        for value in values:
            kept = self._results.pop(alone[value], None)
            if kept is not None:
                self._results[alone[value]] = kept
                parts[value] = kept.rows
        missing = [value for value in values if value not in parts]
        if missing:
            result = self.kb.select(query_for(missing))
            by_value: dict[Term | None, list[tuple[Term | None, ...]]] = defaultdict(list)
            for row in result.rows:
                by_value[row[0]].append(row)
            for value in missing:
                parts[value] = by_value.get(value, [])
                self._keep(alone[value], QueryResult(list(result.variables), parts[value]))
        return [row for value in values for row in parts[value]]

    def _keep(self, query: str, result: QueryResult) -> None:
        """Keep the rows of a query just answered, unless they take too large a share; drop the least recently used."""
        if len(result.rows) > self.max_rows * LARGEST_SHARE:
            return
        self._results[query] = result
        self._rows += _size(result)
        while self._rows > self.max_rows and self._results:
            self._rows -= _size(self._results.pop(next(iter(self._results))))

    def close(self) -> None:
        self._forget()
        self.kb.close()


def _size(result: QueryResult) -> int:
    """The room a result takes in the budget: its rows, and one for the entry (an empty result takes room too)."""
    return len(result.rows) + 1
