"""`coqa export` writes an NLPCC KB file's `subject ||| predicate ||| object`
lines as N-Triples (they used to be read as PKU BASE triples and all rejected)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from coqa.kb.loading.export import NTRIPLES, export_kb
from coqa.kb.names import iri_to_name


def test_an_nlpcc_kb_file_exports_every_line(tmp_path: Path) -> None:
    source = tmp_path / "kb.txt"
    source.write_text("空灵山 ||| 海拔 ||| 1500米\n空灵山 ||| 所在地 ||| 云溪市\n青石出版社 ||| 成立时间 ||| 1988年\n", encoding="utf-8")
    report = export_kb([source], NTRIPLES, tmp_path / "kb.nt", progress=False)
    assert report.triples_written == 3 and report.rejects_path is None
    triples = list(ox.parse(path=str(tmp_path / "kb.nt"), format=ox.RdfFormat.N_TRIPLES))
    assert len(triples) == 3
    subjects = {iri_to_name(t.subject.value) for t in triples}
    assert subjects == {"空灵山", "青石出版社"}
    assert {t.object.value for t in triples} >= {"1500米", "1988年"}
