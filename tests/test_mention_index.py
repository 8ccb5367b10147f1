"""The mention index builder: batch normalization equals the one-by-one
contract, and every kind of surface (mention, name, base name, bracket alias,
literal, literal segment) is found after a save and reopen."""

from __future__ import annotations

from pathlib import Path

import marisa_trie
from hypothesis import given, settings
from hypothesis import strategies as st

from coqa.kb.mention_index import (
    LITERAL,
    MAX_LITERAL_LENGTH,
    MENTION,
    NAME,
    IndexEntry,
    MentionIndex,
    MentionIndexBuilder,
    index_keys,
)
from coqa.kb.surfaces import normalize_surface

# Characters whose normalization depends on context or changes length: final
# sigma, combining marks (composing with what precedes them), full width and
# compatibility forms, middle dots, white space of several kinds, line breaks.
_TRICKY = "ΣσΑaA\u0301\u0308e\u0041\uff21\uff11\u2460\ufb01・•‧∙· \t\u3000\u00a0\x1c\u2028\x85\r\n李白_（）()"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from(_TRICKY), max_size=6), max_size=6))
def test_index_keys_equal_normalizing_one_by_one(surfaces: list[str]) -> None:
    expected = [normalize_surface(surface).strip().encode("utf-8") for surface in surfaces]
    assert index_keys(surfaces) == expected


def _saved(builder: MentionIndexBuilder, tmp_path: Path) -> MentionIndex:
    builder.save(tmp_path)
    return MentionIndex.open(tmp_path)


def test_every_kind_of_surface_is_found(tmp_path: Path) -> None:
    builder = MentionIndexBuilder()
    builder.add_mentions(["ＬＩ Bai ", "诗仙"], ["李白_（唐朝诗人）", "李白_（唐朝诗人）"], [2, "1"])
    builder.add_entities(["李白_（唐朝诗人）", "故宫博物院（故宫）", "Σοφία"])
    builder.add_literals(["北京、上海", "x" * (MAX_LITERAL_LENGTH + 1)])
    index = _saved(builder, tmp_path)
    assert index.lookup("li bai") == [IndexEntry(MENTION, "李白_（唐朝诗人）", 2)]
    assert index.lookup("诗仙") == [IndexEntry(MENTION, "李白_（唐朝诗人）", 1)]
    assert index.lookup("李白") == [IndexEntry(NAME, "李白_（唐朝诗人）", 0)]
    assert index.lookup("故宫") == [IndexEntry(NAME, "故宫博物院（故宫）", 0)]
    assert index.lookup("故宫博物院") == [IndexEntry(NAME, "故宫博物院（故宫）", 0)]
    assert index.lookup("ΣΟΦΊΑ") == [IndexEntry(NAME, "Σοφία", 0)]
    assert index.lookup("上海") == [IndexEntry(LITERAL, "北京、上海", 0)]
    assert index.lookup("北京、上海") == [IndexEntry(LITERAL, "北京、上海", 0)]
    assert index.lookup("x" * (MAX_LITERAL_LENGTH + 1)) == []
    assert len(index) == len(builder) == 11


def test_blank_surfaces_and_repeats_are_not_indexed(tmp_path: Path) -> None:
    builder = MentionIndexBuilder()
    builder.add_mentions([" ", "\u3000", "甲", "甲"], ["a", "b", "c", "c"], [1, 1, 1, 1])
    builder.add_entities([])
    builder.add_literals([])
    assert len(builder) == 1
    assert _saved(builder, tmp_path).lookup("甲") == [IndexEntry(MENTION, "c", 1)]


def test_a_surface_with_a_line_break_is_indexed_whole(tmp_path: Path) -> None:
    builder = MentionIndexBuilder()
    builder.add_mentions(["上\n下", "左"], ["甲", "乙"], [1, 2])
    index = _saved(builder, tmp_path)
    assert index.lookup("上\n下") == [IndexEntry(MENTION, "甲", 1)]
    assert index.lookup("左") == [IndexEntry(MENTION, "乙", 2)]


def test_a_target_equal_to_its_key_is_stored_once_and_read_back_whole(tmp_path: Path) -> None:
    builder = MentionIndexBuilder()
    builder.add_entities(["李白", "Li Bai"])
    builder.add_mentions(["李白"], ["李白"], [1])
    index = _saved(builder, tmp_path)
    assert index._trie["李白"] and all(value.endswith(b"\t") for value in index._trie["李白"])
    assert set(index.lookup("李白")) == {IndexEntry(NAME, "李白", 0), IndexEntry(MENTION, "李白", 1)}
    assert index.lookup("li bai") == [IndexEntry(NAME, "Li Bai", 0)]
    assert [match.entries for match in index.find_all("诗人李白")] == [tuple(index.lookup("李白"))]


def test_appending_to_an_index_with_whole_targets_adds_no_twins(tmp_path: Path) -> None:
    """Indexes written before targets equal to their key were left out hold
    them in full; appending to one must not store such an entry twice."""
    old = tmp_path / "old"
    old.mkdir()
    marisa_trie.BytesTrie([("李白", f"{NAME}0\t李白".encode())]).save(str(old / "mentions.marisa"))
    builder = MentionIndexBuilder()
    builder.add_index(MentionIndex.open(old))
    builder.add_entities(["李白"])
    assert len(builder) == 1
    assert _saved(builder, tmp_path / "new").lookup("李白") == [IndexEntry(NAME, "李白", 0)]
