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

# A node with at most this many edges one way has them read whole: out, as many
# as linking's degree feature counts; in, fewer, since the nodes many things
# point at (a country, a religion) are common link candidates, and reading a
# thousand rows only to learn there are more costs the embedded store about
# as much as counting them (on the CCKS training questions, 7% of the reads
# in had more than 100 edges, 3% more than 1,000).
OUT_READ_WHOLE = 1000
IN_READ_WHOLE = 100


@dataclass(frozen=True)
class Edges:
    """What one read of a node's edges one way gave: rows (predicate,
    neighbour), at most `whole` + 1 of them."""

    rows: list[tuple[Term | None, ...]]
    whole: int  # the most edges read whole

    @property
    def complete(self) -> bool:
        """Whether the rows are all the node's edges that way (the same on every engine)."""
        return len(self.rows) <= self.whole

    def counted(self, bound: int) -> int:
        """How many edges there are, counted up to `bound` (at most `whole`)."""
        assert bound <= self.whole, "more edges than were read cannot be counted"
        return min(len(self.rows), bound)


def read_edges(kb: KnowledgeBase, templates: Mapping[str, Template], node: Term, outward: bool) -> Edges:
    """The node's edges out of it (`outward`) or into it (`edges_out`/`edges_in`); a literal has none leaving it."""
    whole = OUT_READ_WHOLE if outward else IN_READ_WHOLE
    if outward and node.is_literal:
        return Edges([], whole)
    template = templates[EDGES_OUT if outward else EDGES_IN]
    return Edges(kb.select(template.render({"e": node, "limit": whole + 1})).rows, whole)
