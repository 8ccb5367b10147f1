"""Surface forms: how the mention index keys a string, and the parts of an
entity name that are surfaces of their own.

These are the text rules of the mention index (coqa.kb.mention_index); the
question side matches questions under the same rules, so it imports them
from here.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_DOTS = ("•", "・", "‧", "∙")
# The one rule for the `_（…）` qualifier of PKU BASE names (`_(` after NFKC).
QUALIFIER_OPENERS = ("_（", "_(")
_BRACKET_OPENERS = ("（", "(")
_BRACKET_ALIAS = re.compile(r"[^_][（(]([^（）()]{2,})[）)]$")


def normalize_surface(text: str) -> str:
    """The form in which surfaces are indexed and questions are matched:
    NFKC (full width to half width), lower case, one kind of middle dot."""
    return fold_case_and_dots(unicodedata.normalize("NFKC", text))


@lru_cache(maxsize=1 << 16)
def matching_name(predicate: str) -> str:
    """The form of a predicate name that question text is compared with:
    `normalize_surface` (full width to half width, lower case) without white
    space, which KB names sometimes hold inside a word (`页 数`). Cached: the
    ranking features ask it for every predicate of every candidate."""
    return "".join(normalize_surface(predicate).split())


@lru_cache(maxsize=1 << 16)
def name_characters(predicate: str) -> frozenset[str]:
    """The distinct characters of a predicate's matching name (cached: query
    generation scores a hub's predicates and ranking compares candidate
    predicates with gold ones, question after question)."""
    return frozenset(matching_name(predicate))


def fold_case_and_dots(text: str) -> str:
    """Lower case and one kind of middle dot (the steps of `normalize_surface` after NFKC)."""
    text = text.lower()
    for dot in _DOTS:  # str.replace is ten times faster than str.translate here
        text = text.replace(dot, "·")
    return text


def base_name(name: str) -> str:
    """An entity name without its qualifier: the `_（…）` description of PKU BASE
    (`李白_（唐朝诗人）` -> `李白`) or a trailing bracketed branch
    (`故宫博物院（故宫）` -> `故宫博物院`)."""
    for opener in QUALIFIER_OPENERS + _BRACKET_OPENERS:
        cut = name.find(opener)
        if cut > 0:
            return name[:cut]
    return name


def qualifier(name: str) -> str:
    """The `_（…）` description of an entity name (`李白_（唐朝诗人）` -> `唐朝诗人`), or ''."""
    for opener in QUALIFIER_OPENERS:
        cut = name.find(opener)
        if cut > 0:
            return name[cut + len(opener) :].rstrip("）)")
    return ""


def bracket_alias(name: str) -> str:
    """The text in a trailing bracket that is not a `_（…）` description:
    `故宫博物院（故宫）` -> `故宫`; '' when there is none."""
    match = _BRACKET_ALIAS.search(name)
    return match.group(1) if match else ""
