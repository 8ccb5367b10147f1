"""The DBQA lexicon (word IDF and PPMI-SVD vectors), the features it gives,
and the text files it learns from, on hand-written examples."""

from __future__ import annotations

import numpy as np
import pytest

from coqa.dataset import DatasetError
from coqa.dbqa.corpus import read_lexicon_text, texts_digest
from coqa.dbqa.lexicon import Lexicon
from coqa.dbqa.similarity import LEXICON_FEATURE_NAMES, lexicon_features
from coqa.dbqa.text import segment

BOOKS = ["红楼梦", "西游记", "水浒传", "三国演义", "聊斋志异", "儒林外史"]
WRITERS = ["曹雪芹", "吴承恩", "施耐庵", "罗贯中", "蒲松龄", "吴敬梓"]
RIVERS = ["长江", "黄河", "珠江", "淮河", "汉江", "湘江"]


def corpus() -> list[str]:
    """作者 and 作家 stand in the same places; 流经 and 长度 in others."""
    texts = []
    for book, writer in zip(BOOKS, WRITERS):
        texts += [f"{book}的作者是{writer}。", f"{book}的作家是{writer}。", f"{writer}是{book}的作者。", f"{writer}是{book}的作家。"]
    for river in RIVERS:
        texts += [f"{river}流经很多省份。", f"{river}的长度很长。", f"{river}流经山区和平原。"]
    return texts


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon.fit([segment(text) for text in corpus()])


def cosine(lexicon: Lexicon, a: str, b: str) -> float:
    first, second = lexicon.rows([a, b])
    return float(first @ second)


def test_words_in_the_same_places_get_close_vectors(lexicon):
    assert cosine(lexicon, "作者", "作家") > 0.8
    assert cosine(lexicon, "作者", "作家") > cosine(lexicon, "作者", "流经") + 0.5
    norms = np.linalg.norm(lexicon.vectors, axis=1)
    assert np.allclose(norms[norms > 0], 1.0, atol=1e-3)


def test_idf_is_higher_for_rarer_words_and_highest_for_unknown_ones(lexicon):
    assert lexicon.word_idf("作者") < lexicon.word_idf("长江") < lexicon.unknown_idf == lexicon.word_idf("不存在的词")


def test_fitting_twice_and_reloading_give_the_same_lexicon(lexicon, tmp_path):
    again = Lexicon.fit([segment(text) for text in corpus()])
    assert again.index == lexicon.index and np.array_equal(again.vectors, lexicon.vectors)
    names = lexicon.save(tmp_path)
    assert names == ["lexicon.json", "vectors.npy"]
    loaded = Lexicon.load(tmp_path)
    assert loaded.index == lexicon.index and np.array_equal(loaded.idf, lexicon.idf)
    assert np.array_equal(loaded.vectors, lexicon.vectors)  # rounded to float16 when learnt, as saved
    assert (tmp_path / "vectors.npy").read_bytes()[:6] == b"\x93NUMPY"


def test_a_lexicon_whose_parts_disagree_is_refused(lexicon, tmp_path):
    lexicon.save(tmp_path)
    np.save(tmp_path / "vectors.npy", np.zeros((1, 3), dtype=np.float16), allow_pickle=False)
    with pytest.raises(ValueError, match="different numbers of words"):
        Lexicon.load(tmp_path)


def test_a_lexicon_of_almost_nothing_still_scores():
    tiny = Lexicon.fit([segment("长江")])
    rows = lexicon_features(tiny, segment("长江有多长？"), [segment("长江很长。"), segment("")])
    assert [set(row) for row in rows] == [set(LEXICON_FEATURE_NAMES)] * 2


def test_a_sentence_saying_the_question_in_other_words_aligns_better(lexicon):
    asked = segment("红楼梦的作者是谁？")
    document = [segment("曹雪芹是红楼梦的作家。"), segment("长江流经很多省份。"), segment("红楼梦的作者是曹雪芹。")]
    other_words, unrelated, same_words = lexicon_features(lexicon, asked, document)
    assert same_words["soft_alignment"] == 1.0 and same_words["soft_missing"] == -1.0
    assert other_words["soft_missing"] > 0.8 > unrelated["soft_missing"]
    assert other_words["soft_alignment_idf"] > unrelated["soft_alignment_idf"]
    assert other_words["corpus_missing_idf"] > 0.0 == same_words["corpus_missing_idf"]
    assert same_words["soft_alignment_idf_gap"] == 0.0 and unrelated["vector_cosine_gap"] < 0.0


def test_lexicon_text_from_a_knowledge_base_and_a_question_file(tmp_path):
    kb = tmp_path / "kb.txt"
    kb.write_text("红楼梦 ||| 作者 ||| 曹雪芹\n\n长江 ||| 长度 ||| 6300公里\n", encoding="utf-8")
    assert read_lexicon_text(kb) == ["红楼梦 作者 曹雪芹", "长江 长度 6300公里"]
    questions = tmp_path / "questions.txt"
    questions.write_text(
        "<question id=1>\t红楼梦的作者是谁？\n<triple id=1>\t红楼梦 ||| 作者 ||| 曹雪芹\n<answer id=1>\t曹雪芹\n=====\n"
        "<question id=2>\t长江有多长？\n",
        encoding="utf-8",
    )
    assert read_lexicon_text(questions) == ["红楼梦的作者是谁？", "长江有多长？"]
    assert texts_digest(["a", "b"]) != texts_digest(["ab"])


def test_other_lexicon_text_files_are_refused(tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("长江\t很长\t1\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="--lexicon-text takes an NLPCC KBQA"):
        read_lexicon_text(other)
    with pytest.raises(DatasetError, match="no such file"):
        read_lexicon_text(tmp_path / "missing.txt")
