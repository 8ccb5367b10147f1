"""The mention index builder: batch normalization equals the one-by-one
contract, and every kind of surface (mention, name, base name, bracket alias,
literal, literal segment) is found after a save and reopen. An index grown
by appended segments answers exactly as one built at once."""

from __future__ import annotations

import json
import os
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
    SurfaceMatch,
    index_keys,
)
from coqa.kb.mention_segments import MAX_SEGMENTS, SEGMENT_LIST, suffix_file
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
    trie = marisa_trie.BytesTrie()
    trie.mmap(str(tmp_path / "mentions.marisa"))
    assert trie["李白"] and all(value.endswith(b"\t") for value in trie["李白"])
    assert set(index.lookup("李白")) == {IndexEntry(NAME, "李白", 0), IndexEntry(MENTION, "李白", 1)}
    assert index.lookup("li bai") == [IndexEntry(NAME, "Li Bai", 0)]
    assert [match.entries for match in index.find_all("诗人李白")] == [tuple(index.lookup("李白"))]


def _surfaces() -> st.SearchStrategy[str]:
    return st.text(st.sampled_from("李白杜甫诗人唐朝ab_（）、"), min_size=1, max_size=5)


# One load: (mention rows, entity names, literal values).
_LOADS = st.lists(
    st.tuples(
        st.lists(st.tuples(_surfaces(), _surfaces(), st.integers(0, 3)), max_size=6),
        st.lists(_surfaces(), max_size=4),
        st.lists(_surfaces(), max_size=4),
    ),
    min_size=1,
    max_size=MAX_SEGMENTS + 3,
)


def _add_load(builder: MentionIndexBuilder, load: tuple) -> None:
    rows, names, values = load
    builder.add_mentions([row[0] for row in rows], [row[1] for row in rows], [row[2] for row in rows])
    builder.add_entities(names)
    builder.add_literals(values)


def _answers(index: MentionIndex, probes: list[str]) -> list:
    """Everything a reader of the index can ask, for each probe text."""
    return [
        (
            index.lookup(probe),
            list(index.find_all(probe)),
            [index.completions(probe, start, 1, 3) for start in range(len(probe))],
            [index.suffix_completions(probe, end, 1, 3) for end in range(len(probe) + 1)],
        )
        for probe in probes
    ]


@settings(max_examples=60, deadline=None)
@given(_LOADS, st.lists(_surfaces(), min_size=1, max_size=8))
def test_an_index_grown_by_appends_answers_as_one_built_at_once(tmp_path_factory, loads: list, probes: list[str]) -> None:
    root = tmp_path_factory.mktemp("appends")
    at_once = MentionIndexBuilder()
    for load in loads:
        _add_load(at_once, load)
    at_once.save(root / "at-once")
    directory = None
    for number, load in enumerate(loads):
        appended = MentionIndexBuilder(directory)
        _add_load(appended, load)
        directory = root / f"append-{number}"
        saved_entries = appended.save(directory)
    expected, grown = MentionIndex.open(root / "at-once"), MentionIndex.open(directory)
    assert saved_entries == len(grown) == len(expected)
    assert len(json.loads((directory / SEGMENT_LIST).read_text())["segments"]) <= MAX_SEGMENTS
    assert _answers(grown, probes) == _answers(expected, probes)


def test_surfaces_are_found_by_their_end(tmp_path: Path) -> None:
    builder = MentionIndexBuilder()
    builder.add_entities(["深圳富临大酒店", "富临", "杭州开元大酒店", "宁波开元大酒店"])
    index = _saved(builder, tmp_path)
    text = "富临大酒店在哪"
    assert index.surfaces_ending("大酒店", 5) == ["宁波开元大酒店", "杭州开元大酒店", "深圳富临大酒店"]
    assert index.suffix_start(text, 5, 3) == 0
    assert index.suffix_completions(text, 5, 3, 5) == SurfaceMatch(0, 5, "富临大酒店", (IndexEntry(NAME, "深圳富临大酒店", 0),))
    assert index.suffix_completions("开元大酒店", 5, 3, 1) is None  # ends two surfaces: more than max_keys
    assert index.suffix_completions("富临", 2, 2, 5) is None  # an indexed surface itself: exact matching has it
    assert index.suffix_completions(text, 7, 2, 5) is None


def test_an_index_written_before_suffix_files_still_answers(tmp_path: Path, caplog) -> None:
    builder = MentionIndexBuilder()
    builder.add_entities(["深圳富临大酒店"])
    builder.save(tmp_path / "old")
    suffix_file(tmp_path / "old" / "mentions.marisa").unlink()
    with caplog.at_level("WARNING", logger="coqa"):
        index = MentionIndex.open(tmp_path / "old")
    assert "before suffix files" in caplog.text
    assert index.lookup("深圳富临大酒店") == [IndexEntry(NAME, "深圳富临大酒店", 0)]
    assert index.suffix_completions("富临大酒店", 5, 3, 5) is None
    appended = MentionIndexBuilder(tmp_path / "old")
    appended.add_entities(["广州富临大酒店"])
    appended.save(tmp_path / "next")
    assert index_files(tmp_path / "next") == ["mentions-1.marisa", "mentions-1.suffixes.marisa", "mentions.marisa", SEGMENT_LIST]
    grown = MentionIndex.open(tmp_path / "next")
    assert grown.suffix_completions("富临大酒店", 5, 3, 5).entries == (IndexEntry(NAME, "广州富临大酒店", 0),)


def index_files(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


def test_an_append_shares_the_segments_and_adds_only_what_is_new(tmp_path: Path) -> None:
    base = MentionIndexBuilder()
    base.add_entities(["李白", "杜甫"])
    base.save(tmp_path / "base")
    appended = MentionIndexBuilder(tmp_path / "base")
    appended.add_entities(["李白", "王维"])
    appended.add_mentions(["诗佛"], ["王维"], [1])
    assert len(appended) == 2
    assert appended.save(tmp_path / "next") == 4
    assert json.loads((tmp_path / "next" / SEGMENT_LIST).read_text()) == {"segments": ["mentions.marisa", "mentions-1.marisa"]}
    assert os.path.samefile(tmp_path / "base" / "mentions.marisa", tmp_path / "next" / "mentions.marisa")
    assert MentionIndex.open(tmp_path / "next").lookup("诗佛") == [IndexEntry(MENTION, "王维", 1)]
    assert MentionIndex.open(tmp_path / "base").lookup("诗佛") == []


def test_an_append_with_nothing_new_adds_no_segment(tmp_path: Path) -> None:
    base = MentionIndexBuilder()
    base.add_entities(["李白"])
    base.save(tmp_path / "base")
    appended = MentionIndexBuilder(tmp_path / "base")
    appended.add_entities(["李白"])
    assert appended.save(tmp_path / "next") == 1
    assert json.loads((tmp_path / "next" / SEGMENT_LIST).read_text()) == {"segments": ["mentions.marisa"]}


def test_past_max_segments_the_smallest_are_merged(tmp_path: Path) -> None:
    directory = tmp_path / "0"
    first = MentionIndexBuilder()
    first.add_entities([f"实体{i}" for i in range(1000)])
    first.save(directory)
    for number in range(1, MAX_SEGMENTS + 1):
        builder = MentionIndexBuilder(directory)
        builder.add_entities([f"新{number}"])
        directory = tmp_path / str(number)
        builder.save(directory)
    names = json.loads((directory / SEGMENT_LIST).read_text())["segments"]
    assert len(names) == MAX_SEGMENTS // 2
    assert os.path.samefile(tmp_path / "0" / "mentions.marisa", directory / "mentions.marisa")  # the large one is not rewritten
    suffix_files = [suffix_file(directory / name).name for name in names]
    assert sorted(path.name for path in directory.iterdir()) == sorted(names + suffix_files + [SEGMENT_LIST])
    assert len(MentionIndex.open(directory)) == 1000 + MAX_SEGMENTS
