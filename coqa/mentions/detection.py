"""Mention detection: the spans of a question that may name something in the KB.

Dictionary matching over the persistent mention index (mention2ent mentions,
entity names and base names, short literal values), plus the beginnings and
ends of indexed surfaces, plus fuzzy matches of
indexed surfaces written slightly differently (an extra 的, a missing or
extra character), plus spans in quotes (《》“”"" 「」), plus optional HanLP
NER spans.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from rapidfuzz import fuzz, process

from coqa.mentions.cues import ASKING_CUES, CUES
from coqa.kb.mention_index import IndexEntry, MentionIndex
from coqa.kb.surfaces import normalize_surface

MIN_SURFACE_LENGTH = 2
MIN_PREFIX_LENGTH = 3
MIN_SUFFIX_LENGTH = 4
MAX_COMPLETIONS = 5
# Fuzzy matching (see `fuzzy_mentions`): surfaces of at least FUZZY_MIN_LENGTH
# characters scored against the question with rapidfuzz's normalized indel
# similarity (0-100); at most FUZZY_MAX_SURFACES scored per start position and
# FUZZY_PER_START kept, which bounds the cost however large the index is.
FUZZY_MIN_LENGTH = 4
FUZZY_MAX_LENGTH = 24
FUZZY_MAX_SURFACES = 64
FUZZY_PER_START = 3
FUZZY_MIN_SIMILARITY = 80.0
# Characters a question may add inside a name (`宁波的梵高艺术馆` for `宁波梵高星空艺术馆`).
_FILLERS = "的"
_NUMBERS = re.compile(r"[0-9]+")
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
    no indexed surface covers it, or likewise the end of a few indexed
    surfaces, at least MIN_SUFFIX_LENGTH long (source `suffix`: `富临大酒店`
    for `深圳富临大酒店`), or when it is close to indexed surfaces
    (source `fuzzy`, see `fuzzy_mentions`). Quoted spans and `extra_spans` (e.g. NER)
    add their source to an indexed span, or are looked up exactly. No span
    begins or ends inside a Latin word (`cuts_a_word`).
    """
    found: dict[tuple[int, int], Mention] = {}
    for match in index.find_all(text):
        # Dropped here too, not only at the end: a span inside a word must not hide the completions it covers.
        if match.end - match.start >= min_length and not cuts_a_word(text, match.start, match.end):
            kinds = frozenset(entry.kind for entry in match.entries)
            found[(match.start, match.end)] = Mention(match.start, match.end, match.surface, match.entries, kinds)
    for start in range(len(text)):
        prefix = index.completions(text, start, MIN_PREFIX_LENGTH, MAX_COMPLETIONS)
        if prefix and not any(s <= prefix.start and prefix.end <= e for s, e in found):
            found[(prefix.start, prefix.end)] = Mention(prefix.start, prefix.end, prefix.surface, prefix.entries, frozenset({"prefix"}))
    for end in range(len(text), 0, -1):
        suffix = index.suffix_completions(text, end, MIN_SUFFIX_LENGTH, MAX_COMPLETIONS)
        if suffix and not any(s <= suffix.start and suffix.end <= e for s, e in found):
            found[(suffix.start, suffix.end)] = Mention(suffix.start, suffix.end, suffix.surface, suffix.entries, frozenset({"suffix"}))
    for fuzzy in fuzzy_mentions(text, index):
        if (fuzzy.start, fuzzy.end) not in found:
            found[(fuzzy.start, fuzzy.end)] = fuzzy
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
    kept = [mention for mention in found.values() if not cuts_a_word(text, mention.start, mention.end)]
    return sorted(kept, key=lambda m: (m.start, -m.end))


def cuts_a_word(text: str, start: int, end: int) -> bool:
    """Whether the span [start, end) begins or ends between two ASCII letters
    of the question: `or` inside `organization` names nothing the question
    says. Chinese has no word boundaries; written Latin words do."""
    return (0 < start < len(text) and _latin_pair(text[start - 1], text[start])) or (
        0 < end < len(text) and _latin_pair(text[end - 1], text[end])
    )


def _latin_pair(first: str, second: str) -> bool:
    return first.isascii() and first.isalpha() and second.isascii() and second.isalpha()


def _without_fillers(text: str) -> tuple[str, list[int]]:
    """`text` without the _FILLERS characters, and the position in `text` of each remaining character."""
    kept = [i for i, char in enumerate(text) if char not in _FILLERS]
    return "".join(text[i] for i in kept), kept


def _asking_start(text: str, start: int) -> int:
    """Where the first asking wording (ASKING_CUES: 哪些, 什么, 谁) at or after
    `start` begins; the length of `text` when there is none."""
    found = [match.start() for cue in ASKING_CUES for match in [CUES[cue].search(text, start)] if match is not None]
    return min(found, default=len(text))


def fuzzy_mentions(text: str, index: MentionIndex) -> list[Mention]:
    """Spans of the normalized question that are close to indexed surfaces
    they do not equal, with those surfaces' entries (source `fuzzy`).

    The question is read without the _FILLERS characters. From each start,
    the surfaces that begin with the longest indexed prefix there (at least
    MIN_SURFACE_LENGTH characters; at most FUZZY_MAX_SURFACES of them) are
    scored against every window of the question from that start that holds
    no asking wording (ASKING_CUES: a name written with 哪些 inside is rare, a
    window running from a name over `有哪些` into the next one is not) with
    rapidfuzz's normalized indel similarity; the best FUZZY_PER_START at or
    above FUZZY_MIN_SIMILARITY whose numbers are those of their best window
    (`1990年11月6日` is not `1990年11月26日`, however close the strings) give
    one mention over the window of the best.
    A window that is exactly an indexed surface in the question as written
    is left to exact matching. rapidfuzz scores all windows against all
    surfaces of a start in one C call (`process.cdist`)."""
    reduced, origin = _without_fillers(text)
    mentions = []
    for start in range(len(reduced) - FUZZY_MIN_LENGTH + 1):
        end = index.prefix_end(reduced, start, MIN_SURFACE_LENGTH)
        if end is None:
            continue
        surfaces = [
            s for s in index.surfaces_beginning(reduced[start:end], FUZZY_MAX_SURFACES)
            if FUZZY_MIN_LENGTH <= len(s) <= FUZZY_MAX_LENGTH
        ]  # fmt: skip
        last = min(len(reduced), start + FUZZY_MAX_LENGTH)
        last = min(last, _asking_start(reduced, start))
        windows = [reduced[start:stop] for stop in range(start + FUZZY_MIN_LENGTH, last + 1)]
        if not surfaces or not windows:
            continue
        scores = process.cdist(windows, surfaces, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_SIMILARITY)
        best = scores.max(axis=0)
        ranked = sorted((i for i in range(len(surfaces)) if best[i] > 0), key=lambda i: (-best[i], surfaces[i]))
        numbers = [_NUMBERS.findall(window) for window in windows]
        ranked = [i for i in ranked if numbers[int(np.argmax(scores[:, i]))] == _NUMBERS.findall(surfaces[i])]
        if not ranked:
            continue
        window = int(np.argmax(scores[:, ranked[0]]))
        span_start, span_end = origin[start], origin[start + FUZZY_MIN_LENGTH + window - 1] + 1
        span = text[span_start:span_end]
        kept = [surfaces[i] for i in ranked[:FUZZY_PER_START] if surfaces[i] != span]
        entries = tuple(entry for surface in kept for entry in index.entries(surface))
        if entries:
            mentions.append(Mention(span_start, span_end, span, entries, frozenset({"fuzzy"})))
    return mentions
