"""The files of the mention index (coqa.kb.mention_index): immutable segments
(marisa tries) listed oldest first in SEGMENT_LIST, each with its suffix file,
written aside and put in place, shared by hard links on append and merged
when there are more than MAX_SEGMENTS."""

from __future__ import annotations

import json
import os
import re
import shutil
from itertools import groupby
from pathlib import Path
from typing import Iterable, Sequence

import marisa_trie

INDEX_FILE = "mentions.marisa"  # the first segment
SEGMENT_LIST = "segments.json"
MAX_SEGMENTS = 8  # more than this after an append: the smallest are merged
_SEGMENT_FILE = re.compile(r"mentions(?:-[0-9]+)?\.marisa")
_SUFFIX_FILE = re.compile(r"mentions(?:-[0-9]+)?\.suffixes\.(?:marisa|tmp)")  # see `suffix_file`, and its temporary file
# The files an index directory may hold: segments, their suffix files, the list, and the temporary file of each.
_INDEX_DIRECTORY_FILE = re.compile(
    r"(?:mentions(?:-[0-9]+)?|segments)\.tmp|segments\.json|" + _SEGMENT_FILE.pattern + "|" + _SUFFIX_FILE.pattern
)
SEPARATOR = b"\xff"  # between an entry's key and value; never occurs in UTF-8


def segment_files(directory: Path) -> list[Path]:
    """The segment files of the index in `directory`, oldest first: those in
    SEGMENT_LIST, or INDEX_FILE alone when there is no list."""
    listed = directory / SEGMENT_LIST
    if not listed.is_file():
        return [directory / INDEX_FILE]
    return [directory / name for name in json.loads(listed.read_text(encoding="utf-8"))["segments"]]


def is_index_file(name: str) -> bool:
    """Whether a file of this name belongs in an index directory (a segment,
    the segment list, or the temporary file of either)."""
    return _INDEX_DIRECTORY_FILE.fullmatch(name) is not None


def suffix_file(segment: Path) -> Path:
    """The suffix file of a segment: a marisa trie of its distinct surfaces,
    each reversed, so that a prefix search finds the surfaces ending a text."""
    return segment.with_name(segment.name[: -len(".marisa")] + ".suffixes.marisa")


def write_segment(entries: Iterable[bytes], path: Path) -> None:
    """Write entries (key + SEPARATOR + value) as a segment file at `path`,
    and its suffix file (see `suffix_file`)."""
    # A BinaryTrie of key + separator + value is a BytesTrie (same file).
    # marisa builds 40% faster from sorted keys; one trie level makes lookups 3x faster.
    ordered = sorted(entries)
    trie = marisa_trie.BinaryTrie(ordered, num_tries=1)
    temporary = path.with_suffix(".tmp")
    trie.save(str(temporary))
    # The entries of one surface are consecutive once sorted (SEPARATOR sorts after every UTF-8 byte).
    surfaces = (surface for surface, _ in groupby(entry[: entry.index(SEPARATOR)] for entry in ordered))
    reversed_surfaces = marisa_trie.Trie(surface.decode("utf-8")[::-1] for surface in surfaces)
    companion = suffix_file(path)
    reversed_surfaces.save(str(companion.with_suffix(".tmp")))
    companion.with_suffix(".tmp").replace(companion)
    temporary.replace(path)


def mapped_entries(path: Path) -> marisa_trie.BinaryTrie:
    """A segment memory-mapped with its entries (key + SEPARATOR + value) as keys."""
    trie = marisa_trie.BinaryTrie()
    trie.mmap(str(path))
    return trie


def next_segment_name(names: Sequence[str]) -> str:
    """A segment file name not in `names`: INDEX_FILE first, then numbered."""
    if not names:
        return INDEX_FILE
    numbers = [int(name[len("mentions-") : -len(".marisa")]) for name in names if name != INDEX_FILE]
    return f"mentions-{max(numbers, default=0) + 1}.marisa"


def share_segment(source: Path, target: Path) -> None:
    """Put the (immutable) segment `source` at `target`: a hard link, a copy
    on file systems without them."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def merge_smallest(directory: Path, names: list[str]) -> list[str]:
    """The segment list after merging, when there are more than MAX_SEGMENTS,
    the smallest segments into one so that MAX_SEGMENTS // 2 remain. Only the
    merged segments are read, and since each entry is in one segment, merging
    is a union. (Halving rather than merging down to MAX_SEGMENTS spaces the
    merges out; merging the smallest rarely touches the large first segment.)"""
    if len(names) <= MAX_SEGMENTS:
        return names
    by_size = sorted(names, key=lambda name: (directory / name).stat().st_size)
    merged = set(by_size[: len(names) - MAX_SEGMENTS // 2 + 1])
    kept = [name for name in names if name not in merged]
    target = next_segment_name(names)
    write_segment((entry for name in merged for entry in mapped_entries(directory / name).keys()), directory / target)
    for name in merged:
        (directory / name).unlink()
        suffix_file(directory / name).unlink(missing_ok=True)
    return kept + [target]
