"""The trained model: a directory that `coqa train` writes and the pipeline reads.

    meta.json          format version, coqa version, feature names per scorer,
                       query shapes, template digest, the algorithm settings
                       it was trained with, training data digest, figures
    linker.txt         LightGBM text model of entity linking
    keyphraseness.json surface -> [times a gold mention, times matched]
    ranker.txt         LightGBM text model of candidate ranking
    associations.json  question n-gram / gold predicate counts
    neighbours.npz     TF-IDF of the training questions (arrays only)
    paraphrases.json   with ranking.name_associations: predicate paraphrases
    relation_evidence.json  with ranking.relation_evidence: paraphrases fitted
                       on another labelled question file (`--relation-evidence`)

No pickle: every part is a LightGBM model file, JSON or NPZ read with
allow_pickle=False. Each stage owns its part (coqa.linking.model.LinkerModel,
coqa.ranking.model.RankerModel); this module writes the directory and, on loading,
checks the model against the code and says in one line what is out of date.
meta.json records the SHA-256 of every part (`files`: name -> digest); loading
checks them all before LightGBM or numpy reads a byte, so a part cut short,
damaged or taken from another model ends in one line naming the file (LightGBM
itself may crash the process on such a file).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import lightgbm

from coqa import __version__
from coqa.config import ConfigError, default_settings
from coqa.ranking.settings import RankingSettings
from coqa.linking.linker import LINK_FEATURES
from coqa.model_folder import check_part_digests, read_meta_file, write_model_folder
from coqa.linking.model import LinkerModel
from coqa.ranking.features import rank_features
from coqa.ranking.model import RankerModel
from coqa.shapes import SHAPES
from coqa.templates import Template, template_digest

FORMAT_VERSION = 3
RETRAIN = "retrain with `coqa train TRAIN_FILE --store DIR -o MODEL_DIR`"


class ModelError(ValueError):
    """A model that cannot be used; the message says why and what to do."""


@dataclass
class TrainedModel:
    """The linker's and the ranker's trained parts and the model's meta data.

    `settings` are the algorithm sections it was trained with
    (Settings.algorithm()); `figures` what training counted and measured.
    """

    linker: LinkerModel
    ranker: RankerModel
    settings: dict[str, Any]
    template_digest: str
    training_data_digest: str
    figures: dict[str, Any] = field(default_factory=dict)

    def meta(self, files: dict[str, str]) -> dict[str, Any]:
        return {
            "format_version": FORMAT_VERSION,
            "coqa_version": __version__,
            "lightgbm_version": lightgbm.__version__,
            "features": {"linker": list(LINK_FEATURES), "ranker": list(rank_features(recorded_ranking(self.settings)))},
            "shapes": [shape.name for shape in SHAPES],
            "template_digest": self.template_digest,
            "settings": self.settings,
            "training_data_digest": self.training_data_digest,
            "figures": self.figures,
            "files": files,
            # the pairs the relation evidence was fitted on (coqa.ranking.relation_evidence), when it has one
            **({"relation_evidence_digest": self.ranker.evidence.digest} if self.ranker.evidence is not None else {}),
        }

    def save(self, path: str | Path) -> None:
        """Write the model directory (replacing one at `path`; written beside it first)."""
        write_model_folder(Path(path), lambda folder: self.linker.save(folder) + self.ranker.save(folder), self.meta, ModelError)

    @staticmethod
    def load(path: str | Path, templates: Mapping[str, Template]) -> "TrainedModel":
        """The model at `path`; ModelError (one line: what is wrong, what to do)
        when it is missing, of another format, or out of date with the code."""
        path = Path(path)
        if not path.exists():
            raise ModelError(f"no model at {path}: train one with `coqa train TRAIN_FILE --store DIR -o {path}`")
        meta = read_meta(path)
        problem = out_of_date(meta, templates)
        if problem:
            raise ModelError(f"the model at {path} is out of date: {problem}; {RETRAIN}")
        check_part_digests(path, meta.get("files"), ModelError, RETRAIN)
        recorded = meta["settings"]
        try:
            ranking = recorded_ranking(recorded)
            linker = LinkerModel.load(path)
            ranker = RankerModel.load(path, ranking)
        except (ConfigError, OSError, ValueError, KeyError, lightgbm.basic.LightGBMError) as error:
            raise ModelError(f"the model at {path} cannot be read ({error}); {RETRAIN}") from None
        return TrainedModel(linker, ranker, recorded, meta["template_digest"], meta["training_data_digest"], meta["figures"])


def recorded_ranking(recorded: Mapping[str, Any]) -> RankingSettings:
    """The ranking settings a model recorded (defaults for the keys it did not);
    ConfigError when they are not valid."""
    return default_settings().with_overrides({"ranking": recorded.get("ranking", {})}, "model").ranking


def read_meta(path: Path) -> dict[str, Any]:
    """The meta.json of a model directory; ModelError when there is none, it is not one or of another format."""
    meta = read_meta_file(path, ModelError, RETRAIN)
    if meta.get("format_version") != FORMAT_VERSION:
        found = meta.get("format_version")
        raise ModelError(f"the model at {path} has format {found}, this coqa {__version__} reads format {FORMAT_VERSION}; {RETRAIN}")
    return meta


def out_of_date(meta: Mapping[str, Any], templates: Mapping[str, Template]) -> str | None:
    """What in the model no longer matches the code ('' parts joined by '; '), or None."""
    problems = []
    try:
        ranker_features = rank_features(recorded_ranking(meta.get("settings", {})))
    except ConfigError as error:
        return f"its recorded ranking settings are not valid ({error})"
    for part, names in (("linker", LINK_FEATURES), ("ranker", ranker_features)):
        recorded = meta.get("features", {}).get(part, [])
        if list(recorded) != list(names):
            problems.append(f"{part} features differ from the code's ({_difference(recorded, names)})")
    shapes = [shape.name for shape in SHAPES]
    if meta.get("shapes") != shapes:
        problems.append(f"query shapes differ from the registry's ({_difference(meta.get('shapes') or [], shapes)})")
    if meta.get("template_digest") != template_digest(templates):
        problems.append("the query templates changed since it was trained")
    return "; ".join(problems) or None


def _difference(recorded: Any, expected: Any) -> str:
    missing = [name for name in expected if name not in recorded]
    unknown = [name for name in recorded if name not in expected]
    parts = [f"the model lacks {', '.join(missing)}"] if missing else []
    parts += [f"the code has no {', '.join(unknown)}"] if unknown else []
    return ", ".join(parts) or "same names in another order"
