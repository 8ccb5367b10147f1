"""benchmarks/bench_hub.py: which predicates a hub's added edges may use."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_hub  # noqa: E402
from conftest import needs_bench

pytestmark = needs_bench


def _bench(directory: Path) -> Path:
    triples = [
        "<组织甲>\t<成立时间>\t\"1948年\" .",
        "<歌曲乙>\t<歌曲类型>\t<流行> .",
        "<城市丙>\t<人口>\t\"100万\" .",
        "<城市丙>\t<人口密度>\t\"900\" .",
    ]
    (directory / bench_hub.TRIPLES_FILE).write_text("\n".join(triples) + "\n", encoding="utf-8")
    (directory / bench_hub.TYPES_FILE).write_text("<组织甲>\t<类型>\t<机构> .\n", encoding="utf-8")
    return directory


def test_a_hubs_type_counts_among_its_relations(tmp_path: Path) -> None:
    uses, used = bench_hub.bench_predicates(_bench(tmp_path))
    assert used["<组织甲>"] == {"<成立时间>", "<类型>"}
    assert used["<机构>"] == {"<类型>"}
    assert "<类型>" not in uses  # only the triple file's predicates are drawn for new edges
    unrelated = bench_hub.synthetic_names(uses, used["<组织甲>"], "unrelated")
    assert unrelated == ["<人口>", "<人口密度>"]  # <歌曲类型> restates its <类型>
    assert "<歌曲类型>" in bench_hub.synthetic_names(uses, used["<组织甲>"], "any")


def test_unrelated_predicates_share_no_two_characters_in_a_row_with_the_hubs(tmp_path: Path) -> None:
    uses, used = bench_hub.bench_predicates(_bench(tmp_path))
    assert bench_hub.synthetic_names(uses, used["<城市丙>"], "unrelated") == ["<成立时间>", "<歌曲类型>"]
