"""A model with a part cut short ends `coqa answer` in one line naming the
file, exit 1, before LightGBM reads it (LightGBM itself crashes on such a file)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coqa.kb.demo import DEMO_QUESTIONS
from coqa.testing.local_process import clean_environment


@pytest.mark.parametrize("part", ["ranker.txt", "linker.txt", "neighbours.npz"])
def test_a_part_cut_short_ends_in_one_line_naming_it(demo_store: str, demo_model: Path, part: str, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(demo_model, damaged)
    whole = (damaged / part).read_bytes()
    (damaged / part).write_bytes(whole[: len(whole) // 3])
    command = [sys.executable, "-m", "coqa.cli.main", "answer", str(DEMO_QUESTIONS), "-o", str(tmp_path / "r.txt"),
               "--store", demo_store, "--model", str(damaged)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=clean_environment())
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) <= 3 and str(damaged / part) in lines[-1] and "damaged" in lines[-1]
    assert not (tmp_path / "r.txt").exists()
