"""benchmarks/ranking_errors.py: the class of a ranking error and the report over an errors file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "ranking_errors.py"
sys.path.insert(0, str(SCRIPT.parent))

from ranking_errors import error_class  # noqa: E402

ONE_HOP = "select ?x where { <甲城> <出生地> ?x . }"


def test_each_class_is_told_by_the_chosen_query() -> None:
    assert error_class(ONE_HOP, "SELECT ?x WHERE { <乙城> <出生地> ?x . }") == "other entity"
    assert error_class(ONE_HOP, "SELECT ?x WHERE { <甲城> <出生地> ?y . ?y <所属地区> ?x . }") == "longer"
    assert error_class("select ?x where { <甲城> <市长> ?y . ?y <出生地> ?x . }", ONE_HOP.replace("出生地", "市长")) == "shorter"
    assert error_class(ONE_HOP, "SELECT ?x WHERE { ?x <出生地> <甲城> . }") == "same predicates"
    assert error_class(ONE_HOP, "SELECT ?x WHERE { <甲城> <国籍> ?x . }") == "one hop, other predicate"
    assert error_class(ONE_HOP, "SELECT ?x WHERE { <甲城> <国籍> ?y . ?y <首都> ?x . }") == "other predicates"


def test_the_report_counts_stages_by_shape_and_ranking_errors_by_class(tmp_path: Path) -> None:
    rows = [
        {"number": 1, "shape": "one hop", "stage": "ranking", "gold_sparql": ONE_HOP, "chosen_sparql": "SELECT ?x WHERE { <甲城> <国籍> ?x . }"},
        {"number": 2, "shape": "chain", "stage": "linking", "gold_sparql": ONE_HOP, "chosen_sparql": None},
    ]
    errors = tmp_path / "errors.jsonl"
    errors.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    out = subprocess.run([sys.executable, str(SCRIPT), str(errors)], capture_output=True, text=True, check=True).stdout
    assert "| one hop | 0 | 0 | 0 | 1 |" in out and "| chain | 0 | 1 | 0 | 0 |" in out
    assert "ranking errors: 1" in out and "1  one hop, other predicate" in out
