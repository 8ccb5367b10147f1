"""Mentions of names written another way than the knowledge base writes them.

Two ways that questions typed by people name things, which exact, prefix,
suffix and fuzzy matching (coqa.mentions.detection) miss when the difference is at the
start of the name or spread over it:

- by sound: other characters read the same, as a pinyin input method offers
  them (`慈式塔` for `慈氏塔`, `传播返修率` for `船舶返修率`). Each character is
  read with its most common toneless pinyin (pypinyin's dictionary, which
  ships inside the package: nothing is downloaded), character by character,
  so that a name and a question read the same characters alike whatever
  surrounds them;
- shortened: the span's characters come in the same order in a longer name
  that begins with the span's first character or has it second, and not as
  one piece (`港科大` for `香港科技大学`, `大同一中` for `大同市第一中学`; a
  piece of a name, `科技大学`, is a part of it, not a short form: the prefix
  and suffix detectors of coqa.mentions.detection take those).

Both read tables of the mention index's surfaces built in memory when a
pipeline whose model turns `linking.name_variants` on opens
(`NameVariants.build`: 0.3 s for the 19k names of the compact NLPCC KB; the
tables grow with the index, so on an index of millions of names they take
minutes and gigabytes, and the setting stays off for PKU BASE). The mentions
they give carry the `fuzzy` source with their own (`sound`, `short`), so the
linker weighs them with the features of fuzzy mentions and the linker's
feature set is the same with the setting on or off.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from coqa.kb.mention_index import LITERAL, MentionIndex
from coqa.mentions.detection import Mention

# A sound match spans 2-16 characters; a shortened name 3-10 in the question
# for a name of 4-20 (shorter spans are in too many longer names).
SOUND_LENGTHS = (2, 16)
SHORT_SPAN_LENGTHS = (3, 10)
SHORT_NAME_LENGTHS = (4, 20)
# A shortened span naming more names than this says too little to link.
MAX_SHORT_TARGETS = 5
SOUND, SHORT, FUZZY = "sound", "short", "fuzzy"


@lru_cache(maxsize=None)
def reading(char: str) -> str:
    """The most common toneless pinyin of a character; the character itself
    when it is not Chinese (digits and letters must match as written)."""
    from pypinyin import Style, pinyin  # loads its dictionary (0.7 s): only for models that use readings

    readings = pinyin(char, style=Style.NORMAL, errors=lambda text: [text])  # type: ignore[arg-type,return-value]  # pypinyin takes a list-returning callable
    return readings[0][0] if readings and readings[0] else char


def in_order(short: str, name: str) -> bool:
    """Whether the characters of `short` occur in `name` in the same order."""
    rest = iter(name)
    return all(char in rest for char in short)


@dataclass
class NameVariants:
    """The index's surfaces by the reading of their characters, and the
    surfaces of SHORT_NAME_LENGTHS by each of their characters."""

    index: MentionIndex
    by_sound: dict[tuple[str, ...], list[str]]
    names: list[str]
    by_character: dict[str, set[int]]

    @classmethod
    def build(cls, index: MentionIndex) -> "NameVariants":
        by_sound: dict[tuple[str, ...], list[str]] = defaultdict(list)
        names: list[str] = []
        by_character: dict[str, set[int]] = defaultdict(set)
        for surface in sorted(index.surfaces()):
            if SOUND_LENGTHS[0] <= len(surface) <= SOUND_LENGTHS[1]:
                by_sound[tuple(map(reading, surface))].append(surface)
            if SHORT_NAME_LENGTHS[0] <= len(surface) <= SHORT_NAME_LENGTHS[1]:
                for char in set(surface):
                    by_character[char].add(len(names))
                names.append(surface)
        return cls(index, dict(by_sound), names, dict(by_character))

    def mentions(self, text: str, known: Iterable[tuple[int, int]]) -> list[Mention]:
        """Sound and shortened mentions in the normalized question `text`,
        except over the spans of `known` (found by the other detectors)."""
        taken = set(known)
        found: list[Mention] = []
        for start, end, surfaces, source in [*self._by_sound(text), *self._shortened(text)]:
            if (start, end) in taken:
                continue
            entries = tuple(entry for surface in surfaces for entry in self.index.entries(surface) if entry.kind != LITERAL)
            if entries:
                taken.add((start, end))
                found.append(Mention(start, end, text[start:end], entries, frozenset({FUZZY, source})))
        return found

    def _by_sound(self, text: str) -> list[tuple[int, int, list[str], str]]:
        """Spans read like some indexed surfaces they are not written as."""
        readings = [reading(char) for char in text]
        spans = []
        for start in range(len(text)):
            for end in range(start + SOUND_LENGTHS[0], min(len(text), start + SOUND_LENGTHS[1]) + 1):
                surfaces = [s for s in self.by_sound.get(tuple(readings[start:end]), ()) if s != text[start:end]]
                if surfaces:
                    spans.append((start, end, surfaces, SOUND))
        return spans

    def _shortened(self, text: str) -> list[tuple[int, int, list[str], str]]:
        """From each start, the longest span that is no indexed surface and
        whose characters come in order, not as one piece, in at most
        MAX_SHORT_TARGETS names, beginning with its first character or having
        it second."""
        spans = []
        for start in range(len(text)):
            best = None
            for end in range(start + SHORT_SPAN_LENGTHS[0], min(len(text), start + SHORT_SPAN_LENGTHS[1]) + 1):
                span = text[start:end]
                names = self._names_holding(span)
                if not names:
                    break  # a longer span holds these characters and more
                short_of = [name for name in names if span not in name]
                if short_of and len(short_of) <= MAX_SHORT_TARGETS and not self.index.entries(span):
                    best = (start, end, short_of, SHORT)
            if best is not None:
                spans.append(best)
        return spans

    def _names_holding(self, span: str) -> list[str]:
        """The names longer than `span` holding its characters in order, with its first character first or second."""
        ids: set[int] | None = None
        for char in set(span):
            ids = self.by_character.get(char, set()) if ids is None else ids & self.by_character.get(char, set())
            if not ids:
                return []
        names = (self.names[i] for i in sorted(ids or ()))
        return [name for name in names if len(name) > len(span) and name.find(span[0]) in (0, 1) and in_order(span, name)]

