"""The settings of query generation (their values: config.yaml, section query_generation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class QueryGenerationSettings:
    """How far query generation looks around the linked nodes. Every number
    bounds work per question whatever the degree of a node; when one cut
    something, the explanation records it (coqa.explanation.CapCut)."""

    one_hop_nodes: int
    # Of those, a node whose link score is below this share of the best score among the terms
    # of its own mention span gets no candidates: a homonym or a literal spelling the same
    # words (`<乌克兰_（游戏人物）>` beside `<乌克兰>`) costs the store's queries without being
    # the answer. On pkubase-bench no gold node in the top five of the last 1,220 train
    # questions lies below 0.3 of its span's best; 0 turns the cut off.
    link_score_margin: float
    chain_nodes: int
    star_nodes: int
    # Predicates expanded per node and direction, the most relevant to the question first.
    predicates_per_direction: int
    # Answers are fetched for an expanded predicate with at most this many (the store counts
    # them first); a larger one gets candidates that carry only the store's count. No query
    # is cut by a LIMIT, so every engine returns the same rows.
    answers_per_predicate: int
    # Answers fetched per node and direction: the expanded predicates, most relevant first,
    # whose counted answers fit (the others get count-only candidates); chains start from the
    # first hops whose middle nodes fit. Twice answers_per_predicate, so the most relevant
    # one always fits; no pkubase-bench node reaches it (the most: 732, 日本).
    answers_per_node: int
    # First-hop predicates per node and chain shape whose two-hop paths are counted.
    chain_predicates: int
    # chain_out_in walks every edge into its middle nodes: a first hop through a middle node with
    # more edges arriving than this is not counted (a synthetic hub's 85,000 took 3 s at 10M).
    # Its discovery walks at most this many paths; only when it reaches them are the middle nodes'
    # edges counted, one by one. No pkubase-bench node reached by a first hop has that many (the
    # most: 6,162 into 阿根廷; <人物>'s 12,112 are all <类型>, never a chain's first hop).
    chain_middle_edges: int
    # Predicate pairs per node and chain shape kept for candidates, the most relevant first.
    chain_pairs: int
    # Paths fetched per node and chain shape (the rarer the shape in CCKS, the less it may
    # cost): first-hop predicates, most relevant first, whose counted paths fit.
    chain_rows: Mapping[str, int]
    # A two-constraint star (star_in_in) with at most this many answers gets star_in_in_out
    # candidates: the predicates leaving those answers, up to star_hop_predicates of them per
    # star, the most relevant first (each with at most answers_per_predicate objects).
    star_hop_middles: int
    star_hop_predicates: int
    max_candidates: int
    # Comma-separated shape names (coqa.shapes) to generate; empty: every shape.
    # `coqa train` on an NLPCC file records the shapes its gold queries have.
    shapes: str

    def allows(self, shape_name: str) -> bool:
        """True when candidates of this shape are generated."""
        return not self.shapes or shape_name in self.shapes.split(",")
