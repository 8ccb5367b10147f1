"""With stderr not a terminal, `coqa load` and `coqa train` print progress
lines through their phases (train: through the model fits too)."""

from __future__ import annotations

from pathlib import Path

from coqa.kb.demo import DEMO_CCKS, DEMO_DIR, DEMO_KB_FILES
from tests.integration.cli_run import run_coqa


def test_load_prints_lines_through_its_phases(tmp_path: Path) -> None:
    done = run_coqa(["load", *(str(DEMO_DIR / name) for name in DEMO_KB_FILES), "--store", str(tmp_path / "store")])
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("coqa: load ")]
    assert "\r" not in done.stderr and lines
    assert any(line.endswith("pkubase-mention2ent.txt") for line in lines)


def test_train_prints_lines_through_the_fits(demo_store: str, tmp_path: Path) -> None:
    done = run_coqa(["train", str(DEMO_CCKS), "--store", demo_store, "-o", str(tmp_path / "m"), "--limit", "20",
                     "--progress-every", "0.2"])  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert any(line.startswith("coqa: training: fitting model ") for line in done.stderr.splitlines()[-5:])
