"""The persistent mention index: surface strings to the KB terms they may name.

Built by `coqa load` next to the store, memory-mapped when opened, so the full
PKU BASE mention2ent (~13M lines) stays within a small memory budget. Three
kinds of surface are indexed, all under `normalize_surface`:

- `MENTION`: a mention2ent line `mention -> entity` with its rank;
- `NAME`: an entity's full name, its base name (see `base_name`) and the
  alias in a trailing bracket (see `bracket_alias`);
- `LITERAL`: a short literal value and each of its segments split at
  list punctuation (`、，,;；/`), pointing at the whole literal value.

Layout: the index is a set of immutable segments (marisa tries) in one
directory, listed oldest first in `SEGMENT_LIST`; a directory without the
list holds one segment, `INDEX_FILE`. Every entry is in exactly one
segment, and a lookup returns the entries of all segments in one defined
order (sorted by their stored form), so it returns exactly what one index
built from all the entries at once returns. A load writes one segment; an
append shares the segments it appends to (hard links) and adds one segment
holding only the entries they lack, found by lookups, so its cost follows
what is appended, not what is there. When there are more than
MAX_SEGMENTS, the smallest are merged into one (see `merge_smallest`).

Each segment has a companion file (see `suffix_file`): its distinct
surfaces reversed, a marisa trie, so that surfaces can be found by how they
end (`富临大酒店` for `深圳富临大酒店`). It is written with its segment from
the same sorted entries, so its cost follows the segment's size. A segment
without it (an index written before it existed) still answers every lookup
but those by the end of a surface; opening such an index logs a warning.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import unicodedata
from dataclasses import dataclass
from itertools import islice, repeat
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import marisa_trie

from coqa.kb.mention_segments import (
    SEGMENT_LIST, SEPARATOR, mapped_entries, merge_smallest, next_segment_name,
    segment_files, share_segment, suffix_file, write_segment,
)  # fmt: skip
from coqa.kb.surfaces import base_name, bracket_alias, fold_case_and_dots, normalize_surface

MENTION, NAME, LITERAL = "m", "n", "l"
MAX_LITERAL_LENGTH = 40
MIN_SEGMENT_LENGTH = 2
_NAME_HEAD, _LITERAL_HEAD = f"{NAME}0\t".encode(), f"{LITERAL}0\t".encode()
_SEGMENT_SPLIT = re.compile(r"[、，,;；/|]+")
log = logging.getLogger("coqa")


_NFKC = functools.partial(unicodedata.normalize, "NFKC")
# The full-width characters of PKU BASE names (`_（…）`), with their NFKC forms.
_WIDE = (("（", "("), ("）", ")"))


@dataclass(frozen=True)
class IndexEntry:
    """One thing a surface may name: `target` is an entity name (kinds MENTION,
    NAME) or a literal value (kind LITERAL); `rank` is the mention2ent rank
    (1 = most likely), 0 where the source has none."""

    kind: str
    target: str
    rank: int


def _decode(key: str, value: bytes) -> IndexEntry | None:
    """The entry stored as `value` under `key`: `{kind}{rank}\\t{target}`, the
    target left out when it is the key itself (most names and literals).
    None for a value that is not in this form (an index written before the
    loader checked every rank could hold a rank too long for `int`): one bad
    entry must not stop a question from being answered."""
    try:
        head, target = value.decode("utf-8").split("\t", 1)
        return IndexEntry(head[0], target or key, int(head[1:]))
    except ValueError:  # also UnicodeDecodeError
        return None


def _decode_all(key: str, values: Iterable[bytes]) -> tuple[IndexEntry, ...]:
    """The entries stored under `key`, without those `_decode` cannot read."""
    entries = (_decode(key, value) for value in values)
    return tuple(entry for entry in entries if entry is not None)


def _stored_target(key: bytes, target: bytes) -> bytes:
    """The target as stored under `key`: nothing when it is the key itself."""
    return b"" if target == key else target


def _encode_each(texts: Sequence[str]) -> list[bytes]:
    """UTF-8 of each text, encoded as one joined text (one C call instead of one per text)."""
    encoded = "\n".join(texts).encode("utf-8").split(b"\n")
    if len(encoded) != len(texts):  # a text holds a "\n" (or there are none)
        encoded = [text.encode("utf-8") for text in texts]
    return encoded


def index_keys(surfaces: Sequence[str]) -> list[bytes]:
    """The UTF-8 keys under which `surfaces` are indexed, one per surface:
    ``normalize_surface(s).strip()`` of each, computed with C-level maps and
    replacements over the joined surfaces, which gives the same result:
    replacing a character by its NFKC decomposition (`_WIDE`) never changes
    a text's NFKC form, and lower case looks across cased and case-ignorable
    letters only, so never across a line break. (NFKC itself stays per
    surface: an NFKC text is recognized quickly, a long joined one rarely is.)"""
    joined = "\n".join(surfaces)
    if joined.count("\n") != len(surfaces) - 1:  # a surface holds a "\n" (or there are none)
        return [normalize_surface(surface).strip().encode("utf-8") for surface in surfaces]
    for wide, narrow in _WIDE:
        joined = joined.replace(wide, narrow)
    joined = fold_case_and_dots("\n".join(map(_NFKC, joined.split("\n"))))
    return _encode_each(list(map(str.strip, joined.split("\n"))))


class MentionIndexBuilder:
    """Collects surfaces while the KB files stream by; `save` writes the index.

    The add methods take batches: the work per surface is done in C over
    the joined batch, which is what makes indexing PKU BASE fast.

    With `base` (the directory of an existing index, `coqa load --append`)
    the builder collects only the entries `base` lacks, checked by lookups
    in its memory-mapped segments, and `save` writes an index holding
    `base`'s segments and one for the new entries."""

    def __init__(self, base: str | Path | None = None) -> None:
        # key + SEPARATOR + value as one bytes object: half the memory of a
        # (str, bytes) tuple, and exactly the form marisa's BytesTrie stores.
        self._entries: set[bytes] = set()
        self._base = [] if base is None else segment_files(Path(base))
        self._base_segments = [mapped_entries(path) for path in self._base]

    def _add(self, surfaces: Sequence[str], heads: Iterable[bytes], targets: Sequence[str]) -> None:
        """Index `targets[i]` with `heads[i]` (`{kind}{rank}\\t`, see `_decode`)
        under `surfaces[i]`; surfaces that normalize to nothing are skipped."""
        keys = index_keys(surfaces)
        shown = map(_stored_target, keys, _encode_each(targets))
        entries: Iterable[bytes] = map(b"".join, zip(keys, repeat(SEPARATOR), heads, shown))
        if b"" in keys:
            entries = (entry for entry in entries if entry[0] != SEPARATOR[0])
        if not self._base_segments:
            self._entries.update(entries)
            return
        new = set(entries)
        new -= self._entries
        for segment in self._base_segments:
            new = {entry for entry in new if entry not in segment}
        self._entries |= new

    def add_mentions(self, mentions: Sequence[str], entities: Sequence[str], ranks: Sequence[int | str]) -> None:
        """Add mention2ent rows: `mentions[i]` may name the entity `entities[i]`
        (a canonical name, see `canonical_name`) with rank `ranks[i]` (an int
        or its decimal digits without leading zeros)."""
        self._add(mentions, _encode_each(list(map(f"{MENTION}{{}}\t".format, ranks))), entities)

    def add_entities(self, names: Sequence[str]) -> None:
        """Add entities by their canonical names: each under its name, its base
        name (see `base_name`) and its bracket alias (see `bracket_alias`)."""
        self._add(names, repeat(_NAME_HEAD), names)
        shorts = [(base_name(name), name) for name in names if "(" in name or "（" in name]
        shorts = [(short, name) for short, name in shorts if short != name]
        aliases = [(bracket_alias(name), name) for _, name in shorts]
        for pairs in (shorts, [(alias, name) for alias, name in aliases if alias]):
            self._add([surface for surface, _ in pairs], repeat(_NAME_HEAD), [name for _, name in pairs])

    def add_literals(self, values: Sequence[str]) -> None:
        """Add literal values of at most MAX_LITERAL_LENGTH characters, each under
        itself and under its segments (split at list punctuation) of at least
        MIN_SEGMENT_LENGTH characters."""
        short = [value for value in values if len(value) <= MAX_LITERAL_LENGTH]
        self._add(short, repeat(_LITERAL_HEAD), short)
        segments = [
            (segment, value)
            for value in short
            if _SEGMENT_SPLIT.search(value)
            for segment in map(str.strip, _SEGMENT_SPLIT.split(value))
            if len(segment) >= MIN_SEGMENT_LENGTH and segment != value
        ]
        self._add([segment for segment, _ in segments], repeat(_LITERAL_HEAD), [value for _, value in segments])

    def __len__(self) -> int:
        """The number of entries collected (with a `base`: those it lacks)."""
        return len(self._entries)

    def save(self, directory: str | Path) -> int:
        """Write the index into `directory` (created if needed, on the file
        system of `base`): `base`'s segments and, unless nothing is new, one
        segment for the collected entries (then merged as `merge_smallest`
        says). Returns the number of entries of the whole index."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        names = [path.name for path in self._base]
        for path in self._base:
            share_segment(path, directory / path.name)
            if suffix_file(path).is_file():
                share_segment(suffix_file(path), suffix_file(directory / path.name))
        if self._entries or not names:
            names.append(next_segment_name(names))
            write_segment(self._entries, directory / names[-1])
        names = merge_smallest(directory, names)
        listed = directory / SEGMENT_LIST
        listed.with_suffix(".tmp").write_text(json.dumps({"segments": names}) + "\n", encoding="utf-8")
        listed.with_suffix(".tmp").replace(listed)
        return sum(len(mapped_entries(directory / name)) for name in names)


@dataclass(frozen=True)
class SurfaceMatch:
    """A surface found in a (normalized) text at [start, end)."""

    start: int
    end: int
    surface: str
    entries: tuple[IndexEntry, ...]


class MentionIndex:
    """Read side of the index; opened by memory-mapping its segments. Every
    answer is the same as that of one trie holding all the entries, the
    entries of a surface sorted by their stored form."""

    def __init__(self, segments: Sequence[marisa_trie.BytesTrie], suffixes: Sequence[marisa_trie.Trie] = ()) -> None:
        self._segments = tuple(segments)
        self._suffixes = tuple(suffixes)  # the suffix files of the segments that have one

    @classmethod
    def open(cls, directory: str | Path) -> "MentionIndex":
        paths = segment_files(Path(directory))
        for path in paths:
            if not path.is_file():
                raise FileNotFoundError(f"no mention index at {path}: build it with `coqa load`")
        segments, suffixes = [], []
        for path in paths:
            trie = marisa_trie.BytesTrie()
            trie.mmap(str(path))
            segments.append(trie)
            if suffix_file(path).is_file():
                reversed_surfaces = marisa_trie.Trie()
                reversed_surfaces.mmap(str(suffix_file(path)))
                suffixes.append(reversed_surfaces)
        if len(suffixes) < len(segments):
            log.warning(
                "the mention index at %s was written before suffix files: names written without their leading part "
                "are not found in its older segments; rebuild it with `coqa load KB_DIR --store DIR --replace` "
                "(or --index-only)", directory,
            )  # fmt: skip
        return cls(segments, suffixes)

    def __len__(self) -> int:
        return sum(map(len, self._segments))

    def surfaces(self) -> set[str]:
        """Every indexed surface, once (read whole: for indexes small enough to hold in memory)."""
        return {key for segment in self._segments for key in segment.keys()}

    def _entries(self, key: str) -> tuple[IndexEntry, ...]:
        """The entries stored under exactly `key`, in all segments."""
        values = [value for segment in self._segments for value in segment.get(key, ())]
        values.sort()
        return _decode_all(key, values)

    def lookup(self, surface: str) -> list[IndexEntry]:
        """Entries for exactly this surface (normalized here)."""
        return list(self._entries(normalize_surface(surface)))

    def _begins_a_key(self, prefix: str) -> bool:
        return any(next(iter(segment.iterkeys(prefix)), None) is not None for segment in self._segments)

    def prefix_end(self, text: str, start: int, min_length: int) -> int | None:
        """The end of the longest span of `text` from `start`, at least
        `min_length` long, that begins some indexed surface; None when none does."""
        end = start + min_length
        if end > len(text) or not self._begins_a_key(text[start:end]):
            return None
        while end < len(text) and self._begins_a_key(text[start : end + 1]):
            end += 1
        return end

    def surfaces_beginning(self, prefix: str, limit: int) -> list[str]:
        """Up to `limit` indexed surfaces that begin with `prefix` (the prefix
        itself included when indexed), sorted. Each segment yields at most
        `limit` keys, in the trie's own order, so the cost is bounded however
        many surfaces share the prefix; when more do, which ones are kept
        follows that order, not relevance."""
        keys = {key for segment in self._segments for key in islice(segment.iterkeys(prefix), limit)}
        return sorted(keys)[:limit]

    def entries(self, surface: str) -> tuple[IndexEntry, ...]:
        """The entries stored under exactly `surface`, which must already be normalized."""
        return self._entries(surface)

    def completions(self, text: str, start: int, min_length: int, max_keys: int) -> SurfaceMatch | None:
        """The longest span of `text` from `start` (at least `min_length` long)
        that begins some indexed surfaces without being one, with the entries of
        those surfaces, when there are at most `max_keys` of them."""
        end = self.prefix_end(text, start, min_length)
        if end is None:
            return None
        return self._partial_match(text, start, end, lambda prefix: sorted({key for segment in self._segments for key in segment.keys(prefix)}), max_keys)

    def _partial_match(self, text: str, start: int, end: int, surfaces_of: Callable[[str], list[str]], max_keys: int) -> SurfaceMatch | None:
        """`text[start:end]` with the entries of the surfaces `surfaces_of` it
        gives, unless the span is itself indexed or gives more than `max_keys`."""
        span = text[start:end]
        if any(span in segment for segment in self._segments):
            return None
        keys = surfaces_of(span)
        if len(keys) > max_keys:
            return None
        entries = tuple(entry for key in keys for entry in self._entries(key))
        return SurfaceMatch(start, end, span, entries)

    def _ends_a_key(self, suffix: str) -> bool:
        reversed_suffix = suffix[::-1]
        return any(next(iter(trie.iterkeys(reversed_suffix)), None) is not None for trie in self._suffixes)

    def suffix_start(self, text: str, end: int, min_length: int) -> int | None:
        """The start of the longest span of `text` ending at `end`, at least
        `min_length` long, that ends some indexed surface; None when none does."""
        start = end - min_length
        if start < 0 or not self._ends_a_key(text[start:end]):
            return None
        while start > 0 and self._ends_a_key(text[start - 1 : end]):
            start -= 1
        return start

    def surfaces_ending(self, suffix: str, limit: int) -> list[str]:
        """Up to `limit` indexed surfaces that end with `suffix` (the suffix
        itself included when indexed), sorted; bounded like `surfaces_beginning`."""
        reversed_suffix = suffix[::-1]
        keys = {key[::-1] for trie in self._suffixes for key in islice(trie.iterkeys(reversed_suffix), limit)}
        return sorted(keys)[:limit]

    def suffix_completions(self, text: str, end: int, min_length: int, max_keys: int) -> SurfaceMatch | None:
        """The longest span of `text` ending at `end` (at least `min_length`
        long) that ends some indexed surfaces without being one, with the
        entries of those surfaces, when there are at most `max_keys` of them:
        a name written without its leading part (`富临大酒店` for `深圳富临大酒店`)."""
        start = self.suffix_start(text, end, min_length)
        if start is None:
            return None
        return self._partial_match(text, start, end, lambda suffix: self.surfaces_ending(suffix, max_keys + 1), max_keys)

    def find_all(self, text: str) -> Iterator[SurfaceMatch]:
        """Every indexed surface occurring in `text`, which must already be
        normalized with `normalize_surface`, by start, then shortest first."""
        for start in range(len(text)):
            rest = text[start:]
            if len(self._segments) == 1:
                surfaces = self._segments[0].prefixes(rest)  # shortest first
            else:
                surfaces = sorted({surface for segment in self._segments for surface in segment.prefixes(rest)}, key=len)
            for surface in surfaces:
                yield SurfaceMatch(start, start + len(surface), surface, self._entries(surface))
