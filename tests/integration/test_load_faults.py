"""`coqa load` under the faults of issue 11, each with the input that broke it
generated here: field rules equal on every path (#3, #10), bad lines that cost
only themselves (#15), one writer at a time (#2), rejects and folders a failed
load must not touch (#14)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import marisa_trie
import pyoxigraph as ox
import pytest
from conftest import assert_counts_add_up, rejects_rows, write

import coqa.kb.loading.line_reading as line_reading_module
from coqa.cli.main import main
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KBError
from coqa.kb.loading.formats import BAD_RANK, TRIPLES
from coqa.kb.loading.loader import load_kb
from coqa.kb.loading.manifest import read_manifest
from coqa.kb.loading.rejects import REJECTS_FILE, RejectsCounter
from coqa.kb.loading.store_dir import store_pieces
from coqa.kb.loading.triple_reading import TripleFileReader
from coqa.kb.mention_index import MENTION, IndexEntry, MentionIndex

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


# --- one writer at a time (#2) ------------------------------------------------

_HOLD_LOCK = """
import sys
from pathlib import Path
from coqa.kb.loading.store_dir import writer_lock
with writer_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.read()
"""


def test_a_second_load_on_a_store_in_use_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n")
    store = tmp_path / "store"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD_LOCK, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        with pytest.raises(KBError, match="another coqa load is writing to"):
            load_kb([tmp_path], store)
        assert main(["load", str(tmp_path), "--store", str(store), "--append"]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "another coqa load" in err
        assert not store_pieces(store) and not list(store.glob(".loading-*"))
    finally:
        holder.kill()  # SIGKILL: the kernel releases the lock
        holder.wait()
    assert load_kb([tmp_path], store).triples == 1


_APPEND = """
import sys
from coqa.kb.base import KBError
from coqa.kb.loading.loader import load_kb
try:
    load_kb([sys.argv[1]], sys.argv[2], mode="append", progress=False)
except KBError as error:
    sys.exit(str(error))
"""


def test_concurrent_appends_keep_the_manifest_true(tmp_path: Path) -> None:
    """Issue 11 #2: two appends at once both exited 0 and the manifest's counts
    were wrong. Now each append either runs alone or is refused clearly."""
    store = tmp_path / "store"
    write(tmp_path, "pkubase-triples.txt", "<起点>\t<是>\t<一> .\n")
    load_kb([tmp_path / "pkubase-triples.txt"], store)
    sources = []
    for number in range(2):
        directory = tmp_path / f"more{number}"
        directory.mkdir()
        write(directory, "pkubase-triples.txt", "".join(f"<实体{number}_{i}>\t<编号>\t\"{i}\" .\n" for i in range(3000)))
        write(directory, "pkubase-mention2ent.txt", "".join(f"提及{number}_{i}\t实体{number}_{i}\t1\n" for i in range(3000)))
        sources.append(directory)
    loads = [
        subprocess.Popen([sys.executable, "-c", _APPEND, str(source), str(store)], stderr=subprocess.PIPE, text=True)
        for source in sources
    ]
    outcomes = [(load.wait(timeout=120), load.stderr.read()) for load in loads]
    for code, err in outcomes:
        assert code == 0 or (code == 1 and "another coqa load is writing to" in err), err
    appended = sum(code == 0 for code, _ in outcomes)
    assert appended >= 1
    assert_store_is_true(store, loads=1 + appended, triples=1 + 3000 * appended)


def assert_store_is_true(store: Path, loads: int, triples: int) -> None:
    """The manifest says what the store and the index hold."""
    manifest = read_manifest(store)
    assert len(manifest["loads"]) == loads
    kb = OxigraphStore(store / STORE_SUBDIR)
    try:
        assert manifest["triples"] == len(kb.store) == triples
    finally:
        kb.close()
    assert manifest["index_entries"] == len(MentionIndex.open(store / INDEX_SUBDIR))


# --- what a failed load must not touch (#14) ----------------------------------


def _store_with_rejects(tmp_path: Path) -> tuple[Path, bytes]:
    first = tmp_path / "first"
    first.mkdir()
    write(first, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n<a>\t<b>\n")
    store = tmp_path / "store"
    load_kb([first], store)
    return store, (store / REJECTS_FILE).read_bytes()


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc (a file whose reads fail)")
def test_a_failed_replace_keeps_the_rejects_file(tmp_path: Path) -> None:
    store, rejects = _store_with_rejects(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "pkubase-triples.txt").symlink_to("/proc/self/mem")  # reading it fails: EIO
    with pytest.raises(KBError, match="cannot read"):
        load_kb([broken], store, mode="replace")
    assert (store / REJECTS_FILE).read_bytes() == rejects
    assert not list(store.glob(".loading-*"))
    assert_store_is_true(store, loads=1, triples=1)


def test_a_failed_append_keeps_the_rejects_file(tmp_path: Path) -> None:
    store, rejects = _store_with_rejects(tmp_path)
    second = tmp_path / "second"
    second.mkdir()
    write(second, "pkubase-triples.txt", "<d>\t<e>\n")
    in_use = ox.Store(str(store / STORE_SUBDIR))  # a writer holds the store
    try:
        with pytest.raises(KBError, match="is it in use"):
            load_kb([second], store, mode="append")
    finally:
        del in_use
    assert (store / REJECTS_FILE).read_bytes() == rejects
    assert_store_is_true(store, loads=1, triples=1)


@pytest.mark.parametrize("mode", ["new", "replace"])
def test_a_mentions_folder_coqa_did_not_create_is_never_deleted(tmp_path: Path, mode: str) -> None:
    write(tmp_path, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n")
    store = tmp_path / "store"
    (store / INDEX_SUBDIR).mkdir(parents=True)
    write(store / INDEX_SUBDIR, "my-notes.txt", "not an index")
    with pytest.raises(KBError, match="is not part of a coqa store"):
        load_kb([tmp_path / "pkubase-triples.txt"], store, mode=mode)
    assert (store / INDEX_SUBDIR / "my-notes.txt").read_text() == "not an index"


def test_an_unwritable_rejects_target_fails_before_loading(tmp_path: Path) -> None:
    write(tmp_path, "pkubase-triples.txt", "<a>\t<b>\n")
    with pytest.raises(KBError, match="cannot write the rejects file"):
        load_kb([tmp_path / "pkubase-triples.txt"], tmp_path / "store", rejects_path=tmp_path / "pkubase-triples.txt" / "r.tsv")
    assert not store_pieces(tmp_path / "store")
