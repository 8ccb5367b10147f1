"""The DBQA model folder that `coqa train --task nlpcc-dbqa` writes.

    meta.json    task (nlpcc-dbqa), format version, coqa and LightGBM versions,
                 feature names, the settings it was trained with, training
                 data digest, figures, and the sha256 of every part
    ranker.txt   LightGBM text model of the sentence ranker

No pickle. Loading refuses, in one line, a folder that is not a DBQA model
(a KBQA model, another format version, other features) and any part whose
checksum differs from meta.json, before LightGBM reads it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightgbm

from coqa import __version__
from coqa.dbqa.features import FEATURE_NAMES
from coqa.dbqa.ranker import SentenceRanker
from coqa.resources import package_path

TASK = "nlpcc-dbqa"
FORMAT_VERSION = 1
META_FILE = "meta.json"
DEFAULT_DBQA_MODEL = package_path("models", "dbqa")
RETRAIN = "retrain with `coqa train --task nlpcc-dbqa TRAIN_FILE -o MODEL_DIR`"


class DbqaModelError(ValueError):
    """A DBQA model that cannot be used; the message says why and what to do."""


@dataclass
class DbqaModel:
    """The trained sentence ranker and what meta.json says about it."""

    ranker: SentenceRanker
    settings: dict[str, Any]
    training_data_digest: str
    figures: dict[str, Any] = field(default_factory=dict)

    def meta(self, parts: dict[str, str]) -> dict[str, Any]:
        return {
            "task": TASK,
            "format_version": FORMAT_VERSION,
            "coqa_version": __version__,
            "lightgbm_version": lightgbm.__version__,
            "features": list(FEATURE_NAMES),
            "settings": self.settings,
            "training_data_digest": self.training_data_digest,
            "figures": self.figures,
            "parts": parts,
        }

    def save(self, path: str | Path) -> None:
        """Write the model folder (written beside `path` first, then moved in;
        an existing folder at `path` is replaced only if it is a model folder)."""
        path = Path(path)
        if path.exists() and not (path / META_FILE).is_file():
            raise DbqaModelError(f"{path} exists and is not a coqa model directory: choose another output path")
        staging = path.with_name(path.name + ".partial")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        names = self.ranker.save(staging)
        parts = {name: file_digest(staging / name) for name in names}
        meta = json.dumps(self.meta(parts), ensure_ascii=False, indent=1, sort_keys=True)
        (staging / META_FILE).write_text(meta + "\n", encoding="utf-8")
        if path.exists():
            shutil.rmtree(path)
        staging.rename(path)

    @staticmethod
    def load(path: str | Path | None = None) -> "DbqaModel":
        """The model at `path` (the shipped one when None); DbqaModelError in one line when it cannot be used."""
        path = Path(path) if path is not None else DEFAULT_DBQA_MODEL
        meta = read_meta(path)
        try:
            ranker = SentenceRanker.load(path)
        except (OSError, ValueError, lightgbm.basic.LightGBMError) as error:
            raise DbqaModelError(f"the model at {path} cannot be read ({error}); {RETRAIN}") from None
        return DbqaModel(ranker, meta["settings"], meta["training_data_digest"], meta.get("figures", {}))


def read_meta(path: Path) -> dict[str, Any]:
    """The meta.json of a DBQA model folder, checked against the code and its
    parts' checksums; DbqaModelError naming the first problem."""
    if not path.is_dir():
        raise DbqaModelError(f"no DBQA model at {path}: {RETRAIN}")
    try:
        meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    except OSError:
        raise DbqaModelError(f"{path} has no {META_FILE}: it is not a coqa model directory; {RETRAIN}") from None
    except json.JSONDecodeError as error:
        raise DbqaModelError(f"{path / META_FILE} is not valid JSON ({error}); {RETRAIN}") from None
    if not isinstance(meta, dict):
        raise DbqaModelError(f"{path / META_FILE} is not a JSON object; {RETRAIN}")
    if meta.get("task") != TASK:
        found = meta.get("task") or "KBQA"
        raise DbqaModelError(f"the model at {path} is a {found} model, not an {TASK} model: {RETRAIN}")
    if meta.get("format_version") != FORMAT_VERSION:
        raise DbqaModelError(
            f"the model at {path} has DBQA format {meta.get('format_version')}, this coqa {__version__} "
            f"reads format {FORMAT_VERSION}; {RETRAIN}"
        )
    if meta.get("features") != list(FEATURE_NAMES):
        raise DbqaModelError(f"the model at {path} was trained with other features than this coqa computes; {RETRAIN}")
    parts = meta.get("parts")
    if not isinstance(parts, dict) or not parts:
        raise DbqaModelError(f"{path / META_FILE} lists no parts; {RETRAIN}")
    for name, digest in parts.items():
        part = path / str(name)
        if Path(str(name)).name != name or not part.is_file():
            raise DbqaModelError(f"the model at {path} lacks its part {name!r}; {RETRAIN}")
        if file_digest(part) != digest:
            raise DbqaModelError(f"{part} differs from the checksum in {META_FILE} (changed or damaged); {RETRAIN}")
    return meta


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes, hex."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
