"""Features of a candidate's answers against what the question asks (answer
type cues, literal forms, counts, answers the question states), and of its
shape against training questions of the same shape."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Callable, Mapping, Sequence

from coqa.kb.names import Term
from coqa.kb.surfaces import base_name, normalize_surface, qualifier
from coqa.mentions.cues import (
    PLURAL,
    SINGULAR,
    looks_like_date,
    looks_like_person,
    looks_like_place,
    looks_numeric,
)  # fmt: skip
from coqa.querygen.candidate import Candidate
from coqa.ranking.context import QuestionContext
from coqa.ranking.keys import answer_class_key
from coqa.ranking.neighbours import PredicateNeighbours
from coqa.ranking.wording import bigrams

ANSWER_FEATURES = (
    "a_log_count", "a_none", "a_one", "a_literal", "a_numeric", "a_when_numeric", "a_quantity_numeric", "a_who_entity",
    "a_many_count",
)  # fmt: skip


def answer_features(candidate: Candidate, cues: Mapping[str, float]) -> dict[str, float]:
    answers = candidate.answers
    count = len(answers)
    literal = sum(a.is_literal for a in answers) / count if count else 0.0
    numeric = sum(looks_numeric(a.value) for a in answers if a.is_literal) / count if count else 0.0
    return {
        "a_log_count": math.log1p(count),
        "a_none": float(count == 0),
        "a_one": float(count == 1),
        "a_literal": literal,
        "a_numeric": numeric,
        "a_when_numeric": cues["cue_when"] * numeric,
        "a_quantity_numeric": cues["cue_quantity"] * numeric,
        "a_who_entity": cues["cue_who"] * (1.0 - literal),
        "a_many_count": cues["cue_which_many"] * math.log1p(count),
    }


ANSWER_FORM_FEATURES = (
    "a_date", "a_place", "a_person", "a_when_date", "a_where_place", "a_who_person", "a_plural_many", "a_singular_one",
)  # fmt: skip


@lru_cache(maxsize=1 << 17)
def _answer_forms(answer: Term) -> tuple[bool, bool, bool]:
    """Whether the answer reads as a date (a literal), a place and a person (an entity).
    Cached: a hub's neighbours are the answers of hundreds of candidates, question after question."""
    if answer.is_literal:
        return looks_like_date(answer.value), False, False
    return False, looks_like_place(answer.value), looks_like_person(answer.value)


def answer_form_features(candidate: Candidate, text: str, cues: Mapping[str, float]) -> dict[str, float]:
    """Answer-type fit from the answers' literal forms and names (no KB lookups,
    to keep ranking fast): dates for when, place names for where, people for
    who; and the number of answers against plural or singular wording."""
    answers = candidate.answers
    count = len(answers)
    dates, places, people = zip(*map(_answer_forms, answers)) if count else ((), (), ())
    date = sum(dates) / count if count else 0.0
    place = sum(places) / count if count else 0.0
    person = sum(people) / count if count else 0.0
    plural, singular = bool(PLURAL.search(text)), bool(SINGULAR.search(text))
    return {
        "a_date": date,
        "a_place": place,
        "a_person": person,
        "a_when_date": cues["cue_when"] * date,
        "a_where_place": cues["cue_where"] * place,
        "a_who_person": cues["cue_who"] * person,
        "a_plural_many": float(plural) * float(count > 1),
        "a_singular_one": float(singular) * float(count == 1),
    }


ASKED_CLASS_FEATURES = ("a_class_asked", "a_class_chars", "a_class_bigram")
# Answers read for the asked-class features: the shares settle long before a hub's thousands.
_CLASS_ANSWERS = 100


def asked_class_features(answers: Sequence[Term], classes: Sequence[str]) -> dict[str, float]:
    """How far the answers' names (with their `_（…）` descriptions) hold the
    class the question asks for (`asked_classes`: 学院 in 哪所学院): whether it
    asks for one, and over the first answers the mean share of its characters
    each answer's name holds and the share of answers that hold one of its
    bigrams (its character, for a one-character class). A question asking
    哪所学院 is answered by a college, seldom by its address."""
    if not classes:
        return dict.fromkeys(ASKED_CLASS_FEATURES, 0.0)
    chars = frozenset("".join(classes))
    pieces = frozenset(piece for words in classes for piece in (bigrams(words) or {words}))
    read = [_answer_name(answer) for answer in answers[:_CLASS_ANSWERS]]
    if not read:
        return {"a_class_asked": 1.0, "a_class_chars": 0.0, "a_class_bigram": 0.0}
    return {
        "a_class_asked": 1.0,
        "a_class_chars": sum(len(chars & set(name)) for name in read) / (len(chars) * len(read)),
        "a_class_bigram": sum(any(piece in name for piece in pieces) for name in read) / len(read),
    }


@lru_cache(maxsize=1 << 17)
def _answer_name(answer: Term) -> str:
    """The answer's value as questions write it, an entity with its description."""
    return normalize_surface(answer.value)


# A number and its unit (47816人, 8.5分), which `looks_numeric` does not take for a number.
_COUNTED = re.compile(r"^\d[\d.,]*\D{1,2}$")
ANSWER_CLASS_FEATURES = ("a_class_assoc_mean", "a_class_assoc_max")
# Answers whose class is read per candidate: its first ones tell what it answers with.
_CLASSED_ANSWERS = 20
# Gold answers whose class training counts per question.
GOLD_CLASSED_ANSWERS = 10


@lru_cache(maxsize=1 << 17)
def answer_class_keys(answer: Term) -> tuple[str, ...]:
    """The association keys (`answer_class_key`) of what an answer is, which
    training associates with the wording of questions whose gold answers they
    are (哪个朝代 with 朝代 of 北宋_（中国历史朝代）): a date, a number (and
    the unit it ends in), a long text; otherwise the last character and the
    last two of its name and of its `_（…）` description, where Chinese puts
    the word for what a thing is (长篇小说: 说, 小说)."""
    value = _answer_name(answer).strip()
    if answer.is_literal and looks_like_date(value):
        return (answer_class_key("#date"),)
    if answer.is_literal and (looks_numeric(value) or _COUNTED.match(value)):
        unit = value[-1]
        return (answer_class_key("#number"),) + ((answer_class_key(f"#number{unit}"),) if not unit.isdigit() else ())
    if answer.is_literal and len(value) > 20:
        return (answer_class_key("#text"),)
    words = [value] if answer.is_literal else [_answer_surface(answer), normalize_surface(qualifier(answer.value))]
    return tuple(sorted({answer_class_key(piece) for word in words if word for piece in (word[-1:], word[-2:])}))


def answer_class_features(answers: Sequence[Term], answer_score: Callable[[Term], float]) -> dict[str, float]:
    """The mean and the best `answer_score` of the first answers: how strongly the
    wording has asked for what each is (the best association of its `answer_class_keys`)."""
    scores = [answer_score(answer) for answer in answers[:_CLASSED_ANSWERS]]
    if not scores:
        return dict.fromkeys(ANSWER_CLASS_FEATURES, 0.0)
    return {"a_class_assoc_mean": sum(scores) / len(scores), "a_class_assoc_max": max(scores)}


def gold_answer_class_keys(answers: Sequence[Term]) -> list[str]:
    """The answer-class keys training counts for a question with these gold answers (its first ones)."""
    return sorted({key for answer in answers[:GOLD_CLASSED_ANSWERS] for key in answer_class_keys(answer)})


STATED_FEATURES = ("a_stated",)


@lru_cache(maxsize=1 << 17)
def _answer_surface(answer: Term) -> str:
    """The answer as a question would write it: normalized, an entity without its qualifier."""
    return normalize_surface(answer.value if answer.is_literal else base_name(answer.value))


def stated_features(answers: Sequence[Term], text: str, linked_terms: frozenset[Term]) -> dict[str, float]:
    """The share of the answers that the question itself states: among its
    `linked_terms`, or written in it (two characters or more). A question
    seldom asks for what it says, so a query answering with the question's
    own constraint (a grade, a date, a yes/no value it names) is seldom the
    one it asks."""
    if not answers:
        return {"a_stated": 0.0}
    stated = sum(answer in linked_terms or (len(surface := _answer_surface(answer)) >= 2 and surface in text) for answer in answers)
    return {"a_stated": stated / len(answers)}


# How similar the question is to the training questions whose gold query has
# the candidate's shape: the best one and the mean of the three best (a chain
# question reads like other chain questions).
SHAPE_NEIGHBOUR_FEATURES = ("n_shape_best", "n_shape_top3")


def shape_neighbour_features(shape: str, neighbours: PredicateNeighbours, context: QuestionContext) -> dict[str, float]:
    """`neighbours.score` of the shape key against the question, as SHAPE_NEIGHBOUR_FEATURES."""
    return dict(zip(SHAPE_NEIGHBOUR_FEATURES, neighbours.score(shape, context.neighbour_sims)))
