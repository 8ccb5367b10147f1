"""meta.json records the SHA-256 of each part; `check_part_digests` refuses, in one
line naming the file, a part that is missing, damaged, foreign or unlisted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coqa.model import ModelError
from coqa.model_folder import META_FILE, check_part_digests, file_digest


def _model(path: Path) -> dict:
    path.mkdir()
    (path / "ranker.txt").write_text("tree\nversion=v4\n", encoding="utf-8")
    (path / "associations.json").write_text("{}", encoding="utf-8")
    meta = {"files": {name: file_digest(path / name) for name in ("ranker.txt", "associations.json")}}
    (path / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return meta


def test_intact_parts_pass(tmp_path: Path) -> None:
    meta = _model(tmp_path / "m")
    check_part_digests(tmp_path / "m", meta["files"], ModelError, "retrain")


def test_a_part_cut_short_is_refused_naming_the_file(tmp_path: Path) -> None:
    meta = _model(tmp_path / "m")
    (tmp_path / "m" / "ranker.txt").write_text("tree\n", encoding="utf-8")
    with pytest.raises(ModelError) as refused:
        check_part_digests(tmp_path / "m", meta["files"], ModelError, "retrain")
    assert "\n" not in str(refused.value) and "ranker.txt is damaged" in str(refused.value)


def test_a_part_of_another_model_is_refused(tmp_path: Path) -> None:
    meta = _model(tmp_path / "m")
    _model(tmp_path / "other")
    (tmp_path / "other" / "associations.json").write_text('{"a": 1}', encoding="utf-8")
    (tmp_path / "m" / "associations.json").write_bytes((tmp_path / "other" / "associations.json").read_bytes())
    with pytest.raises(ModelError, match="associations.json is damaged or not this model's part"):
        check_part_digests(tmp_path / "m", meta["files"], ModelError, "retrain")


def test_a_missing_or_unlisted_part_and_a_meta_without_checksums_are_refused(tmp_path: Path) -> None:
    meta = _model(tmp_path / "m")
    (tmp_path / "m" / "ranker.1.txt").write_text("tree\n", encoding="utf-8")
    with pytest.raises(ModelError, match="ranker.1.txt is not a part of the model"):
        check_part_digests(tmp_path / "m", meta["files"], ModelError, "retrain")
    (tmp_path / "m" / "ranker.1.txt").unlink()
    (tmp_path / "m" / "ranker.txt").unlink()
    with pytest.raises(ModelError, match="ranker.txt: a part of the model listed in meta.json is missing"):
        check_part_digests(tmp_path / "m", meta["files"], ModelError, "retrain")
    with pytest.raises(ModelError, match="records no checksums"):
        check_part_digests(tmp_path / "m", ["ranker.txt"], ModelError, "retrain")
    with pytest.raises(ModelError, match="is missing"):
        check_part_digests(tmp_path / "m", {"../ranker.txt": "0"}, ModelError, "retrain")
