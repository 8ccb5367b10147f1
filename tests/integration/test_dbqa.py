"""NLPCC DBQA on the shared data: the shipped model is what `coqa train`
makes from train.txt, byte for byte, and it ranks the dev file's sentences.
Skipped when ../shared/data/nlpcc-dbqa is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.dbqa.model import DEFAULT_DBQA_MODEL
from coqa.dbqa.reading import DbqaFormatError, read_dbqa

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "nlpcc-dbqa"
pytestmark = pytest.mark.skipif(not (DATA / "train.txt").is_file(), reason=f"{DATA} is absent")


def test_the_shipped_model_is_what_train_makes(tmp_path, capsys):
    assert main(["train", "--task", "nlpcc-dbqa", str(DATA / "train.txt"), "-o", str(tmp_path / "model")]) == 0
    assert "trained on 878 questions, 18494 sentences" in capsys.readouterr().out
    shipped = sorted(path.name for path in DEFAULT_DBQA_MODEL.iterdir())
    assert sorted(path.name for path in (tmp_path / "model").iterdir()) == shipped
    for name in shipped:
        assert (tmp_path / "model" / name).read_bytes() == (DEFAULT_DBQA_MODEL / name).read_bytes(), name


def test_the_dev_file_label_10_is_refused_then_repaired():
    with pytest.raises(DbqaFormatError, match=r"dev.txt:2549: label '10' is not 0 or 1"):
        read_dbqa(DATA / "dev.txt")
    source = read_dbqa(DATA / "dev.txt", repair_labels=True)
    assert [(repair.line, repair.read_as) for repair in source.repairs] == [(2549, 1)]
    assert len(source.questions) == 393 and source.lines == 7445


def test_answer_writes_one_score_per_dev_line_and_ranks_above_overlap(tmp_path, capsys):
    scores = tmp_path / "scores.txt"
    assert main(["answer", str(DATA / "dev.txt"), "-o", str(scores), "--repair-labels"]) == 0
    assert len(scores.read_text(encoding="utf-8").splitlines()) == 7445
    capsys.readouterr()
    assert main(["eval", str(DATA / "dev.txt"), "--repair-labels", "--out", str(tmp_path / "eval")]) == 0
    out = capsys.readouterr().out
    map_value = float(next(line for line in out.splitlines() if line.startswith("MAP:")).split()[1])
    assert map_value > 0.448  # the README's character n-gram overlap, ties in file order
    assert (tmp_path / "eval" / "scores.txt").read_bytes() == scores.read_bytes()
