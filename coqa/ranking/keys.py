"""Association keys: how a predicate, a directed predicate, a predicate pair, a
query shape, a piece of a predicate name and a piece of what an answer is are written as the keys of the
association counts (coqa.ranking.associations) and the question neighbours
(coqa.ranking.neighbours)."""

from __future__ import annotations

from typing import Iterable

from coqa.kb.surfaces import matching_name
from coqa.ranking.wording import bigrams


def directed(predicate: str, outward: bool) -> str:
    """The association key of a predicate read from a linked node: out of it (`p>`) or into it (`p<`)."""
    return predicate + (">" if outward else "<")


def pair_key(predicates: Iterable[str]) -> str:
    """The association key of a two-predicate path, whatever the order its query writes them in."""
    return "+".join(sorted(predicates)) + "+"


def shape_key(shape: str) -> str:
    """The neighbour key of the training questions whose gold query has this shape."""
    return shape + "#"


def is_predicate_key(key: str) -> bool:
    """Whether an association or neighbour key is a predicate itself, not a
    directed (`p>`, `p<`), pair (`p+q+`), name-piece (`~piece~`), shape (`shape#`)
    or answer-class (`piece^`) key."""
    return not key.endswith((">", "<", "+", "~", "#", "^"))


def answer_class_key(piece: str) -> str:
    """The association key of a piece of what an answer is
    (coqa.ranking.answer_features.answer_class_keys): `piece^`."""
    return f"{piece}^"


def is_answer_class_key(key: str) -> bool:
    """Whether an association key is an answer-class key (`answer_class_key`)."""
    return key.endswith("^")


def name_piece_key(piece: str) -> str:
    """The association key of a piece of predicate names (see `name_pieces`): `~piece~`,
    apart from predicate keys, which never start with `~`."""
    return f"~{piece}~"


def name_pieces(predicate: str) -> set[str]:
    """The pieces of a predicate's name that question wording is associated with,
    so that what training learned about one predicate carries to others sharing
    its words (`死亡人数` -> `死亡`, `亡人`, `人数`): the character bigrams of the
    matching form of the name (`matching_name`), or the name itself when it is
    one character."""
    name = matching_name(predicate)
    return bigrams(name) or ({name} if name else set())


def name_piece_keys(predicates: Iterable[str]) -> list[str]:
    """The association keys of the name pieces of the plain predicates among
    `predicates` (directed and pair keys name no new words)."""
    plain = [p for p in predicates if is_predicate_key(p)]
    return sorted({name_piece_key(piece) for predicate in plain for piece in name_pieces(predicate)})
