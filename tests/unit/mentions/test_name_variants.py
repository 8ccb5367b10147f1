"""Names written by sound or shortened (coqa.mentions.name_variants), over a real
mention index of invented names: found where the exact, fuzzy and suffix
detectors find nothing, never for a name written as indexed, never over a
span another detector found, and only when the setting asks for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.kb.mention_index import MentionIndex, MentionIndexBuilder
from coqa.mentions.detection import detect_mentions, normalize_question
from coqa.mentions.name_variants import (
    MAX_SHORT_TARGETS,
    NameVariants,
    in_order,
    reading,
)

NAMES = ["慈云塔", "青岭返修厂", "白沙科技大学", "临江市第三中学", "临江"]


@pytest.fixture
def index(tmp_path: Path) -> MentionIndex:
    builder = MentionIndexBuilder()
    builder.add_entities(NAMES + [f"北山{i}号科学馆" for i in range(MAX_SHORT_TARGETS + 1)])
    builder.save(tmp_path)
    return MentionIndex.open(tmp_path)


def _variants(text: str, index: MentionIndex, known: tuple[tuple[int, int], ...] = ()) -> dict[str, tuple[list[str], list[str]]]:
    found = NameVariants.build(index).mentions(normalize_question(text), list(known))
    return {m.surface: (sorted({e.target for e in m.entries}), sorted(m.sources)) for m in found}


def test_characters_are_read_by_their_toneless_pinyin() -> None:
    assert reading("塔") == "ta" and reading("慈") == reading("词") == "ci"
    assert reading("7") == "7" and reading("a") == "a"


def test_a_name_written_with_characters_that_sound_alike_is_found(index: MentionIndex) -> None:
    found = _variants("你知道词云塔是哪一年建的吗", index)
    assert found["词云塔"] == (["慈云塔"], ["fuzzy", "sound"])
    assert _variants("青玲返修厂在哪", index)["青玲返修厂"] == (["青岭返修厂"], ["fuzzy", "sound"])


def test_a_shortened_name_is_found_when_few_names_hold_its_characters_in_order(index: MentionIndex) -> None:
    assert _variants("白沙科大有多少学生", index)["白沙科大"] == (["白沙科技大学"], ["fuzzy", "short"])
    assert _variants("临江三中的校长是谁", index)["临江三中"] == (["临江市第三中学"], ["fuzzy", "short"])
    assert not any("北山" in surface for surface in _variants("北山科学馆几点开门", index))  # more names than MAX_SHORT_TARGETS
    assert in_order("港科大", "香港科技大学") and not in_order("科港大", "香港科技大学")


def test_a_piece_of_a_name_is_no_short_form(index: MentionIndex) -> None:
    assert not any(target == "白沙科技大学" for targets, _ in _variants("白沙科技有多少学生", index).values() for target in targets)


def test_names_written_as_indexed_and_spans_found_otherwise_are_left_alone(index: MentionIndex) -> None:
    assert "慈云塔" not in _variants("慈云塔是哪一年建的", index)
    text = normalize_question("你知道词云塔是哪一年建的吗")
    assert "词云塔" not in _variants(text, index, [(3, 6)])


def test_plain_detection_does_not_find_them(index: MentionIndex) -> None:
    text = normalize_question("你知道词云塔是哪一年建的吗")
    assert all(m.surface != "词云塔" for m in detect_mentions(text, index))
