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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import lightgbm

from coqa import __version__
from coqa.dbqa.features import FEATURE_NAMES
from coqa.dbqa.ranker import SentenceRanker
from coqa.model_folder import check_part_digests, read_meta_file, write_model_folder
from coqa.resources import package_path

TASK = "nlpcc-dbqa"
FORMAT_VERSION = 1
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
        write_model_folder(Path(path), self.ranker.save, self.meta, DbqaModelError)

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
    if not path.exists():
        raise DbqaModelError(f"no DBQA model at {path}: {RETRAIN}")
    meta = read_meta_file(path, DbqaModelError, RETRAIN)
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
    check_part_digests(path, meta.get("parts"), DbqaModelError, RETRAIN)
    return meta
