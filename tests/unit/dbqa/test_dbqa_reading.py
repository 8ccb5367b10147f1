"""Reading DBQA files: the three layouts, CRLF, and every refusal with its line number."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.dbqa.reading import (
    LAYOUT_2016,
    LAYOUT_2017,
    LAYOUT_UNLABELLED,
    DbqaFormatError,
    looks_like_dbqa,
    read_dbqa,
)


def write(tmp_path: Path, text: str, newline: str = "\n") -> Path:
    path = tmp_path / "dbqa.txt"
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


def test_2016_order(tmp_path):
    source = read_dbqa(write(tmp_path, "长江有多长？\t长江全长6300公里。\t1\n长江有多长？\t长江流经多个省份。\t0\n黄山在哪里？\t黄山位于安徽省。\t1\n"))
    assert source.layout == LAYOUT_2016 and source.labelled
    assert [q.question for q in source.questions] == ["长江有多长？", "黄山在哪里？"]
    assert source.questions[0].labels == [1, 0]
    assert [c.line for c in source.questions[0].candidates] == [1, 2]
    assert source.lines == 3


def test_2017_order_with_crlf(tmp_path):
    source = read_dbqa(write(tmp_path, "0\t谁写了红楼梦？\t红楼梦是名著。\n1\t谁写了红楼梦？\t红楼梦的作者是曹雪芹。\n", "\r\n"))
    assert source.layout == LAYOUT_2017
    assert source.questions[0].sentences == ["红楼梦是名著。", "红楼梦的作者是曹雪芹。"]
    assert source.questions[0].labels == [0, 1]


def test_unlabelled_test_layout(tmp_path):
    source = read_dbqa(write(tmp_path, "泰山多高？\t泰山海拔1545米。\n泰山多高？\t泰山在山东。\n"))
    assert source.layout == LAYOUT_UNLABELLED and not source.labelled
    assert [c.label for c in source.questions[0].candidates] == [None, None]


def test_same_content_same_digest_whatever_the_layout(tmp_path):
    a = read_dbqa(write(tmp_path, "问题甲？\t句子一。\t1\n"))
    b = read_dbqa(write(tmp_path, "1\t问题甲？\t句子一。\n", "\r\n"))
    assert a.digest() == b.digest()


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("问？\t句一\t1\n问？\t句二\t2\n", 2, "label '2' is not 0 or 1"),
        ("问？\t句一\t1\n问？\t句二\n", 2, "expected 3 tab-separated fields"),
        ("问？\t句一\t1\n问？\t句二\t0\textra\n", 2, "expected 3"),
        ("问甲？\t句一\t1\n问乙？\t句二\t0\n问甲？\t句三\t0\n", 3, "not contiguous"),
        ("问？\t句一\t1\n\n问？\t句二\t0\n", 2, "expected 3"),
        ("1\t问？\t句一\n0\t问？\n", 2, "expected 3"),
        ("\t句一\t1\n", 1, "the question is empty"),
        ("只有一段\n", 1, "expected 2 or 3"),
        ("1\t问？\t2\n", 1, "cannot tell the column order"),
    ],
)
def test_bad_input_is_refused_with_its_line_number(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(DbqaFormatError) as caught:
        read_dbqa(path)
    assert f"{path}:{line}:" in str(caught.value)
    assert words in str(caught.value)


def test_a_label_10_is_refused_unless_repair_is_asked(tmp_path):
    path = write(tmp_path, "1\t问？\t句一\n10\t问？\t句二\n0\t问？\t句三\n")
    with pytest.raises(DbqaFormatError, match=r":2: label '10' is not 0 or 1; --repair-labels"):
        read_dbqa(path)
    source = read_dbqa(path, repair_labels=True)
    assert source.questions[0].labels == [1, 1, 0]
    assert [(r.line, r.written, r.read_as) for r in source.repairs] == [(2, "10", 1)]


def test_repair_does_not_accept_other_labels(tmp_path):
    with pytest.raises(DbqaFormatError, match=":1: label '12'"):
        read_dbqa(write(tmp_path, "问？\t句一\t12\n"), repair_labels=True)


def test_a_final_empty_line_is_allowed(tmp_path):
    assert read_dbqa(write(tmp_path, "问？\t句一\t1\n\n")).lines == 1


def test_an_empty_file_is_refused(tmp_path):
    with pytest.raises(DbqaFormatError, match="no DBQA lines"):
        read_dbqa(write(tmp_path, ""))


def test_recognising_a_dbqa_file():
    assert looks_like_dbqa(["问？\t句一\t1", "问？\t句二\t0"])
    assert looks_like_dbqa(["0\t问？\t句一"])
    assert looks_like_dbqa(["问？\t句一"])
    assert not looks_like_dbqa(["问题一？", "问题二？"])
    assert not looks_like_dbqa(["q1:问题？", "select ?x where { <a> <b> ?x . }", "<答>\t<案>", ""])
    assert not looks_like_dbqa(["<question id=1>\t问题？", "<answer id=1>\t答案"])
    assert not looks_like_dbqa([])
