"""The shipped model holds statistics learned from train.txt (and, when it
was trained with relation evidence, from the NLPCC training questions), never
a training, dev or evidence question verbatim (the questions are read from
../shared at run time, and the model ships inside the package)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from conftest import BENCH_DIR

from coqa.dataset import read_ccks, read_gold_questions
from coqa.mentions.detection import normalize_question
from coqa.resources import DEFAULT_MODEL


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_no_shared_question_is_stored_in_the_shipped_model() -> None:
    files = [BENCH_DIR / "train.txt", BENCH_DIR / "dev.txt"]
    if not all(path.exists() for path in files):
        pytest.skip(f"the shared pkubase-bench questions are not at {BENCH_DIR}")
    questions = {q.question.strip() for path in files for q in read_ccks(path)}
    nlpcc_train = BENCH_DIR.parent / "nlpcc-kbqa" / "train.txt"
    if nlpcc_train.exists():
        questions |= {q.question.strip() for q in read_gold_questions(nlpcc_train)}
    questions |= {normalize_question(q) for q in questions}
    stored = {s for part in sorted(Path(DEFAULT_MODEL).glob("*.json")) for s in _strings(json.loads(part.read_text("utf-8")))}
    assert not sorted(stored & questions)
