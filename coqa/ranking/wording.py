"""The units of a question's wording that ranking counts: character n-grams,
and the question with its mentions taken out."""

from __future__ import annotations

from typing import Iterable


def grams(text: str) -> set[str]:
    """Character 1-, 2- and 3-grams of a text (its "words" for association counts)."""
    return {text[i : i + n] for n in (1, 2, 3) for i in range(len(text) - n + 1)}


def bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def remove_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """The text with the given [start, end) spans replaced by a separator."""
    chars = list(text)
    for start, end in spans:
        for i in range(start, min(end, len(chars))):
            chars[i] = "|"
    return "".join(chars)
