"""Fixtures of the integration tests: the demo knowledge base in a private
cache and a small model trained on it (the shipped model is trained on
pkubase-bench and may be retrained at any time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.config import Settings
from coqa.dataset import read_ccks
from coqa.kb.demo import DEMO_CCKS, ensure_demo_store
from coqa.pipeline import Pipeline
from coqa.training import Trainer


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


@pytest.fixture(scope="session")
def demo_model(demo_store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model trained on the demo CCKS questions over the demo knowledge base."""
    settings = Settings(store=demo_store)
    model, _ = Trainer(Pipeline.without_model(settings), settings).train(read_ccks(DEMO_CCKS))
    path = tmp_path_factory.mktemp("model") / "demo"
    model.save(path)
    return path
