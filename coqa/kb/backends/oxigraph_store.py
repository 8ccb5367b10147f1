"""Embedded backend: a persistent pyoxigraph store in a local directory."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pyoxigraph as ox

from coqa.kb.backends.admission import admit_prepared
from coqa.kb.base import KBError, QueryResult
from coqa.kb.names import Term, iri_to_name


@lru_cache(maxsize=1 << 17)
def term_from_oxigraph(node: object) -> Term | None:
    """PKU BASE term of a pyoxigraph solution value (None when unbound).

    Cached by value (pyoxigraph's terms hash and compare by value): the same
    entities and predicates come back in query after query, and this runs for
    every value of every row (hundreds of thousands per dev run); looking a
    value up costs half of decoding its IRI and building its term again.
    """
    # type() rather than isinstance: pyoxigraph's classes cannot be subclassed.
    kind = type(node)
    if kind is ox.NamedNode:
        iri = node.value  # type: ignore[attr-defined]
        name = iri_to_name(iri)
        return Term.entity(iri if name is None else name)
    if kind is ox.Literal:
        return Term.literal(node.value)  # type: ignore[attr-defined]
    if node is None:
        return None
    return Term.entity(str(node))


def results_from_oxigraph(solutions: ox.QuerySolutions) -> QueryResult:
    """Convert pyoxigraph solutions to a QueryResult of PKU BASE terms."""
    variables = [v.value for v in solutions.variables]
    rows = [tuple(map(term_from_oxigraph, solution)) for solution in solutions]
    return QueryResult(variables, rows)


class OxigraphStore:
    """Read access to a store directory made by `coqa load`."""

    def __init__(self, path: str | Path, read_only: bool = True) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise KBError(f"no store at {self.path}: load one with `coqa load KB_DIR --store DIR`")
        try:
            self.store = ox.Store.read_only(str(self.path)) if read_only else ox.Store(str(self.path))
        except OSError as error:
            raise KBError(f"cannot open the store at {self.path}: {error}") from None
        self.description = f"oxigraph store {self.path}"

    def select(self, query: str) -> QueryResult:
        try:
            _, prepared = admit_prepared(query, self.store)
            if isinstance(prepared, ox.QueryBoolean):
                return QueryResult([], [], boolean=bool(prepared))
            return results_from_oxigraph(prepared)
        except OSError as error:
            raise KBError(f"store error: {error}") from None

    def close(self) -> None:
        del self.store
