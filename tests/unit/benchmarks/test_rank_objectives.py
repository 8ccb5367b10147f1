"""benchmarks/rank_objectives.py: the cross-validated judge of ranking features runs on today's training code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from coqa.kb.demo import DEMO_CCKS
from coqa.ranking.features import RANK_FEATURES

RANK_OBJECTIVES = Path(__file__).resolve().parents[3] / "benchmarks" / "rank_objectives.py"


def test_features_are_judged_with_and_without_on_every_seed(demo_store: str) -> None:
    done = subprocess.run(
        [sys.executable, str(RANK_OBJECTIVES), str(DEMO_CCKS), "--store", demo_store, "--without", "a_class", "--seeds", "0", "1"],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    readings = re.findall(r"^  (all features|without a_class) +([0-9.]+) / ([0-9.]+) \(([0-9.]+)\)  \((\d+) features\)$", done.stdout, re.M)
    assert [label for label, *_ in readings] == ["all features", "without a_class"], done.stdout
    (_, *all_f1, all_count), (_, *without_f1, without_count) = readings
    assert int(all_count) == len(RANK_FEATURES)
    assert int(all_count) - int(without_count) == sum(name.startswith("a_class") for name in RANK_FEATURES) == 5
    for first, second, mean in (all_f1, without_f1):
        assert 0.0 <= float(first) <= 1.0 and abs((float(first) + float(second)) / 2 - float(mean)) < 1e-4
