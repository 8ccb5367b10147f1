"""`coqa load`: every repair rule and reject reason, the counts, store modes,
the index-only build, and the shared pkubase-bench slice end to end."""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import pyoxigraph as ox
import pytest
from conftest import assert_counts_add_up, rejects_rows, write
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tqdm import tqdm

import coqa.kb.loading.bulk_load as bulk_load_module
import coqa.kb.loading.line_reading as line_reading_module
import coqa.kb.loading.loader as loader_module
from coqa.cli.main import main
from coqa.kb import INDEX_SUBDIR, MANIFEST, STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KBError
from coqa.kb.loading.formats import (
    LineError,
    is_blank,
    parse_mention_line,
    parse_triple_line,
)
from coqa.kb.loading.loader import load_kb
from coqa.kb.loading.ntriples import regular_lines_to_ntriples, triple_to_ntriples
from coqa.kb.loading.report import LoadReport
from coqa.kb.loading.triple_reading import REGULAR_RUN
from coqa.kb.mention_index import MENTION, MentionIndex
from coqa.kb.names import Term, canonical_name, sparql_name

BENCH_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "pkubase-bench"
TYPED_LITERAL = '87"^^<http://www.w3.org/2001/XMLSchema#float>'






def objects(store_dir: Path, subject: str, predicate: str) -> list[str]:
    store = OxigraphStore(store_dir / STORE_SUBDIR)
    try:
        result = store.select(f"select ?x where {{ {sparql_name(subject)} {sparql_name(predicate)} ?x . }}")
        return sorted(str(term) for term in result.column())
    finally:
        store.close()




def load_one(tmp_path: Path, content: str | bytes, name: str = "pkubase-triples.txt") -> LoadReport:
    source = tmp_path / "kb"
    source.mkdir(parents=True, exist_ok=True)
    write(source, name, content)
    report = load_kb([source / name], tmp_path / "store")
    assert_counts_add_up(report)
    return report


# --- the line parser --------------------------------------------------------


def test_literal_is_everything_between_first_and_last_quote() -> None:
    triple, repairs = parse_triple_line(f'<酒店>\t<平均价格>\t"{TYPED_LITERAL}" .')
    assert triple.object == Term.literal(TYPED_LITERAL)
    assert str(triple.object) == f'"{TYPED_LITERAL}"'
    assert repairs == []


def test_names_and_backslashes_are_kept_verbatim() -> None:
    triple, _ = parse_triple_line('<2008年北京奥运会 >\t<简介>\t"a\\\\nb \\"q\\"" .')
    assert triple.subject == "2008年北京奥运会 "
    assert triple.object.value == 'a\\\\nb \\"q\\"'


@pytest.mark.parametrize(
    "line, reason",
    [
        ("<a>\t<b>", "2 tab-separated field(s)"),
        ("<a> <b> <c> .", "1 tab-separated field(s)"),
        ("<a>\t<b>\t<c", "object <name> is not closed"),
        ('<a>\t<b>\t"cut sho', "literal is not closed"),
        ('<a>\t<b>\t"1"^^<http://www.w3.org/2001/XMLSchema#int> .', "text after the literal's closing quote"),
        ("<a>\t<b>\tc .", "object is neither"),
        ("<>\t<b>\t<c> .", "subject is an empty name"),
        ("<a>\t< >\t<c> .", "predicate is an empty name"),
        ("a\t<b>\t<c> .", "subject is not a <name>"),
        ("<a\t<b\t<c\t<d> .", "do not re-split"),
    ],
)
def test_lines_no_rule_can_load_say_why(line: str, reason: str) -> None:
    with pytest.raises(LineError, match=re.escape(reason)):
        parse_triple_line(line)


@pytest.mark.parametrize(
    "line, repairs",
    [
        ("<a>\t<b>\t<c>", ["missing ' .'"]),
        ("<a>\t<b>\t<c>.", ["missing space before '.'"]),
        ('<a>\t<b>\t"x"', ["missing ' .'"]),
        ("<a>\t<b>\t<c> .  \t", ["trailing white space"]),
        ("<a>\t<b>\t<c> .\r", ["CRLF line end"]),
        ("\ufeff<a>\t<b>\t<c> .", ["byte order mark"]),
        ('<a>\t<b>\t"x\ty" .', ["tab inside a term"]),
    ],
)
def test_repairs_are_named(line: str, repairs: list[str]) -> None:
    assert parse_triple_line(line)[1] == repairs


def test_a_tab_inside_a_name_is_rejoined() -> None:
    triple, repairs = parse_triple_line("<a\tb>\t<p>\t<c\td> .")
    assert (triple.subject, triple.predicate, triple.object) == ("a\tb", "p", Term.entity("c\td"))
    assert repairs == ["tab inside a term"]


def test_mention_lines() -> None:
    assert parse_mention_line("李白\t<李白_（唐朝诗人）>\t1") == (("李白", "李白_（唐朝诗人）", 1), ["entity in angle brackets"])
    assert parse_mention_line("北京奥运会\t2008年北京奥运会 \t2")[0].entity == "2008年北京奥运会 "
    for line, reason in [("a\tb", "2 tab-separated"), ("a\tb\tx", "rank is not a whole number"), ("\tb\t1", "empty mention"), ("a\t\t1", "empty entity"), ("李白\t \t1", "empty entity"), ("a\t<\u3000>\t1", "empty entity")]:
        with pytest.raises(LineError, match=reason):
            parse_mention_line(line)


# Characters from every range of IRI_SAFE_CHARS (and its edges), IRI-safe white
# space (which the codec trims at either end of a name), and characters the
# codec escapes.
_SAFE = "aZ09-._~!$&'()*+,;=:@/\u00a1李白·（）_，\ud7ff\uf900\ufdcf\ufdf0\uffef\U00010000\U0002fffd\U0003fffd"
_UNSAFE = ' "|^{}`\\%<>\t\r\u00a0\u3000\u2028\ufeff\ufdd0'


def _line(subject: str, predicate: str, obj: str, literal: bool) -> str:
    rendered = f'"{obj}"' if literal else f"<{obj}>"
    return f"<{subject}>\t<{predicate}>\t{rendered} ."


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.sampled_from(_SAFE), min_size=1, max_size=8),
    st.text(st.sampled_from(_SAFE), min_size=1, max_size=8),
    st.text(st.sampled_from(_SAFE), min_size=1, max_size=8),
    st.booleans(),
)
def test_regular_lines_take_the_fast_path(subject: str, predicate: str, obj: str, literal: bool) -> None:
    line = _line(subject, predicate, obj, literal)
    assert REGULAR_RUN.fullmatch(line + "\n")
    triple, repairs = parse_triple_line(line)
    assert repairs == []
    assert regular_lines_to_ntriples(line + "\n") == triple_to_ntriples(triple)


@settings(max_examples=300, deadline=None)
@given(
    st.text(st.sampled_from(_SAFE + _UNSAFE), min_size=1, max_size=8),
    st.text(st.sampled_from(_SAFE + _UNSAFE), min_size=1, max_size=8),
    st.text(st.sampled_from(_SAFE + _UNSAFE), max_size=8),
    st.booleans(),
)
def test_the_fast_path_takes_only_what_it_converts_exactly(subject: str, predicate: str, obj: str, literal: bool) -> None:
    line = _line(subject, predicate, obj, literal)
    if REGULAR_RUN.fullmatch(line + "\n"):
        triple, repairs = parse_triple_line(line)
        assert repairs == []
        assert regular_lines_to_ntriples(line + "\n") == triple_to_ntriples(triple)


# --- bad input files --------------------------------------------------------


def test_gbk_file_is_decoded_and_counted_as_repaired(tmp_path: Path) -> None:
    text = "<周星驰>\t<代表作品>\t<功夫_（电影）> .\n<功夫_（电影）>\t<上映时间>\t\"2004年\" .\n"
    report = load_one(tmp_path, text.encode("gbk"))
    assert (report.total.lines, report.total.repaired, report.total.repairs) == (2, 2, {"decoded as GB18030": 2})
    assert objects(tmp_path / "store", "周星驰", "代表作品") == ["<功夫_（电影）>"]
    assert objects(tmp_path / "store", "功夫_（电影）", "上映时间") == ['"2004年"']


def test_bytes_neither_utf8_nor_gb18030_are_rejected(tmp_path: Path) -> None:
    report = load_one(tmp_path, b"<a>\t<b>\t<c> .\n<a>\t<b>\t\"\xff\xff\" .\n")
    assert (report.total.loaded, report.total.rejected) == (1, 1)
    [row] = rejects_rows(report.rejects_path)
    assert row[1:] == ["2", "neither UTF-8 nor GB18030 text", '<a>\t<b>\t"\\xff\\xff" .']


def test_bom_and_crlf(tmp_path: Path) -> None:
    report = load_one(tmp_path, "\ufeff<a>\t<b>\t<c> .\r\n<a>\t<b>\t<d> .\r\n")
    assert report.total.repaired == 2
    assert report.total.repairs == {"byte order mark": 1, "CRLF line end": 2}
    assert objects(tmp_path / "store", "a", "b") == ["<c>", "<d>"]


def test_field_count_repairs_and_rejects(tmp_path: Path) -> None:
    content = '<a>\t<p>\t"x\ty" .\n<a>\t<q>\n<a>\t<r>\t<c>\n<a>\t<s>\t"v".\n'
    report = load_one(tmp_path, content)
    total = report.total
    assert (total.lines, total.loaded, total.repaired, total.rejected) == (4, 0, 3, 1)
    assert objects(tmp_path / "store", "a", "p") == ['"x\ty"']
    assert objects(tmp_path / "store", "a", "r") == ["<c>"]
    assert objects(tmp_path / "store", "a", "s") == ['"v"']
    [row] = rejects_rows(report.rejects_path)
    assert row == [str(tmp_path / "kb" / "pkubase-triples.txt"), "2", total.rejects.most_common(1)[0][0], "<a>\t<q>"]
    assert "2 tab-separated field(s)" in row[2]


def test_literals_with_quotes_tabs_and_backslashes(tmp_path: Path) -> None:
    content = (
        f'<h>\t<平均价格>\t"{TYPED_LITERAL}" .\n'
        '<h>\t<简介>\t"他说"你好"" .\n'
        '<h>\t<交通>\t"地铁\\\\n公交 <1路>" .\n'
    )
    load_one(tmp_path, content)
    store = tmp_path / "store"
    assert objects(store, "h", "平均价格") == [f'"{TYPED_LITERAL}"']
    assert objects(store, "h", "简介") == ['"他说"你好""']
    assert objects(store, "h", "交通") == ['"地铁\\\\n公交 <1路>"']


def test_names_with_spaces_bars_carets_braces_backslashes_quotes(tmp_path: Path) -> None:
    names = ["2008年北京奥运会 ", "甲|乙", "A^B", "{x}", "C:\\dir", '"口令蠕虫"病毒', "100%", "a b", "\u3000全角空格"]
    content = "".join(f"<{name}>\t<名>\t<{name}> .\n" for name in names)
    report = load_one(tmp_path, content)
    assert report.total.loaded == len(names)
    for name in names:
        assert objects(tmp_path / "store", name, "名") == [f"<{canonical_name(name)}>"]


def test_exact_duplicates_are_stored_once_and_counted(tmp_path: Path) -> None:
    line = "<a>\t<b>\t<c> .\n"
    report = load_one(tmp_path, line * 3 + "<a>\t<b>\t<d> .\n" + line.replace("\n", "\r\n"))
    total = report.total
    assert (total.lines, total.loaded, total.repaired, total.duplicates) == (5, 4, 1, 3)
    manifest = json.loads((tmp_path / "store" / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["triples"] == 2


def test_duplicates_across_triple_files_are_counted_in_the_total(tmp_path: Path) -> None:
    """Several triple files share one bulk load: the store's gain is known for
    all of them together, not per file."""
    source = tmp_path / "kb"
    source.mkdir()
    write(source, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n<a>\t<b>\t<c> .\n<a>\t<类型>\t<t> .\n")
    write(source, "pkubase-types.txt", "<a>\t<类型>\t<t> .\n<d>\t<类型>\t<t> .\n")
    write(source, "pkubase-mention2ent.txt", "阿\ta\t1\n阿\ta\t1\n")
    report = load_kb([source], tmp_path / "store")
    assert [r.duplicates for r in report.files] == [None, None, 1]
    assert (report.triples, report.facts_added, report.total.duplicates) == (3, 3, 3)
    manifest = json.loads((tmp_path / "store" / MANIFEST).read_text(encoding="utf-8"))
    assert (manifest["loads"][0]["facts_added"], manifest["loads"][0]["duplicates"]) == (3, 3)


def test_an_append_counts_what_the_store_gained(tmp_path: Path) -> None:
    """Facts already stored, facts repeated in the appended files (also in
    another spelling) and new facts: the append's gain and the store's size
    are what the store holds. (Why the loader's own line counts plus the
    manifest's previous count cannot stand in for counting the store.)"""
    source = tmp_path / "kb"
    source.mkdir()
    write(source, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n<a>\t<b>\t\"v\" .\n")
    store = tmp_path / "store"
    load_kb([source], store)
    more = tmp_path / "more"
    more.mkdir()
    write(more, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n<a>\t<b>\t<d> .\n<a>\t<b>\t<d> .\r\n<e>\t<b>\t\"v\" .\n")
    write(more, "pkubase-types.txt", "<a>\t<类型>\t<t> .\n<e>\t<b>\t\"v\" .\n")
    report = load_kb([more], store, mode="append")
    assert report.total.loaded + report.total.repaired == 6
    assert (report.facts_added, report.triples, report.total.duplicates) == (3, 5, 3)
    assert len(ox.Store.read_only(str(store / STORE_SUBDIR))) == 5


def test_a_new_store_is_compacted_once_loaded_and_an_append_is_not(tmp_path: Path) -> None:
    source = tmp_path / "kb"
    source.mkdir()
    write(source, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n")
    store = tmp_path / "store"
    assert load_kb([source], store).compaction_seconds is not None
    write(source, "pkubase-triples.txt", "<d>\t<b>\t<c> .\n")
    appended = load_kb([source], store, mode="append")
    assert (appended.compaction_seconds, appended.triples) == (None, 2)


def test_compacting_merges_the_files_of_several_bulk_loads(tmp_path: Path) -> None:
    store = ox.Store(str(tmp_path / "store"))
    for part in range(3):
        facts = "".join(f'<http://x/{part}_{i}> <http://x/p> "{i}" .\n' for i in range(100))
        store.bulk_load(facts.encode(), ox.RdfFormat.N_TRIPLES)
    files_before = len(list((tmp_path / "store").glob("*.sst")))
    bulk_load_module.compact_store(store, tqdm(disable=True))
    assert len(list((tmp_path / "store").glob("*.sst"))) < files_before
    assert len(store) == 300


def test_a_failed_bulk_load_is_an_error_not_a_hang(tmp_path: Path) -> None:
    sink = bulk_load_module.BulkSink(ox.Store(str(tmp_path / "store")))
    with pytest.raises(KBError, match="bulk load"):
        for _ in range(64):  # more than the pipe holds, once the loader has stopped reading
            sink.add(b"not n-triples\n" * 100_000)
        sink.finish()


def test_empty_file(tmp_path: Path) -> None:
    report = load_one(tmp_path, b"")
    assert (report.total.lines, report.triples, report.rejects_path) == (0, 0, None)


def test_blank_lines_are_counted(tmp_path: Path) -> None:
    report = load_one(tmp_path, "\n<a>\t<b>\t<c> .\n  \t\n\r\n<a>\t<b>\t<d> .\n")
    assert (report.total.lines, report.total.blank, report.total.loaded) == (5, 3, 2)


def test_truncated_last_line(tmp_path: Path) -> None:
    complete = load_one(tmp_path / "1", "<a>\t<b>\t<c> .\n<a>\t<b>\t<d> .")
    assert (complete.total.lines, complete.total.loaded) == (2, 2)
    cut = load_one(tmp_path / "2", "<a>\t<b>\t<c> .\n<a>\t<b>\t<长城_（中国古代")
    assert (cut.total.loaded, cut.total.rejected) == (1, 1)
    [row] = rejects_rows(cut.rejects_path)
    assert row[1] == "2" and "not closed" in row[2] and row[3] == "<a>\t<b>\t<长城_（中国古代"


def test_line_numbers_hold_across_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_reading_module, "BLOCK_BYTES", 64)
    lines = [f"<实体{i}>\t<编号>\t\"{i}\" ." for i in range(200)]
    bad = {7: "<坏>\t<行>", 63: "<有 空格>\t<名>\t<值> .", 150: "<x>\t<y>\t<z"}
    for number, line in bad.items():
        lines[number - 1] = line
    report = load_one(tmp_path, "\n".join(lines) + "\n")
    assert (report.total.lines, report.total.loaded, report.total.rejected) == (200, 198, 2)
    assert [int(row[1]) for row in rejects_rows(report.rejects_path)] == [7, 150]
    assert objects(tmp_path / "store", "实体199", "编号") == ['"199"']
    assert objects(tmp_path / "store", "有 空格", "名") == ["<值>"]


def test_mention_file_counts_and_index(tmp_path: Path) -> None:
    source = tmp_path / "kb"
    source.mkdir()
    write(source, "pkubase-triples.txt", "<李白_（唐朝诗人）>\t<字>\t\"太白\" .\n")
    write(source, "pkubase-mention2ent.txt", "诗仙\t李白_（唐朝诗人）\t1\n太白\t<李白_（唐朝诗人）>\t2\n坏行\t李白\n诗仙\t李白_（唐朝诗人）\t1\n")
    report = load_kb([source], tmp_path / "store")
    assert_counts_add_up(report)
    mentions = report.files[1]
    assert (mentions.kind, mentions.loaded, mentions.repaired, mentions.rejected, mentions.duplicates) == ("mention2ent", 2, 1, 1, 1)
    index = MentionIndex.open(tmp_path / "store" / INDEX_SUBDIR)
    assert {(e.kind, e.target, e.rank) for e in index.lookup("诗仙")} == {(MENTION, "李白_（唐朝诗人）", 1)}
    assert "李白_（唐朝诗人）" in {e.target for e in index.lookup("李白")}
    assert "太白" in {e.target for e in index.lookup("太白")}


_MENTION_PIECES = ["李白", " ", "\t", "<", ">", "1", "01", "x", "\ufeff", "\r", "\u3000", "Ａ"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_MENTION_PIECES), max_size=6).map("".join), max_size=8))
@example(["李白\t \t1"])  # a white-space entity was indexed as 李白 -> 李白 (issue 9)
def test_mention_lines_batched_equal_line_by_line(tmp_path_factory: pytest.TempPathFactory, lines: list[str]) -> None:
    """Whatever the mix of regular, repaired, rejected and blank lines, the
    batch path counts, numbers and indexes them as parsing each line would."""
    directory = tmp_path_factory.mktemp("mentions")
    write(directory, "pkubase-mention2ent.txt", "".join(line + "\n" for line in lines))
    report = load_kb([directory], directory / "store", index_only=True)
    expected_entries, expected_rejects, blank = set(), [], 0
    for number, line in enumerate(lines, start=1):
        if is_blank(line):
            blank += 1
            continue
        try:
            mention, _ = parse_mention_line(line)
        except LineError:
            expected_rejects.append(str(number))
        else:
            expected_entries.add((mention.mention.strip(), canonical_name(mention.entity), mention.rank))
    [mentions] = report.files
    assert (mentions.lines, mentions.blank, mentions.rejected) == (len(lines), blank, len(expected_rejects))
    if expected_rejects:
        assert [row[1] for row in rejects_rows(report.rejects_path)] == expected_rejects
    index = MentionIndex.open(directory / "store" / INDEX_SUBDIR)
    for surface, entity, rank in expected_entries:
        assert (MENTION, entity, rank) in {(e.kind, e.target, e.rank) for e in index.lookup(surface)}


def test_the_index_built_in_a_second_process_is_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "pkubase-triples.txt", "<李白_（诗人）>\t<字>\t\"太白\" .\n<李白_（诗人）>\t<字>\n<a>\t<b>\t<c> .\n<a>\t<b>\t<c> .\n")
    write(tmp_path, "pkubase-mention2ent.txt", "诗仙\t李白_（诗人）\t1\n坏\n")
    inline = load_kb([tmp_path], tmp_path / "inline")
    monkeypatch.setattr(loader_module, "PARALLEL_BYTES", 0)
    child = load_kb([tmp_path], tmp_path / "child")
    assert [(r.path, r.lines, r.loaded, r.rejected, r.duplicates) for r in child.files] == [
        (r.path, r.lines, r.loaded, r.rejected, r.duplicates) for r in inline.files
    ]
    assert (child.triples, child.index_entries) == (inline.triples, inline.index_entries) == (2, inline.index_entries)
    assert child.rejects_path.read_text(encoding="utf-8") == inline.rejects_path.read_text(encoding="utf-8")
    index = MentionIndex.open(tmp_path / "child" / INDEX_SUBDIR)
    assert {e.target for e in index.lookup("诗仙")} == {"李白_（诗人）"}


# --- sources and store modes ------------------------------------------------


def test_sources_must_be_pku_base_files(tmp_path: Path) -> None:
    write(tmp_path, "train.txt", "q1:问题\n")
    with pytest.raises(KBError, match="cannot tell what .*train.txt holds"):
        load_kb([tmp_path / "train.txt"], tmp_path / "store")
    with pytest.raises(KBError, match="no knowledge-base files in"):
        load_kb([tmp_path], tmp_path / "store")
    with pytest.raises(KBError, match="no such file or directory"):
        load_kb([tmp_path / "missing"], tmp_path / "store")


def test_existing_store_needs_replace_or_append(tmp_path: Path) -> None:
    first = tmp_path / "one"
    first.mkdir()
    write(first, "pkubase-triples.txt", "<a>\t<b>\t<old> .\n")
    write(first, "pkubase-mention2ent.txt", "旧\ta\t1\n")
    second = tmp_path / "two"
    second.mkdir()
    write(second, "pkubase-triples.txt", "<a>\t<b>\t<new> .\n")
    write(second, "pkubase-mention2ent.txt", "新\ta\t1\n")
    store = tmp_path / "store"
    load_kb([first], store)
    with pytest.raises(KBError, match="already holds a store: add --replace .* or --append"):
        load_kb([second], store)
    assert objects(store, "a", "b") == ["<old>"]

    load_kb([second], store, mode="append")
    assert objects(store, "a", "b") == ["<new>", "<old>"]
    index = MentionIndex.open(store / INDEX_SUBDIR)
    assert index.lookup("旧") and index.lookup("新")
    manifest = json.loads((store / MANIFEST).read_text(encoding="utf-8"))
    assert [load["mode"] for load in manifest["loads"]] == ["new", "append"] and manifest["triples"] == 2

    load_kb([second], store, mode="replace")
    assert objects(store, "a", "b") == ["<new>"]
    assert not MentionIndex.open(store / INDEX_SUBDIR).lookup("旧")
    assert not list(store.glob(".loading-*"))


def test_index_only(tmp_path: Path) -> None:
    write(tmp_path, "pkubase-triples.txt", '<a_（字母）>\t<b>\t"值" .\n<a_（字母）>\t<b>\n')
    report = load_kb([tmp_path / "pkubase-triples.txt"], tmp_path / "idx", index_only=True)
    assert_counts_add_up(report)
    assert (report.triples, report.total.duplicates, report.total.rejected) == (None, None, 1)
    assert not (tmp_path / "idx" / STORE_SUBDIR).exists()
    index = MentionIndex.open(tmp_path / "idx" / INDEX_SUBDIR)
    assert {e.target for e in index.lookup("a")} == {"a_（字母）"}
    assert {e.target for e in index.lookup("值")} == {"值"}
    with pytest.raises(KBError, match="holds only a mention index"):
        load_kb([tmp_path / "pkubase-triples.txt"], tmp_path / "idx", mode="append")


def test_rejects_go_where_asked_and_a_clean_load_leaves_none(tmp_path: Path) -> None:
    write(tmp_path, "pkubase-types.txt", "<a>\t<类型>\n")
    report = load_kb([tmp_path / "pkubase-types.txt"], tmp_path / "store", rejects_path=tmp_path / "bad.tsv", progress=True)
    assert report.rejects_path == tmp_path / "bad.tsv" and len(rejects_rows(tmp_path / "bad.tsv")) == 1
    write(tmp_path, "pkubase-types.txt", "<a>\t<类型>\t<b> .\n")
    report = load_kb([tmp_path / "pkubase-types.txt"], tmp_path / "store", mode="replace")
    assert report.rejects_path is None and not (tmp_path / "store" / "rejects.tsv").exists()


# --- the CLI ----------------------------------------------------------------


def test_cli_load_prints_counts_and_refuses_an_existing_store(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n<a>\t<b>\n\n<a>\t<b>\t<d>\n")
    store = tmp_path / "store"
    assert main(["load", str(tmp_path), "--store", str(store)]) == 0
    out = capsys.readouterr().out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:] == ["4", "1", "1", "1", "1", "0"]
    assert f"rejected lines: 1 written to {store / 'rejects.tsv'}" in out
    assert "repairs: missing ' .': 1" in out
    assert main(["load", str(tmp_path), "--store", str(store)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--replace" in err and "Traceback" not in err
    assert main(["load", str(tmp_path), "--store", str(store), "--append"]) == 0


def test_cli_load_says_why_duplicates_are_not_counted_per_triple_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkubase-triples.txt", "<a>\t<b>\t<c> .\n")
    write(tmp_path, "pkubase-types.txt", "<a>\t<类型>\t<t> .\n<a>\t<b>\t<c> .\n")
    assert main(["load", str(tmp_path), "--store", str(tmp_path / "store")]) == 0
    rows = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert rows[str(tmp_path / "pkubase-types.txt")][-1] == "?"
    assert rows["total"] == ["3", "3", "0", "0", "0", "1"]
    assert "the total counts them" in " ".join(rows["?"])


# --- the shared pkubase-bench slice -----------------------------------------


@pytest.fixture(scope="session")
def bench_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not BENCH_DIR.is_dir():
        pytest.skip(f"{BENCH_DIR} is absent")
    store = tmp_path_factory.mktemp("bench") / "store"
    assert main(["load", str(BENCH_DIR), "--store", str(store)]) == 0
    return store


@pytest.mark.slow
def test_bench_loads_with_counts_that_add_up(bench_store: Path) -> None:
    manifest = json.loads((bench_store / MANIFEST).read_text(encoding="utf-8"))
    files = manifest["loads"][0]["files"]
    assert {Path(f["path"]).name for f in files} == {"pkubase-triples.txt", "pkubase-types.txt", "pkubase-mention2ent.txt"}
    for file in files:
        with open(file["path"], "rb") as stream:
            assert file["lines"] == sum(1 for _ in stream)
        assert file["lines"] == file["loaded"] + file["repaired"] + file["rejected"] + file["blank"]
    assert manifest["triples"] > 80_000


@pytest.mark.slow
def test_bench_answers_pku_base_style_queries(bench_store: Path, capsys: pytest.CaptureFixture) -> None:
    capsys.readouterr()
    assert main(["sparql", "select ?x where { <莫妮卡·贝鲁奇> <代表作品> ?x. }", "--store", str(bench_store)]) == 0
    assert capsys.readouterr().out.split() == ["<西西里的美丽传说>"]
    # The slice spells the name without PKU BASE's trailing space: both spellings are one entity.
    for name in ["<2008年北京奥运会 >", "<2008年北京奥运会>"]:
        assert main(["sparql", f"select ?x where {{ {name} <吉祥物> ?x. }}", "--store", str(bench_store)]) == 0
        assert capsys.readouterr().out.split() == ["<福娃_（第29届北京奥运会吉祥物）>"]


def test_trailing_space_name_via_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write(tmp_path, "pkubase-triples.txt", "<2008年北京奥运会 >\t<吉祥物>\t<福娃> .\n<福娃>\t<登场>\t<2008年北京奥运会 > .\n")
    assert main(["load", str(tmp_path), "--store", str(tmp_path / "store")]) == 0
    capsys.readouterr()
    for query in ["select ?x where { <2008年北京奥运会 > <吉祥物> ?x. }", "select ?x where { ?x <吉祥物> <福娃>. }"]:
        assert main(["sparql", query, "--store", str(tmp_path / "store")]) == 0
        assert capsys.readouterr().out.split() in (["<福娃>"], ["<2008年北京奥运会>"])


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priorities are a Linux feature")
def test_bulk_loading_yields_the_cores_to_the_index_process(tmp_path: Path) -> None:
    expected = min(19, os.getpriority(os.PRIO_PROCESS, 0) + bulk_load_module.BULK_LOAD_NICENESS)
    store = ox.Store(str(tmp_path / "store"))
    sink = bulk_load_module.BulkSink(store)
    try:
        [loading] = [thread for thread in threading.enumerate() if thread.name.startswith("coqa-bulk-load")]
        deadline = time.monotonic() + 10  # the thread sets its priority as it starts
        while (niceness := os.getpriority(os.PRIO_PROCESS, loading.native_id)) != expected:
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        sink.add(b"<http://a> <http://b> <http://c> .\n")
    finally:
        sink.finish()
    assert niceness == expected
    assert len(store) == 1


@pytest.mark.parametrize("name", ["pkubase-mention2ent.txt", "pkubase-triples.txt"])
def test_a_huge_malformed_line_is_rejected_without_hanging(tmp_path: Path, name: str) -> None:
    """The fast paths' regexes stay linear in the line length (a quadratic
    one needed minutes for this line and hours for a megabyte)."""
    started = time.perf_counter()
    report = load_one(tmp_path, "李 " * 100_000 + "\t\n" + "<a>\t<b>\t\"" + "白 " * 100_000 + "\n", name)
    assert (report.total.lines, report.total.rejected) == (2, 2)
    assert time.perf_counter() - started < 10
