"""The persistent mention index: surface strings to the KB terms they may name.

Built by `coqa load` next to the store, memory-mapped when opened, so the full
PKU BASE mention2ent (~13M lines) stays within a small memory budget. Three
kinds of surface are indexed, all under `normalize_surface`:

- `MENTION`: a mention2ent line `mention -> entity` with its rank;
- `NAME`: an entity's full name, its base name (see `base_name`) and the
  alias in a trailing bracket (see `bracket_alias`);
- `LITERAL`: a short literal value and each of its segments split at
  list punctuation (`、，,;；/`), pointing at the whole literal value.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import marisa_trie

from coqa.kb.names import canonical_name

MENTION, NAME, LITERAL = "m", "n", "l"
INDEX_FILE = "mentions.marisa"
MAX_LITERAL_LENGTH = 40
MIN_SEGMENT_LENGTH = 2
_SEPARATOR = b"\xff"  # never occurs in UTF-8
_SEGMENT_SPLIT = re.compile(r"[、，,;；/|]+")
_DOTS = ("•", "・", "‧", "∙")


def normalize_surface(text: str) -> str:
    """The form in which surfaces are indexed and questions are matched:
    NFKC (full width to half width), lower case, one kind of middle dot."""
    text = unicodedata.normalize("NFKC", text).lower()
    for dot in _DOTS:  # str.replace is ten times faster than str.translate here
        text = text.replace(dot, "·")
    return text


_QUALIFIER_OPENERS = ("_（", "_(", "（", "(")
_BRACKET_ALIAS = re.compile(r"[^_][（(]([^（）()]{2,})[）)]$")


def base_name(name: str) -> str:
    """An entity name without its qualifier: the `_（…）` description of PKU BASE
    (`李白_（唐朝诗人）` -> `李白`) or a trailing bracketed branch
    (`故宫博物院（故宫）` -> `故宫博物院`)."""
    for opener in _QUALIFIER_OPENERS:
        cut = name.find(opener)
        if cut > 0:
            return name[:cut]
    return name


def bracket_alias(name: str) -> str:
    """The text in a trailing bracket that is not a `_（…）` description:
    `故宫博物院（故宫）` -> `故宫`; '' when there is none."""
    match = _BRACKET_ALIAS.search(name)
    return match.group(1) if match else ""


@dataclass(frozen=True)
class IndexEntry:
    """One thing a surface may name: `target` is an entity name (kinds MENTION,
    NAME) or a literal value (kind LITERAL); `rank` is the mention2ent rank
    (1 = most likely), 0 where the source has none."""

    kind: str
    target: str
    rank: int


def _encode(kind: str, target: str, rank: int) -> bytes:
    return f"{kind}{rank}\t{target}".encode("utf-8")


def _decode(value: bytes) -> IndexEntry:
    head, target = value.decode("utf-8").split("\t", 1)
    return IndexEntry(head[0], target, int(head[1:]))


class MentionIndexBuilder:
    """Collects surfaces while the KB files stream by; `save` writes the index."""

    def __init__(self) -> None:
        # key + _SEPARATOR + value as one bytes object: half the memory of a (str, bytes) tuple.
        self._entries: set[bytes] = set()

    def _add(self, surface: str, kind: str, target: str, rank: int) -> None:
        key = normalize_surface(surface).strip()
        if key:
            self._entries.add(key.encode("utf-8") + _SEPARATOR + _encode(kind, target, rank))

    def add_mention(self, mention: str, entity: str, rank: int) -> None:
        self._add(mention, MENTION, canonical_name(entity), rank)

    def add_entity(self, name: str) -> None:
        name = canonical_name(name)
        self._add(name, NAME, name, 0)
        short = base_name(name)
        if short != name:
            self._add(short, NAME, name, 0)
            alias = bracket_alias(name)
            if alias:
                self._add(alias, NAME, name, 0)

    def add_literal(self, value: str) -> None:
        if len(value) > MAX_LITERAL_LENGTH:
            return
        self._add(value, LITERAL, value, 0)
        for segment in _SEGMENT_SPLIT.split(value):
            segment = segment.strip()
            if len(segment) >= MIN_SEGMENT_LENGTH and segment != value:
                self._add(segment, LITERAL, value, 0)

    def add_index(self, index: "MentionIndex") -> None:
        """Add every entry of an existing index (`coqa load --append`)."""
        self._entries.update(key.encode("utf-8") + _SEPARATOR + value for key, value in index._trie.items())

    def __len__(self) -> int:
        return len(self._entries)

    def save(self, directory: str | Path) -> Path:
        """Write the index into `directory` (created if needed); return the file."""
        path = Path(directory) / INDEX_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        pairs = (entry.split(_SEPARATOR, 1) for entry in self._entries)
        # marisa sorts by itself (pre-sorting doubles the time); one trie level makes lookups 3x faster.
        trie = marisa_trie.BytesTrie(((key.decode("utf-8"), value) for key, value in pairs), num_tries=1)
        tmp = path.with_suffix(".tmp")
        trie.save(str(tmp))
        tmp.replace(path)
        return path


@dataclass(frozen=True)
class SurfaceMatch:
    """A surface found in a (normalized) text at [start, end)."""

    start: int
    end: int
    surface: str
    entries: tuple[IndexEntry, ...]


class MentionIndex:
    """Read side of the index; opened by memory-mapping the saved trie."""

    def __init__(self, trie: marisa_trie.BytesTrie) -> None:
        self._trie = trie

    @classmethod
    def open(cls, directory: str | Path) -> "MentionIndex":
        path = Path(directory) / INDEX_FILE
        if not path.is_file():
            raise FileNotFoundError(f"no mention index at {path}: build it with `coqa load`")
        trie = marisa_trie.BytesTrie()
        trie.mmap(str(path))
        return cls(trie)

    def __len__(self) -> int:
        return len(self._trie)

    def lookup(self, surface: str) -> list[IndexEntry]:
        """Entries for exactly this surface (normalized here)."""
        return [_decode(v) for v in self._trie.get(normalize_surface(surface), [])]

    def _begins_a_key(self, prefix: str) -> bool:
        return next(iter(self._trie.iterkeys(prefix)), None) is not None

    def completions(self, text: str, start: int, min_length: int, max_keys: int) -> SurfaceMatch | None:
        """The longest span of `text` from `start` (at least `min_length` long)
        that begins some indexed surfaces without being one, with the entries of
        those surfaces, when there are at most `max_keys` of them."""
        end = start + min_length
        if end > len(text) or not self._begins_a_key(text[start:end]):
            return None
        while end < len(text) and self._begins_a_key(text[start : end + 1]):
            end += 1
        prefix = text[start:end]
        if prefix in self._trie:
            return None
        keys = self._trie.keys(prefix)
        if len(keys) > max_keys:
            return None
        entries = tuple(_decode(v) for key in keys for v in self._trie[key])
        return SurfaceMatch(start, end, prefix, entries)

    def find_all(self, text: str) -> Iterator[SurfaceMatch]:
        """Every indexed surface occurring in `text`, which must already be
        normalized with `normalize_surface`."""
        for start in range(len(text)):
            for surface in self._trie.prefixes(text[start:]):
                entries = tuple(_decode(v) for v in self._trie[surface])
                yield SurfaceMatch(start, start + len(surface), surface, entries)
