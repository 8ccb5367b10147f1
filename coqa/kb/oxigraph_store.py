"""Embedded backend: a persistent pyoxigraph store in a local directory."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from coqa.kb.admission import admit
from coqa.kb.base import KBError, QueryResult
from coqa.kb.names import Term, iri_to_name


def term_from_oxigraph(node: object) -> Term | None:
    """PKU BASE term of a pyoxigraph solution value (None when unbound)."""
    if node is None:
        return None
    if isinstance(node, ox.NamedNode):
        name = iri_to_name(node.value)
        return Term.entity(node.value if name is None else name)
    if isinstance(node, ox.Literal):
        return Term.literal(node.value)
    return Term.entity(str(node))


def results_from_oxigraph(solutions: ox.QuerySolutions) -> QueryResult:
    """Convert pyoxigraph solutions to a QueryResult of PKU BASE terms."""
    variables = [v.value for v in solutions.variables]
    rows = [tuple(term_from_oxigraph(s[i]) for i in range(len(variables))) for s in solutions]
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
        admitted = admit(query)
        try:
            solutions = self.store.query(admitted.standard_text)
            if isinstance(solutions, ox.QueryBoolean):
                return QueryResult([], [], boolean=bool(solutions))
            return results_from_oxigraph(solutions)
        except OSError as error:
            raise KBError(f"store error: {error}") from None

    def close(self) -> None:
        del self.store
