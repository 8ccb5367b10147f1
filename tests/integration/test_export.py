"""`coqa export`: the loader's accounting and rejects, names through each target's codec."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from coqa.cli.main import main
from coqa.kb.loading.export import GSTORE, NTRIPLES, export_kb
from coqa.kb.names import NAME_BASE, gstore_to_name

LINES = [
    "<2008年北京奥运会 >\t<口号>\t\"同一个世界，同一个梦想\" .",
    "<Rock and Roll>\t<类型>\t<音乐> .",
    '<A^B {C}\\D>\t<备注>\t"制表\t符" .',
    "<cut short>\t<p>",
    "",
    '<x>\t<y>\t"1"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    "<甲|乙>\t<组成>\t<甲>.",
]


@pytest.fixture
def kb_file(tmp_path: Path) -> Path:
    path = tmp_path / "pkubase-triples.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return path


def test_counts_add_up_and_rejects_are_written(kb_file: Path, tmp_path: Path) -> None:
    report = export_kb([kb_file], GSTORE, tmp_path / "out.nt", progress=False)
    total = report.total
    assert (total.lines, total.loaded, total.repaired, total.rejected, total.blank) == (7, 2, 2, 2, 1)
    assert report.triples_written == 4 == len((tmp_path / "out.nt").read_text(encoding="utf-8").splitlines())
    rejects = (tmp_path / "out.nt.rejects.tsv").read_text(encoding="utf-8").splitlines()
    assert [line.split("\t")[1] for line in rejects[1:]] == ["4", "6"]


def test_gstore_names_hold_nothing_gstore_refuses_and_decode_back(kb_file: Path, tmp_path: Path) -> None:
    export_kb([kb_file], GSTORE, tmp_path / "out.nt", progress=False)
    names = set()
    for line in (tmp_path / "out.nt").read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        for field in fields[:2] + ([fields[2][:-2]] if fields[2].startswith("<") else []):
            assert field.startswith("<") and field.endswith(">")
            assert not any(char in field[1:-1] for char in ' <>"{}|^`\\')
            names.add(gstore_to_name(field[1:-1]))
    assert {"2008年北京奥运会", "Rock and Roll", "A^B {C}\\D", "甲|乙"} <= names


def test_ntriples_export_is_what_the_embedded_store_holds(kb_file: Path, tmp_path: Path) -> None:
    export_kb([kb_file], NTRIPLES, tmp_path / "out.nt", progress=False)
    store = ox.Store()
    store.load(path=str(tmp_path / "out.nt"), format=ox.RdfFormat.N_TRIPLES)
    subjects = {quad.subject.value for quad in store}
    assert NAME_BASE + "Rock%20and%20Roll" in subjects and NAME_BASE + "2008年北京奥运会" in subjects
    assert len(store) == 4


def test_cli_prints_the_counts(kb_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(kb_file), "--to", "gstore", "-o", str(tmp_path / "out.nt")]) == 0
    out = capsys.readouterr().out
    assert "lines = loaded + repaired + rejected + blank" in out
    assert f"rejected lines: 2 written to {tmp_path / 'out.nt.rejects.tsv'}" in out
    assert f"wrote 4 triples to {tmp_path / 'out.nt'}" in out
