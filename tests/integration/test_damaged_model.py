"""A model with a part cut short ends `coqa answer` in one line naming the
file, exit 1, before LightGBM reads it (LightGBM itself crashes on such a file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from coqa.kb.demo import DEMO_QUESTIONS, ensure_demo_store
from coqa.dataset import read_ccks
from coqa.kb.demo import DEMO_CCKS
from coqa.pipeline import Pipeline
from coqa.config import Settings
from coqa.training import Trainer


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="module")
def model_dir(store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    settings = Settings(store=store)
    model, _ = Trainer(Pipeline.without_model(settings), settings).train(read_ccks(DEMO_CCKS)[:30])
    path = tmp_path_factory.mktemp("model") / "demo"
    model.save(path)
    return path


@pytest.mark.parametrize("part", ["ranker.txt", "linker.txt", "neighbours.npz"])
def test_a_part_cut_short_ends_in_one_line_naming_it(store: str, model_dir: Path, part: str, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(model_dir, damaged)
    whole = (damaged / part).read_bytes()
    (damaged / part).write_bytes(whole[: len(whole) // 3])
    environment = {key: value for key, value in os.environ.items() if not key.startswith("COQA_")}
    command = [sys.executable, "-m", "coqa.cli.main", "answer", str(DEMO_QUESTIONS), "-o", str(tmp_path / "r.txt"),
               "--store", store, "--model", str(damaged)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 1
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) <= 3 and str(damaged / part) in lines[-1] and "damaged" in lines[-1]
    assert not (tmp_path / "r.txt").exists()
