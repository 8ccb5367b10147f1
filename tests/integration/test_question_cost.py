"""benchmarks/bench_question_cost.py: the linker's look-ups counted by template,
on the shipped demo knowledge base with the shipped model."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_question_cost  # noqa: E402

from coqa.config import default_settings  # noqa: E402
from coqa.kb.demo import ensure_demo_store  # noqa: E402
from coqa.mentions.detection import normalize_question  # noqa: E402
from coqa.pipeline import Pipeline  # noqa: E402
from coqa.shapes import EDGES_IN, EDGES_OUT, LOOKUPS  # noqa: E402

QUESTION = "周星驰主演的电影有哪些？"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_store(tmp_path_factory.mktemp("cache"))


def test_linking_lookups_are_counted_by_template(store: Path) -> None:
    plain = Pipeline.from_settings(replace(default_settings(), store=str(store)))
    candidates = plain.analyse(normalize_question(QUESTION)).link_candidates
    entities = {c.term for c in candidates if not c.term.is_literal}
    plain.close()
    assert entities, "the question links entities on the demo knowledge base"

    run = bench_question_cost.Run("demo", store, None)
    run.answer(QUESTION)
    summary = run.summary()
    run.pipeline.close()

    lookups = summary["linking_queries"]
    # Each candidate entity's edges read once each way (answered from memory or not).
    assert lookups[EDGES_OUT]["calls_per_question"] == lookups[EDGES_IN]["calls_per_question"] == len(entities)
    assert set(lookups) <= set(LOOKUPS)
    assert sum(figures["calls_per_question"] for figures in lookups.values()) <= summary["queries_per_question"]
