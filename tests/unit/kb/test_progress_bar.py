"""Off a terminal, a load's progress is whole lines, one per phase change and
at most one per interval otherwise; never a bar's carriage returns."""

from __future__ import annotations

import io

from coqa.kb.loading.progress_bar import LineBar, _LINE_FORMAT


def test_line_bar_writes_lines_on_each_phase() -> None:
    stream = io.StringIO()
    with LineBar(total=1000, unit="B", unit_scale=True, desc="load", file=stream, mininterval=3600, bar_format=_LINE_FORMAT, leave=False) as bar:
        bar.set_postfix_str("pkubase-triples.txt")
        bar.update(500)
        bar.set_postfix_str("mention index")
        bar.update(500)
    text = stream.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("coqa: load ") and lines[-1].endswith("mention index")
    assert any("500B/1.00kB (50%)" in line and line.endswith("mention index") for line in lines)
