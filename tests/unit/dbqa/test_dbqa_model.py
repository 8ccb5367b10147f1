"""The DBQA model folder: training, save/load, checksums, refusals, and the CLI over it."""

from __future__ import annotations

from dataclasses import replace

import json
import shutil

import pytest

from coqa.cli.main import main
from coqa.config import default_settings
from coqa.dbqa.model import DEFAULT_DBQA_MODEL, DbqaModel, DbqaModelError
from coqa.model_folder import META_FILE
from coqa.dbqa.reading import read_dbqa
from coqa.dbqa.scoring import evaluate, score_file
from coqa.dbqa.training import cross_validate, train_model
from coqa.resources import DEFAULT_MODEL

SMALL = replace(default_settings().dbqa.ranker, rounds=20, learning_rate=0.1, num_leaves=4, min_data_in_leaf=2)


@pytest.fixture
def trained(labelled_file, tmp_path):
    model, _ = train_model(read_dbqa(labelled_file), settings=SMALL)
    path = tmp_path / "model"
    model.save(path)
    return path


def test_trained_model_ranks_and_reloads_with_the_same_scores(labelled_file, trained):
    source = read_dbqa(labelled_file)
    model, summary = train_model(source, settings=SMALL)
    assert summary.questions == 10 and summary.sentences == 40 and summary.positives == 10
    loaded = DbqaModel.load(trained)
    assert score_file(loaded, source) == score_file(model, source)
    assert evaluate(loaded, source).overall.map == 1.0
    meta = json.loads((trained / META_FILE).read_text(encoding="utf-8"))
    assert meta["task"] == "nlpcc-dbqa" and meta["training_data_digest"] == source.digest()
    assert set(meta["parts"]) == {"ranker.txt"}


def test_training_twice_gives_the_same_bytes(labelled_file, tmp_path, trained):
    model, _ = train_model(read_dbqa(labelled_file), settings=SMALL)
    model.save(tmp_path / "again")
    for name in ("meta.json", "ranker.txt"):
        assert (tmp_path / "again" / name).read_bytes() == (trained / name).read_bytes()


def test_a_changed_part_is_refused_before_lightgbm_reads_it(trained):
    part = trained / "ranker.txt"
    part.write_bytes(part.read_bytes().replace(b"num_leaves", b"num_leafs", 1))
    with pytest.raises(DbqaModelError, match="ranker.txt is damaged or not this model.s part"):
        DbqaModel.load(trained)


def test_a_kbqa_model_is_refused_in_one_line():
    with pytest.raises(DbqaModelError) as caught:
        DbqaModel.load(DEFAULT_MODEL)
    assert "is a KBQA model, not an nlpcc-dbqa model" in str(caught.value) and "\n" not in str(caught.value)


def test_another_format_version_or_features_are_refused(trained):
    meta = json.loads((trained / META_FILE).read_text(encoding="utf-8"))
    (trained / META_FILE).write_text(json.dumps({**meta, "format_version": 99}), encoding="utf-8")
    with pytest.raises(DbqaModelError, match="has DBQA format 99"):
        DbqaModel.load(trained)
    (trained / META_FILE).write_text(json.dumps({**meta, "features": meta["features"][:-1]}), encoding="utf-8")
    with pytest.raises(DbqaModelError, match="other features"):
        DbqaModel.load(trained)
    (trained / META_FILE).write_text(json.dumps({**meta, "parts": {"../ranker.txt": "0"}}), encoding="utf-8")
    with pytest.raises(DbqaModelError, match="a part of the model listed in meta.json is missing"):
        DbqaModel.load(trained)


def test_missing_model_and_non_model_output(tmp_path, trained):
    with pytest.raises(DbqaModelError, match="no DBQA model"):
        DbqaModel.load(tmp_path / "nothing")
    (tmp_path / "plain").mkdir()
    model = DbqaModel.load(trained)
    with pytest.raises(DbqaModelError, match="not a coqa model directory"):
        model.save(tmp_path / "plain")


def test_the_shipped_model_loads():
    assert DbqaModel.load(None).ranker is not None
    assert DEFAULT_DBQA_MODEL.name == "dbqa"


def test_training_refuses_unlabelled_and_all_negative_files(tmp_path):
    unlabelled = tmp_path / "test.txt"
    unlabelled.write_text("问？\t句一\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has no labels"):
        train_model(read_dbqa(unlabelled), SMALL)
    negative = tmp_path / "negative.txt"
    negative.write_text("问？\t句一\t0\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no sentence labelled 1"):
        train_model(read_dbqa(negative), SMALL)


def test_cross_validation_scores_each_fold(labelled_file):
    folds = cross_validate(read_dbqa(labelled_file), folds=2, settings=SMALL)
    assert [fold.questions for fold in folds] == [5, 5]
    with pytest.raises(ValueError, match="folds"):
        cross_validate(read_dbqa(labelled_file), SMALL, folds=1)


def test_cli_train_answer_eval(labelled_file, tmp_path, capsys):
    model = tmp_path / "cli-model"
    assert main(["train", str(labelled_file), "-o", str(model)]) == 0  # recognised as DBQA from the file
    assert "trained on 10 questions, 40 sentences" in capsys.readouterr().out
    scores = tmp_path / "scores.txt"
    assert main(["answer", "--task", "nlpcc-dbqa", str(labelled_file), "-o", str(scores), "--model", str(model)]) == 0
    values = [float(line) for line in scores.read_text(encoding="utf-8").splitlines()]
    assert len(values) == 40
    assert main(["score", "--task", "nlpcc-dbqa", str(scores), str(labelled_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["questions"] == 10
    assert main(["eval", str(labelled_file), "--model", str(model), "--out", str(tmp_path / "report")]) == 0
    out = capsys.readouterr().out
    assert "MAP:" in out and "by question type:" in out and "worst 10 questions" in out
    assert (tmp_path / "report" / "scores.txt").read_text(encoding="utf-8") == scores.read_text(encoding="utf-8")


def test_cli_training_takes_the_ranker_settings_of_the_config_file(labelled_file, tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("dbqa:\n  ranker:\n    rounds: 7\n    num_leaves: 3\n", encoding="utf-8")
    model = tmp_path / "configured"
    assert main(["--config", str(config), "train", str(labelled_file), "-o", str(model)]) == 0
    booster = json.loads((model / META_FILE).read_text(encoding="utf-8"))["settings"]["booster"]
    assert (booster["rounds"], booster["num_leaves"]) == (7, 3)
    assert booster["learning_rate"] == default_settings().dbqa.ranker.learning_rate
    assert main(["train", str(labelled_file), "-o", str(tmp_path / "default")]) == 0
    default = json.loads((tmp_path / "default" / META_FILE).read_text(encoding="utf-8"))["settings"]["booster"]
    assert default["rounds"] == default_settings().dbqa.ranker.rounds != 7


def test_cli_reports_bad_input_and_wrong_models(labelled_file, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("0\t问？\t句一\n10\t问？\t句二\n", encoding="utf-8")
    assert main(["answer", "--task", "nlpcc-dbqa", str(bad), "-o", str(tmp_path / "s.txt")]) == 2
    assert f"{bad}:2: label '10' is not 0 or 1" in capsys.readouterr().err
    assert main(["answer", "--task", "nlpcc-dbqa", str(bad), "-o", str(tmp_path / "s.txt"), "--repair-labels"]) == 0
    assert f"{bad}:2: label '10' read as 1" in capsys.readouterr().err
    assert main(["eval", "--task", "nlpcc-dbqa", str(labelled_file), "--model", str(DEFAULT_MODEL)]) == 2
    assert "is a KBQA model" in capsys.readouterr().err
    copy = tmp_path / "copy"
    shutil.copytree(DEFAULT_DBQA_MODEL, copy)
    (copy / "ranker.txt").write_text("tree\n", encoding="utf-8")
    assert main(["eval", str(labelled_file), "--model", str(copy)]) == 2
    assert "is damaged or not this model" in capsys.readouterr().err
