"""`coqa train` is deterministic across processes: two trainings of the demo
knowledge base under different hash seeds write byte-identical model files
(set and dict iteration order changes with PYTHONHASHSEED)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coqa.kb.demo import DEMO_DIR, ensure_demo_store
from coqa.testing.local_process import clean_environment

DEMO_CCKS = DEMO_DIR / "questions.ccks.txt"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


def train_in_process(store: str, output: Path, hash_seed: str) -> None:
    environment = clean_environment(PYTHONHASHSEED=hash_seed)
    command = [sys.executable, "-m", "coqa.cli.main", "train", str(DEMO_CCKS), "--store", store, "-o", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
    assert done.returncode == 0, done.stderr


def test_two_trainings_in_separate_processes_write_identical_files(store: str, tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    train_in_process(store, first, "1")
    train_in_process(store, second, "2")
    names = sorted(path.name for path in first.iterdir())
    assert names == sorted(path.name for path in second.iterdir())
    assert "ranker.txt" in names
    for name in names:
        assert (first / name).read_bytes() == (second / name).read_bytes(), f"{name} differs between the two trainings"
