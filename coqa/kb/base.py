"""The small interface every knowledge-base backend implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from coqa.kb.names import Term


class KBError(Exception):
    """A knowledge-base failure with a one-line message fit for the user
    (server down, timeout, error reply, missing store). Never a traceback."""


class KBUnreachable(KBError):
    """A remote knowledge base that could not be reached at all (connection
    refused, unknown host, no reply): the next query will most likely fail too."""


@dataclass
class QueryResult:
    """Rows of a SELECT query: one tuple per solution, aligned with `variables`;
    an unbound variable is None. Terms are PKU BASE names or literal values.
    For an ASK query, `boolean` is its answer (and there are no rows)."""

    variables: list[str]
    rows: list[tuple[Term | None, ...]] = field(default_factory=list)
    boolean: bool | None = None

    def column(self, index: int = 0) -> list[Term]:
        """The bound values of one column, in row order, without duplicates."""
        seen: dict[Term, None] = {}
        for row in self.rows:
            term = row[index]
            if term is not None:
                seen.setdefault(term, None)
        return list(seen)


class KnowledgeBase(Protocol):
    """A store of PKU BASE triples answering SPARQL SELECT and ASK queries.

    `select` takes a query in PKU BASE style (bare `<name>`s, as in the CCKS
    gold SPARQL); each backend admits it first (`coqa.kb.backends.admission`: bounded,
    parsed, SELECT or ASK only, so nothing else ever reaches a server) and
    translates names as it needs to. It raises KBError for anything the user
    must be told about, including any malformed reply of a remote server.
    A backend that takes several queries at once from different threads says
    how many in an attribute `parallel_queries` (none: one at a time).
    """

    description: str

    def select(self, query: str) -> QueryResult: ...

    def close(self) -> None: ...
