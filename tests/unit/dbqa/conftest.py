"""A small labelled DBQA file written for the tests (invented places and facts)."""

from __future__ import annotations

from pathlib import Path

import pytest

RIVERS = ["青川河", "白石江", "落霞河", "云溪江", "松岭河", "碧水江", "金沙溪", "望月河", "清风江", "鹿鸣河"]


def labelled_lines() -> list[str]:
    """Ten questions in the 2016 order, four sentences each, the second one right."""
    lines = []
    for number, river in enumerate(RIVERS):
        other = RIVERS[(number + 1) % len(RIVERS)]
        question = f"{river}全长多少公里？"
        sentences = [
            (f"{river}是一条美丽的河流。", 0),
            (f"{river}全长约{300 + number * 17}公里，流域面积很大。", 1),
            (f"{other}的两岸有很多村庄。", 0),
            ("当地人每年都会举办节日。", 0),
        ]
        lines += [f"{question}\t{sentence}\t{label}" for sentence, label in sentences]
    return lines


@pytest.fixture
def labelled_file(tmp_path: Path) -> Path:
    path = tmp_path / "train.txt"
    path.write_text("\n".join(labelled_lines()) + "\n", encoding="utf-8")
    return path
