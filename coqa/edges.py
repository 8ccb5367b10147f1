"""A node's edges one way, read whole in one query where they are few.

Linking reads each candidate entity's edges out and in this way (its degree,
the predicates and types around it), and query generation reads its linked
nodes' neighbourhoods with the very same queries, so that the knowledge
base's result cache answers the second from the rows of the first. A read
that reaches its LIMIT only says that there are more: those rows are an
engine's choice and are never used as facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from coqa.kb.base import KnowledgeBase
from coqa.kb.names import Term
from coqa.shapes import EDGES_IN, EDGES_OUT
from coqa.templates import Template

# A node with at most this many edges one way has them read whole.
EDGES_READ_WHOLE = 1000


@dataclass(frozen=True)
class Edges:
    """What one read of a node's edges one way gave: rows (predicate,
    neighbour), at most EDGES_READ_WHOLE + 1 of them."""

    rows: list[tuple[Term | None, ...]]

    @property
    def complete(self) -> bool:
        """Whether the rows are all the node's edges that way (the same on every engine)."""
        return len(self.rows) <= EDGES_READ_WHOLE

    def counted(self, bound: int) -> int:
        """How many edges there are, counted up to `bound` (at most EDGES_READ_WHOLE)."""
        assert bound <= EDGES_READ_WHOLE, "more edges than were read cannot be counted"
        return min(len(self.rows), bound)


def read_edges(kb: KnowledgeBase, templates: Mapping[str, Template], node: Term, outward: bool) -> Edges:
    """The node's edges out of it (`outward`) or into it (`edges_out`/`edges_in`); a literal has none leaving it."""
    if outward and node.is_literal:
        return Edges([])
    template = templates[EDGES_OUT if outward else EDGES_IN]
    return Edges(kb.select(template.render({"e": node, "limit": EDGES_READ_WHOLE + 1})).rows)
