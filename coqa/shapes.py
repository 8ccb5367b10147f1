"""The registry of query shapes: the one home of what a shape is.

A shape is a candidate SPARQL template of coqa/queries/ (`<name>.rq`) with
what the other stages need to know about it: how query generation finds its
instances (its `family` and, for families that ask the knowledge base for
paths, its `discovery` template), which way its first predicate is read from
the linked node (`outward`), which shape it counts (COUNT variants), which
category of gold query it expresses (the per-shape breakdown of `coqa eval`),
and the ranking features it contributes. Query generation, ranking, coverage
and evaluation read this registry; adding a shape of an existing family is
one entry in SHAPES plus its template file (a test checks that the two agree).
"""

from __future__ import annotations

from dataclasses import dataclass

# Families: how query generation instantiates a shape (one generator each in coqa.querygen.generator).
ONE_HOP = "one hop"
CHAIN = "chain"
STAR = "star"
STAR3 = "three-entity star"
STAR_HOP = "star then hop"
TYPED = "type constraint"
FACT_CHECKED = "fact checked"
RELATION = "relation"
COUNT = "count"

# Categories of gold queries (coqa.evaluation.categories classifies a gold query into one).
GOLD_ONE_HOP = "one hop"
GOLD_CHAIN = "chain"
GOLD_STAR = "star"
GOLD_TYPE_CONSTRAINT = "type constraint"
GOLD_LITERAL_CONSTRAINT = "literal constraint"
GOLD_PREDICATE_ANSWER = "predicate answer"
GOLD_COMPLEX = "complex"
GOLD_CATEGORIES = (
    GOLD_ONE_HOP, GOLD_CHAIN, GOLD_STAR, GOLD_TYPE_CONSTRAINT, GOLD_LITERAL_CONSTRAINT, GOLD_PREDICATE_ANSWER, GOLD_COMPLEX,
)  # fmt: skip

TYPE_PREDICATE = "类型"


@dataclass(frozen=True)
class Shape:
    """One candidate query shape.

    `outward`: the first predicate of the path leaves the first linked node
    (`<e> <p> ?x`), else it arrives at it (`?x <p> <e>`); a literal can only
    stand where the path arrives. `counts`: for a COUNT shape, the shape whose
    candidates it counts. `gold_category`: the category of a gold query
    written in this shape with entities in its slots.
    """

    name: str
    family: str
    outward: bool
    gold_category: str
    discovery: str | None = None
    fetch: str | None = None  # chains: the template fetching the answers of the discovered paths
    counts: str | None = None
    second_outward: bool = False  # two-node shapes: the path leaves the second node too

    @property
    def feature(self) -> str:
        """The name of this shape's indicator feature in the ranker."""
        return f"shape_{self.name}"

    def accepts_literal_first(self) -> bool:
        """Whether the first linked node may be a literal value (a literal is never a subject)."""
        return not self.outward

    def answer_predicate_last(self) -> bool:
        """Whether the predicate that reaches the answer is the last of the path (chains, a star's
        hop) or the first."""
        return self.family in (CHAIN, STAR_HOP)


ONE_HOP_OUT = Shape("one_hop_out", ONE_HOP, outward=True, gold_category=GOLD_ONE_HOP)
ONE_HOP_IN = Shape("one_hop_in", ONE_HOP, outward=False, gold_category=GOLD_ONE_HOP)
ONE_HOP_OUT_CHECKED = Shape("one_hop_out_checked", FACT_CHECKED, outward=True, gold_category=GOLD_ONE_HOP)
ONE_HOP_OUT_CHECKED_IN = Shape("one_hop_out_checked_in", FACT_CHECKED, outward=True, gold_category=GOLD_ONE_HOP)
CHAIN_OUT_OUT = Shape("chain_out_out", CHAIN, outward=True, gold_category=GOLD_CHAIN, discovery="discover_chain_out_out", fetch="fetch_chain_out_out")
CHAIN_IN_OUT = Shape("chain_in_out", CHAIN, outward=False, gold_category=GOLD_CHAIN, discovery="discover_chain_in_out", fetch="fetch_chain_in_out")
CHAIN_OUT_IN = Shape("chain_out_in", CHAIN, outward=True, gold_category=GOLD_CHAIN, discovery="discover_chain_out_in", fetch="fetch_chain_out_in")
STAR_IN_IN = Shape("star_in_in", STAR, outward=False, gold_category=GOLD_STAR)
STAR_OUT_IN = Shape("star_out_in", STAR, outward=True, gold_category=GOLD_STAR)
STAR_OUT_OUT = Shape("star_out_out", STAR, outward=True, gold_category=GOLD_STAR, second_outward=True)
STAR3_IN = Shape("star3_in", STAR3, outward=False, gold_category=GOLD_COMPLEX)
STAR_IN_IN_OUT = Shape("star_in_in_out", STAR_HOP, outward=False, gold_category=GOLD_COMPLEX)
TYPE_IN = Shape("type_in", TYPED, outward=False, gold_category=GOLD_TYPE_CONSTRAINT, discovery="discover_type_in")
TYPE_OUT = Shape("type_out", TYPED, outward=True, gold_category=GOLD_TYPE_CONSTRAINT, discovery="discover_type_out")
PREDICATE = Shape("predicate", RELATION, outward=False, gold_category=GOLD_PREDICATE_ANSWER)
COUNT_IN = Shape("count_in", COUNT, outward=False, gold_category=GOLD_COMPLEX, counts="one_hop_in")
COUNT_OUT = Shape("count_out", COUNT, outward=True, gold_category=GOLD_COMPLEX, counts="one_hop_out")
COUNT_STAR_IN_IN = Shape("count_star_in_in", COUNT, outward=False, gold_category=GOLD_COMPLEX, counts="star_in_in")

SHAPES: tuple[Shape, ...] = (
    ONE_HOP_OUT, ONE_HOP_IN, ONE_HOP_OUT_CHECKED, ONE_HOP_OUT_CHECKED_IN, CHAIN_OUT_OUT, CHAIN_IN_OUT, CHAIN_OUT_IN,
    STAR_IN_IN, STAR_OUT_IN, STAR_OUT_OUT, STAR3_IN, STAR_IN_IN_OUT, TYPE_OUT, TYPE_IN, PREDICATE, COUNT_IN, COUNT_OUT, COUNT_STAR_IN_IN,
)  # fmt: skip
SHAPES_BY_NAME: dict[str, Shape] = {shape.name: shape for shape in SHAPES}

# Templates that are not candidate shapes: the neighbourhood discovery of query
# generation and the entity look-ups of linking.
DISCOVER_OUT = "discover_out"
DISCOVER_IN = "discover_in"
EXPAND_OUT = "expand_out"
EXPAND_IN = "expand_in"
EDGES_OUT = "edges_out"
EDGES_IN = "edges_in"
ENTITY_TYPES = "types"
IN_DEGREE = "in_degree"
LOOKUPS = (DISCOVER_OUT, DISCOVER_IN, EXPAND_OUT, EXPAND_IN, EDGES_OUT, EDGES_IN, ENTITY_TYPES, IN_DEGREE)
# Lookups of one node `{{e}}` read for several nodes at once (`VALUES ?e { {{entities}} }`, ?e first): the rows of
# one node are those of its own lookup, so candidates do not depend on these templates, and a model does not
# record them (coqa.templates.template_digest).
BATCHED_BY_LOOKUP = {DISCOVER_OUT: "discover_out_nodes", DISCOVER_IN: "discover_in_nodes"}


def shapes_of(family: str) -> tuple[Shape, ...]:
    """The registered shapes of a family, in registry order."""
    return tuple(shape for shape in SHAPES if shape.family == family)


def template_names() -> set[str]:
    """Every template file stem the registry expects in coqa/queries/."""
    discovery = {name for shape in SHAPES for name in (shape.discovery, shape.fetch) if name}
    return {shape.name for shape in SHAPES} | discovery | set(LOOKUPS) | set(BATCHED_BY_LOOKUP.values())


def shape_features(shape: Shape) -> dict[str, float]:
    """The ranker's shape indicators of a candidate: one per registered shape."""
    return {other.feature: float(other is shape) for other in SHAPES}
