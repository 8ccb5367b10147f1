"""Mention detection: the spans of a question that may name something in the KB.

Dictionary matching over the persistent mention index (mention2ent mentions,
entity names and base names, short literal values), plus spans in quotes
(《》“”"" 「」), plus optional HanLP NER spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from coqa.kb.mention_index import IndexEntry, MentionIndex
from coqa.kb.surfaces import normalize_surface

MIN_SURFACE_LENGTH = 2
MIN_PREFIX_LENGTH = 3
MAX_COMPLETIONS = 5
_QUOTED = re.compile(r"《([^《》]+)》|“([^“”]+)”|\"([^\"]+)\"|「([^「」]+)」|'([^']+)'")


def normalize_question(text: str) -> str:
    """The form every later stage reads: `normalize_surface` of the trimmed text."""
    return normalize_surface(text.strip())


@dataclass(frozen=True)
class Mention:
    """A span [start, end) of the normalized question, what the index says it
    may name, and which detectors found it."""

    start: int
    end: int
    surface: str
    entries: tuple[IndexEntry, ...]
    sources: frozenset[str]


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of the text inside each pair of quotes."""
    spans = []
    for match in _QUOTED.finditer(text):
        group = next(i for i in range(1, 6) if match.group(i) is not None)
        spans.append((match.start(group), match.end(group)))
    return spans


def detect_mentions(
    text: str,
    index: MentionIndex,
    extra_spans: Callable[[str], Iterable[tuple[int, int]]] | None = None,
    min_length: int = MIN_SURFACE_LENGTH,
) -> list[Mention]:
    """Mentions in the normalized question `text`, by position then length.

    A span counts when the index knows it (surfaces shorter than `min_length`
    are skipped), or when it is the beginning of a few
    indexed surfaces (source `prefix`: `梅里雪山` for `梅里雪山国家公园`) and
    no indexed surface covers it. Quoted spans and `extra_spans` (e.g. NER)
    add their source to an indexed span, or are looked up exactly.
    """
    found: dict[tuple[int, int], Mention] = {}
    for match in index.find_all(text):
        if match.end - match.start >= min_length:
            kinds = frozenset(entry.kind for entry in match.entries)
            found[(match.start, match.end)] = Mention(match.start, match.end, match.surface, match.entries, kinds)
    for start in range(len(text)):
        match = index.completions(text, start, MIN_PREFIX_LENGTH, MAX_COMPLETIONS)
        if match and not any(s <= match.start and match.end <= e for s, e in found):
            found[(match.start, match.end)] = Mention(match.start, match.end, match.surface, match.entries, frozenset({"prefix"}))
    tagged = [(span, "quote") for span in quoted_spans(text)]
    if extra_spans is not None:
        tagged += [(span, "ner") for span in extra_spans(text)]
    for (start, end), source in tagged:
        mention = found.get((start, end))
        if mention is not None:
            found[(start, end)] = Mention(start, end, mention.surface, mention.entries, mention.sources | {source})
        else:
            entries = tuple(index.lookup(text[start:end]))
            if entries:
                found[(start, end)] = Mention(start, end, text[start:end], entries, frozenset({source}))
    return sorted(found.values(), key=lambda m: (m.start, -m.end))
