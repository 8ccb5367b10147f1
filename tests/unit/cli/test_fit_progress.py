"""Training shows progress through the model fits: a line at most every
interval, across fits, numbering each fit."""

from __future__ import annotations

import io

from coqa.cli.progress import FitProgress


def test_lines_come_every_interval_across_fits() -> None:
    now = [0.0]
    stream = io.StringIO()
    fits = FitProgress(interval=10, stream=stream, clock=lambda: now[0])
    for _ in range(3):
        for done in range(1, 101):
            now[0] += 0.1
            fits(done, 100)
    lines = stream.getvalue().splitlines()
    assert fits.fits == 3 and len(lines) == 2
    assert lines[0].startswith("coqa: training: fitting model 2, round ") and lines[0].endswith("/100, 10 s since the first fit")
