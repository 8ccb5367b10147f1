"""`coqa load` under the faults of issue 11, each with the input that broke it
generated here: field rules equal on every path (#3, #10), bad lines that cost
only themselves (#15), one writer at a time (#2), rejects and folders a failed
load must not touch (#14)."""

from __future__ import annotations

from pathlib import Path

import marisa_trie
import pytest

import coqa.kb.line_reading as line_reading_module
from coqa.kb import INDEX_SUBDIR
from coqa.kb.formats import BAD_RANK, TRIPLES
from coqa.kb.loader import load_kb
from coqa.kb.mention_index import MENTION, IndexEntry, MentionIndex
from coqa.kb.rejects import RejectsCounter
from coqa.kb.triple_reading import TripleFileReader

from tests.test_loader import assert_counts_add_up, rejects_rows, write

HUGE_RANK = "1" * 4_301  # more digits than Python's int() takes from a string
REGULAR = "".join(f"提及{i}\t实体{i}\t{i % 7}\n" for i in range(400))
GBK_LINE = "功夫\t功夫_（电影）\t1\n".encode("gbk")


def _load_mentions(tmp_path: Path, content: bytes) -> tuple[Path, list[list[str]]]:
    write(tmp_path, "pkubase-mention2ent.txt", content)
    report = load_kb([tmp_path / "pkubase-mention2ent.txt"], tmp_path / "store", index_only=True)
    assert_counts_add_up(report)
    return tmp_path / "store", rejects_rows(report.rejects_path) if report.rejects_path else []


@pytest.mark.parametrize(
    "block",
    [
        pytest.param(lambda bad: bad, id="alone"),
        pytest.param(lambda bad: REGULAR.encode() + bad + REGULAR.encode(), id="among-regular-lines"),
        pytest.param(lambda bad: REGULAR.encode() + bad + b"<x>\tcrlf\t1\r\n", id="beside-a-repaired-line"),
        pytest.param(lambda bad: GBK_LINE + bad + REGULAR.encode(), id="in-a-block-that-is-not-utf8"),
    ],
)
@pytest.mark.parametrize("block_bytes", [64, 8 << 20])
def test_a_rank_of_4300_digits_is_rejected_whatever_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block, block_bytes: int
) -> None:
    """Issue 11 #3: the line was loaded or rejected depending on its 8 MB
    block, and a loaded one crashed `coqa ask`."""
    monkeypatch.setattr(line_reading_module, "BLOCK_BYTES", block_bytes)
    store, rejects = _load_mentions(tmp_path, block(f"李白\t李白_（诗人）\t{HUGE_RANK}\n".encode()))
    assert [row[2] for row in rejects] == [BAD_RANK]
    assert MentionIndex.open(store / INDEX_SUBDIR).lookup("李白") == []


@pytest.mark.parametrize("rank", ["01", "0", "999999999"])
def test_ranks_within_the_rule_are_loaded_on_both_paths(tmp_path: Path, rank: str) -> None:
    store, rejects = _load_mentions(tmp_path, f"甲\t乙\t{rank}\n".encode() + GBK_LINE)
    assert rejects == []
    assert MentionIndex.open(store / INDEX_SUBDIR).lookup("甲") == [IndexEntry(MENTION, "乙", int(rank))]


@pytest.mark.parametrize("rank", ["1000000000", "١", "+1", " 1", "1_0"])
def test_ranks_outside_the_rule_are_rejected(tmp_path: Path, rank: str) -> None:
    _, rejects = _load_mentions(tmp_path, f"甲\t乙\t{rank}\n".encode())
    assert [row[2] for row in rejects] == [BAD_RANK]


def test_an_index_entry_that_cannot_be_read_is_skipped(tmp_path: Path) -> None:
    """An index written before ranks were checked may hold a rank too long
    for int(): a lookup returns the other entries instead of failing."""
    trie = marisa_trie.BytesTrie([("李白", f"{MENTION}{HUGE_RANK}\t李白_（诗人）".encode()), ("李白", f"{MENTION}1\t李白".encode())])
    trie.save(str(tmp_path / "mentions.marisa"))
    index = MentionIndex.open(tmp_path)
    assert index.lookup("李白") == [IndexEntry(MENTION, "李白", 1)]
    assert [match.entries for match in index.find_all("诗人李白")] == [(IndexEntry(MENTION, "李白", 1),)]


@pytest.mark.parametrize("entity", [" ", "\u3000", "\u2028 ", "< >"])
def test_a_white_space_entity_is_rejected_on_both_paths(tmp_path: Path, entity: str) -> None:
    """Issue 11 #10 / issue 9: 264 fuzzed lines were indexed to entities that do not exist."""
    for neighbours in (b"", GBK_LINE):
        directory = tmp_path / str(len(neighbours))
        directory.mkdir()
        store, rejects = _load_mentions(directory, f"李白\t{entity}\t1\n".encode() + neighbours)
        assert [row[1] for row in rejects] == ["1"]
        assert MentionIndex.open(store / INDEX_SUBDIR).lookup("李白") == []


class _CountingReader(TripleFileReader):
    """Counts the lines that take the one-by-one path."""

    parsed = 0

    def parse(self, text: str) -> list[str]:
        _CountingReader.parsed += 1
        return super().parse(text)


class _Facts:
    def __init__(self) -> None:
        self.regular: list[str] = []
        self.triples: list = []

    def take(self, regular: str, triples) -> None:
        self.regular.append(regular)
        self.triples += triples


def test_a_line_that_is_not_utf8_costs_only_itself(tmp_path: Path) -> None:
    """Issue 11 #15: 31 GBK lines sent their whole 8 MB blocks down the
    one-by-one path (a 2M-triple load 1.3-1.6x slower). Now only the bad
    lines are parsed one by one, and every line keeps its number."""
    lines = [f"<实体{i}>\t<编号>\t\"{i}\" .\n".encode() for i in range(2_000)]
    bad_numbers = [5 + 64 * k for k in range(31)]
    for number in bad_numbers:
        lines[number - 1] = f"<功夫{number}>\t<类型>\t<电影> .\n".encode("gbk")
    lines[99] = b'<x>\t<y>\t"\xff\xfe" .\n'  # neither UTF-8 nor GB18030
    path = write(tmp_path, "pkubase-triples.txt", b"".join(lines))
    _CountingReader.parsed = 0
    facts = _Facts()
    report = _CountingReader(path, TRIPLES, RejectsCounter(), facts).run(_NoProgress())
    assert _CountingReader.parsed == len(bad_numbers)
    assert (report.lines, report.repaired, report.rejected) == (2_000, 31, 1)
    assert report.loaded == 2_000 - 32
    assert sorted(triple.subject for triple in facts.triples) == sorted(f"功夫{n}" for n in bad_numbers)
    assert "".join(facts.regular).count("\n") == 2_000 - 32


class _NoProgress:
    def update(self, _: int) -> None:
        pass
