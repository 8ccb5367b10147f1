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

import functools
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from itertools import repeat
from typing import Iterable, Iterator, Sequence

import marisa_trie

from coqa.kb.surfaces import base_name, bracket_alias, fold_case_and_dots, normalize_surface

MENTION, NAME, LITERAL = "m", "n", "l"
INDEX_FILE = "mentions.marisa"
MAX_LITERAL_LENGTH = 40
MIN_SEGMENT_LENGTH = 2
_SEPARATOR = b"\xff"  # never occurs in UTF-8
_NAME_HEAD, _LITERAL_HEAD = f"{NAME}0\t".encode(), f"{LITERAL}0\t".encode()
_SEGMENT_SPLIT = re.compile(r"[、，,;；/|]+")


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
    the joined batch, which is what makes indexing PKU BASE fast."""

    def __init__(self) -> None:
        # key + _SEPARATOR + value as one bytes object: half the memory of a
        # (str, bytes) tuple, and exactly the form marisa's BytesTrie stores.
        self._entries: set[bytes] = set()

    def _add(self, surfaces: Sequence[str], heads: Iterable[bytes], targets: Sequence[str]) -> None:
        """Index `targets[i]` with `heads[i]` (`{kind}{rank}\\t`, see `_decode`)
        under `surfaces[i]`; surfaces that normalize to nothing are skipped."""
        keys = index_keys(surfaces)
        shown = map(_stored_target, keys, _encode_each(targets))
        entries = map(b"".join, zip(keys, repeat(_SEPARATOR), heads, shown))
        if b"" in keys:
            entries = (entry for entry in entries if entry[0] != _SEPARATOR[0])
        self._entries.update(entries)

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

    def add_index(self, index: "MentionIndex") -> None:
        """Add every entry of an existing index (`coqa load --append`), in the
        form `_add` gives it (indexes written before the target could be left
        out hold it in full)."""
        for key, value in index._trie.items():
            head, target = value.split(b"\t", 1)
            encoded = key.encode("utf-8")
            self._entries.add(b"".join((encoded, _SEPARATOR, head, b"\t", _stored_target(encoded, target))))

    def __len__(self) -> int:
        return len(self._entries)

    def save(self, directory: str | Path) -> Path:
        """Write the index into `directory` (created if needed); return the file."""
        path = Path(directory) / INDEX_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        # A BinaryTrie of key + separator + value is a BytesTrie (same file).
        # marisa builds 40% faster from sorted keys; one trie level makes lookups 3x faster.
        trie = marisa_trie.BinaryTrie(sorted(self._entries), num_tries=1)
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
        key = normalize_surface(surface)
        return list(_decode_all(key, self._trie.get(key, [])))

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
        entries = tuple(entry for key in keys for entry in _decode_all(key, self._trie[key]))
        return SurfaceMatch(start, end, prefix, entries)

    def find_all(self, text: str) -> Iterator[SurfaceMatch]:
        """Every indexed surface occurring in `text`, which must already be
        normalized with `normalize_surface`."""
        for start in range(len(text)):
            for surface in self._trie.prefixes(text[start:]):
                entries = _decode_all(surface, self._trie[surface])
                yield SurfaceMatch(start, start + len(surface), surface, entries)
