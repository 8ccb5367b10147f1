"""A seeded fuzz test of `coqa load`: files mixing every kind of line
(regular, odd names, repairable, malformed, blank, GBK, undecodable bytes,
huge fields), checked for accounting, the rejects file and round trips.

Each generated line carries the outcome it must have (loaded, repaired,
rejected, blank); the store and the index must then hold exactly the facts
and mentions that the line-by-line parser (coqa.kb.loading.formats) reads from the
lines that were not rejected, and the rejects file exactly the others, with
their line numbers and raw text."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import pyoxigraph as ox
import pytest
from conftest import rejects_rows

import coqa.kb.loading.line_reading as line_reading_module
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.loading.formats import (
    LineError,
    decode_line,
    is_blank,
    parse_mention_line,
    parse_triple_line,
)
from coqa.kb.loading.loader import load_kb
from coqa.kb.mention_index import MENTION, MentionIndex
from coqa.kb.names import Term, canonical_name, iri_to_name

LOADED, REPAIRED, REJECTED, BLANK = "loaded", "repaired", "rejected", "blank"
_PLAIN = "李白杜甫诗人唐朝北京上海电影演员abcXYZ019·_（）-"
_ODD = ' "|^{}\\%`'
_HUGE = 100_000
Line = tuple[bytes, str]


def _text(rng: random.Random, alphabet: str = _PLAIN, low: int = 1, high: int = 8) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def _name(rng: random.Random) -> str:
    return _text(rng)


def _regular_triple(rng: random.Random) -> str:
    obj = f'"{_text(rng)}"' if rng.random() < 0.3 else f"<{_name(rng)}>"
    return f"<{_name(rng)}>\t<{_name(rng)}>\t{obj} ."


def _triple_lines(rng: random.Random) -> list[Callable[[], Line]]:
    """Generators of triple lines, each with the outcome it must have."""
    regular = lambda: _regular_triple(rng)  # noqa: E731
    return [
        lambda: (regular().encode(), LOADED),
        lambda: (regular().encode(), LOADED),
        lambda: (f"<{_text(rng, _PLAIN + _ODD)}x>\t<p>\t<{_text(rng, _PLAIN + _ODD)}y> .".encode(), LOADED),
        lambda: (f'<{_name(rng)} >\t<p>\t"他说"{_text(rng)}"\\n" .'.encode(), LOADED),
        lambda: (("\ufeff" + regular()).encode(), REPAIRED),
        lambda: ((regular() + "\r").encode(), REPAIRED),
        lambda: ((regular() + " \t ").encode(), REPAIRED),
        lambda: (regular()[:-2].encode(), REPAIRED),
        lambda: (regular()[:-2].encode() + b".", REPAIRED),
        lambda: (f'<{_name(rng)}>\t<p>\t"{_text(rng)}\t{_text(rng)}" .'.encode(), REPAIRED),
        lambda: (f"<功夫{_name(rng)}>\t<类型>\t<电影> .".encode("gbk"), REPAIRED),
        lambda: (f"<{_name(rng)}>\t<{_name(rng)}>".encode(), REJECTED),
        lambda: (f"<{_name(rng)}>\t<p>\t<{_name(rng)}".encode(), REJECTED),
        lambda: (f'<{_name(rng)}>\t<p>\t"{_text(rng)}'.encode(), REJECTED),
        lambda: (f'<{_name(rng)}>\t<p>\t"1"^^<http://www.w3.org/2001/XMLSchema#int> .'.encode(), REJECTED),
        lambda: (f"<{rng.choice(['', ' ', '　', '  '])}>\t<p>\t<o> .".encode(), REJECTED),
        lambda: (f"{_name(rng)}\t<p>\t<o> .".encode(), REJECTED),
        lambda: (b'<a>\t<b>\t"\xff\xfe' + rng.randbytes(3).replace(b"\n", b"") + b'" .', REJECTED),
        lambda: (rng.choice([b"", b"  ", b"\t", b"\r", b" \t\r"]), BLANK),
    ]


def _rare_triple_lines(rng: random.Random) -> list[Callable[[], Line]]:
    return [
        lambda: (f'<{_name(rng)}>\t<简介>\t"{"长" * _HUGE}" .'.encode(), LOADED),
        lambda: (f"<{'名' * _HUGE}>\t<p>\t<o> .".encode(), LOADED),
        lambda: (("<" + "断 " * _HUGE).encode(), REJECTED),
    ]


def _mention_lines(rng: random.Random) -> list[Callable[[], Line]]:
    rank = lambda: str(rng.randint(0, 99))  # noqa: E731
    return [
        lambda: (f"{_text(rng)}\t{_name(rng)}\t{rank()}".encode(), LOADED),
        lambda: (f"{_text(rng)}\t{_name(rng)}\t{rank()}".encode(), LOADED),
        lambda: (f"{_text(rng)}\t{_name(rng)}\t0{rank()}".encode(), LOADED),
        lambda: (f" {_text(rng)} \t{_name(rng)} \t{rank()}".encode(), LOADED),
        lambda: (f"{_text(rng)}\t<{_name(rng)}>\t{rank()}".encode(), REPAIRED),
        lambda: (f"{_text(rng)}\t{_name(rng)}\t{rank()}\r".encode(), REPAIRED),
        lambda: (f"\ufeff{_text(rng)}\t{_name(rng)}\t{rank()}".encode(), REPAIRED),
        lambda: (f"功夫{_text(rng)}\t功夫_（电影）\t1".encode("gbk"), REPAIRED),
        lambda: (f"{_text(rng)}\t{_name(rng)}\t{rng.choice(['x', '1.5', '-1', '1' * 10, '1' * 4_301])}".encode(), REJECTED),
        lambda: (f"{_text(rng)}\t{rng.choice(['', ' ', '　', '< >'])}\t1".encode(), REJECTED),
        lambda: (f"{rng.choice(['', ' ', '　'])}\t{_name(rng)}\t1".encode(), REJECTED),
        lambda: (f"{_text(rng)}\t{_name(rng)}".encode(), REJECTED),
        lambda: (f"{_text(rng)}\t{_name(rng)}\t1\t2".encode(), REJECTED),
        lambda: (b"\xff\xfe\t" + _name(rng).encode() + b"\t1", REJECTED),
        lambda: (rng.choice([b"", b" ", b"\t\t"]), BLANK),
    ]


def _write(path: Path, rng: random.Random, kinds: list[Callable[[], Line]], rare: list[Callable[[], Line]], count: int) -> list[Line]:
    lines = [rng.choice(kinds)() for _ in range(count)]
    for make in rare:
        lines.insert(rng.randrange(len(lines)), make())
    ending = b"\n" if rng.random() < 0.5 else b""  # sometimes no "\n" after the last line
    path.write_bytes(b"\n".join(line for line, _ in lines) + ending)
    return lines


def _spec(raw: bytes, parse: Callable) -> tuple[str, str, object]:
    """Outcome, decoded text and parsed value of a line by the line-by-line rules."""
    try:
        text, repairs = decode_line(raw)
    except LineError:
        return REJECTED, raw.decode("utf-8", errors="backslashreplace"), None
    if is_blank(text):
        return BLANK, text, None
    try:
        value, more = parse(text)
    except LineError:
        return REJECTED, text, None
    return (REPAIRED if repairs + more else LOADED), text, value


def _stored_facts(store_dir: Path) -> set[tuple[str, str, Term]]:
    store = ox.Store.read_only(str(store_dir / STORE_SUBDIR))
    facts = set()
    for quad in store:
        obj = quad.object
        term = Term.literal(obj.value) if isinstance(obj, ox.Literal) else Term.entity(iri_to_name(obj.value))
        facts.add((iri_to_name(quad.subject.value), iri_to_name(quad.predicate.value), term))
    return facts


@pytest.mark.parametrize("seed", range(4))
def test_fuzzed_files_are_accounted_for_line_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    if seed % 2:
        monkeypatch.setattr(line_reading_module, "BLOCK_BYTES", 4096)  # many block boundaries
    source = tmp_path / "kb"
    source.mkdir()
    generated = {
        "pkubase-triples.txt": (_write(source / "pkubase-triples.txt", rng, _triple_lines(rng), _rare_triple_lines(rng), 1500), parse_triple_line),
        "pkubase-types.txt": (_write(source / "pkubase-types.txt", rng, _triple_lines(rng), [], 300), parse_triple_line),
        "pkubase-mention2ent.txt": (_write(source / "pkubase-mention2ent.txt", rng, _mention_lines(rng), [], 800), parse_mention_line),
    }
    report = load_kb([source], tmp_path / "store")

    expected_rejects, facts, mentions = [], set(), set()
    for file in report.files:
        lines, parse = generated[Path(file.path).name]
        outcomes = []
        for number, (raw, wanted) in enumerate(lines, start=1):
            outcome, text, value = _spec(raw, parse)
            assert outcome == wanted, (raw, outcome)
            outcomes.append(outcome)
            if outcome == REJECTED:
                expected_rejects.append([file.path, str(number), text])
            elif value is not None and parse is parse_triple_line:
                obj = value.object if value.object.is_literal else Term.entity(canonical_name(value.object.value))
                facts.add((canonical_name(value.subject), canonical_name(value.predicate), obj))
            elif value is not None:
                mentions.add((value.mention, canonical_name(value.entity), value.rank))
        assert file.lines == len(lines) == file.loaded + file.repaired + file.rejected + file.blank
        assert (file.loaded, file.repaired, file.rejected, file.blank) == tuple(outcomes.count(o) for o in (LOADED, REPAIRED, REJECTED, BLANK))

    assert [[row[0], row[1], row[3]] for row in rejects_rows(report.rejects_path)] == expected_rejects
    assert _stored_facts(tmp_path / "store") == facts
    index = MentionIndex.open(tmp_path / "store" / INDEX_SUBDIR)
    for mention, entity, rank in mentions:
        assert (MENTION, entity, rank) in {(e.kind, e.target, e.rank) for e in index.lookup(mention.strip())}
