"""Fuzzy and suffix mention detection: names written with an extra 的, a
character more or less, or without their leading part are found, bounded per
position, over a real index; a window never runs over asking words, and a
fuzzy match never changes a number."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.kb.mention_index import MentionIndex, MentionIndexBuilder
from coqa.mentions.detection import (
    FUZZY_MAX_SURFACES,
    MAX_COMPLETIONS,
    detect_mentions,
    fuzzy_mentions,
    normalize_question,
)


@pytest.fixture
def index(tmp_path: Path) -> MentionIndex:
    builder = MentionIndexBuilder()
    builder.add_entities(["青城星河美术馆_（青城市的美术馆）", "青城·白鹭乐园", "青城", "白鹭湾", "1990年11月26日"])
    builder.add_entities(["深圳富临大酒店"] + [f"{city}开元大酒店" for city in "东南西北中上下"])
    builder.add_entities([f"青山商店{i:03d}" for i in range(3 * FUZZY_MAX_SURFACES)])
    builder.save(tmp_path)
    return MentionIndex.open(tmp_path)


def _fuzzy(text: str, index: MentionIndex) -> dict[str, list[str]]:
    return {m.surface: [e.target for e in m.entries] for m in fuzzy_mentions(normalize_question(text), index)}


def test_a_name_written_with_an_extra_de_is_found(index: MentionIndex) -> None:
    found = _fuzzy("青城的星河美术馆几点开门", index)
    assert found["青城的星河美术馆"] == ["青城星河美术馆_（青城市的美术馆）"]


def test_a_name_missing_a_character_is_found(index: MentionIndex) -> None:
    assert _fuzzy("青城白鹭乐园的门票多少钱", index)["青城白鹭乐园"] == ["青城·白鹭乐园"]


def test_a_name_written_exactly_is_left_to_exact_matching(index: MentionIndex) -> None:
    text = normalize_question("青城·白鹭乐园的门票多少钱")
    assert all(m.surface != "青城·白鹭乐园" for m in fuzzy_mentions(text, index))
    assert any(m.surface == "青城·白鹭乐园" and "fuzzy" not in m.sources for m in detect_mentions(text, index))


def test_a_distant_text_matches_nothing(index: MentionIndex) -> None:
    assert _fuzzy("青城有多少人口", index) == {}


def test_fuzzy_mentions_are_tagged_and_kept_by_detection(index: MentionIndex) -> None:
    mentions = detect_mentions(normalize_question("青城的星河美术馆几点开门"), index)
    fuzzy = [m for m in mentions if m.sources == frozenset({"fuzzy"})]
    assert [m.surface for m in fuzzy] == ["青城的星河美术馆"]


def test_surfaces_sharing_a_prefix_are_read_up_to_a_limit(index: MentionIndex) -> None:
    surfaces = index.surfaces_beginning("青山商店", FUZZY_MAX_SURFACES)
    assert len(surfaces) == FUZZY_MAX_SURFACES
    assert all(s.startswith("青山商店") for s in surfaces) and surfaces == sorted(surfaces)
    assert index.surfaces_beginning("青城星", 10) == ["青城星河美术馆", "青城星河美术馆_(青城市的美术馆)"]
    assert index.prefix_end("青城星河大剧院", 0, 2) == 4
    assert index.prefix_end("黑水河", 0, 2) is None


def test_a_window_stops_before_asking_words(index: MentionIndex) -> None:
    assert _fuzzy("青城有哪些星河美术馆", index) == {}
    assert _fuzzy("青城的星河美术馆有哪些", index)["青城的星河美术馆"] == ["青城星河美术馆_（青城市的美术馆）"]


def test_a_fuzzy_match_keeps_the_numbers(index: MentionIndex) -> None:
    assert _fuzzy("出生于1990年11月6日的人", index) == {}
    assert _fuzzy("出生于1990年11月26号的人", index)["1990年11月26"] == ["1990年11月26日"]


def test_a_name_without_its_leading_part_is_found_by_its_end(index: MentionIndex) -> None:
    mentions = detect_mentions(normalize_question("富临大酒店坐落在哪所城市"), index)
    suffix = [m for m in mentions if m.sources == frozenset({"suffix"})]
    assert [(m.surface, [e.target for e in m.entries]) for m in suffix] == [("富临大酒店", ["深圳富临大酒店"])]


def test_an_end_shared_by_many_names_is_no_mention(index: MentionIndex) -> None:
    mentions = detect_mentions(normalize_question("开元大酒店在哪"), index, min_length=2)
    assert all("suffix" not in m.sources for m in mentions)
    assert len(index.surfaces_ending("开元大酒店", 10)) == 7 > MAX_COMPLETIONS
