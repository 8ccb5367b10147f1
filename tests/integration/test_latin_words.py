"""Mention detection over Latin words: a span never begins or ends between
two Latin letters, so the letters inside an English word are not looked up
as names, while a Latin name beside Chinese characters or digits is."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.dataset import read_ccks
from coqa.gold import parse_query
from coqa.kb import INDEX_SUBDIR
from coqa.kb.mention_index import MentionIndex, MentionIndexBuilder
from coqa.mentions.detection import cuts_a_word, detect_mentions, normalize_question


@pytest.fixture
def index(tmp_path: Path) -> MentionIndex:
    builder = MentionIndexBuilder()
    builder.add_entities(["OR_（某游戏角色）", "AT", "NBA", "H7", "World Health Organization", "World", "星河组织"])
    builder.save(tmp_path)
    return MentionIndex.open(tmp_path)


def _surfaces(text: str, index: MentionIndex) -> set[str]:
    return {m.surface for m in detect_mentions(normalize_question(text), index)}


def test_letters_inside_an_english_word_are_no_mention(index: MentionIndex) -> None:
    found = _surfaces("World Health Organization的总部在哪", index)
    assert {"world health organization", "world"} <= found
    assert not found & {"or", "at"}


def test_a_latin_name_beside_chinese_characters_digits_or_spaces_is_a_mention(index: MentionIndex) -> None:
    assert "nba" in _surfaces("NBA球星有哪些", index)
    assert "h7" in _surfaces("H7N9是什么", index)
    assert "or" in _surfaces("游戏里的OR是谁", index)
    assert "at" in _surfaces("at 是什么", index)


def test_cuts_a_word_looks_at_both_ends_of_the_span() -> None:
    text = "organization"
    assert cuts_a_word(text, 0, 2) and cuts_a_word(text, 1, 3) and cuts_a_word(text, 10, 12)
    assert not cuts_a_word(text, 0, 12)
    assert not cuts_a_word("5a景区", 0, 2)


TRAIN = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "pkubase-bench" / "train.txt"


@pytest.mark.skipif(not TRAIN.exists(), reason="pkubase-bench not beside the repository")
def test_no_span_inside_a_latin_word_names_a_gold_entity_of_train(bench_store_dir: Path) -> None:
    index = MentionIndex.open(bench_store_dir / INDEX_SUBDIR)
    dropped = []
    for question in read_ccks(TRAIN):
        text = normalize_question(question.question)
        gold = {name.strip("<>") for name in parse_query(question.sparql).entities()}
        for match in index.find_all(text):
            if cuts_a_word(text, match.start, match.end) and any(entry.target in gold for entry in match.entries):
                dropped.append((question.question, match.surface))
    assert dropped == []
