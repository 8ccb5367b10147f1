"""benchmarks/bench_scale.py: the synthetic data with or without distractors, and the stores built from other data."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_scale  # noqa: E402
import synthetic  # noqa: E402
from conftest import needs_bench

pytestmark = needs_bench

DISTRACTOR_FILES = (synthetic.DISTRACTOR_TRIPLES_FILE, synthetic.DISTRACTOR_MENTIONS_FILE)


def _stores(work: Path) -> list[Path]:
    stores = [work / "store-synthetic", work / "store-scale"]
    for store in stores:
        store.mkdir()
        (store / "manifest.json").write_text("{}")
    return stores


def test_no_distractors_writes_only_the_synthetic_files(tmp_path: Path) -> None:
    data = bench_scale.make_data(tmp_path, 300, 0, distractors=False)
    assert (data / synthetic.TRIPLES_FILE).is_file()
    assert not any((data / name).exists() for name in DISTRACTOR_FILES)
    assert json.loads((data / "generated.json").read_text())["arguments"]["distractors"] is False


def test_other_data_regenerates_and_drops_the_stores_built_from_the_old(tmp_path: Path) -> None:
    bench_scale.make_data(tmp_path, 300, 0, distractors=False)
    stores = _stores(tmp_path)
    bench_scale.make_data(tmp_path, 300, 0, distractors=False)  # the same data: reused, stores kept
    assert all(store.is_dir() for store in stores)
    data = bench_scale.make_data(tmp_path, 300, 0, distractors=True)
    assert all((data / name).is_file() for name in DISTRACTOR_FILES)
    assert not any(store.exists() for store in stores)
    data = bench_scale.make_data(tmp_path, 300, 0, distractors=False)  # the distractor files go with the old data
    assert not any((data / name).exists() for name in DISTRACTOR_FILES)


def test_data_recorded_before_the_option_had_distractors(tmp_path: Path) -> None:
    data = bench_scale.make_data(tmp_path, 300, 0, distractors=True)
    recorded = json.loads((data / "generated.json").read_text())
    del recorded["arguments"]["distractors"]
    (data / "generated.json").write_text(json.dumps(recorded))
    stores = _stores(tmp_path)
    bench_scale.make_data(tmp_path, 300, 0, distractors=True)
    assert all(store.is_dir() for store in stores)
