"""Settings: built-in defaults < `--config FILE` < COQA_* environment < flags.

The built-in defaults are the values of config.yaml at the repository root
(shipped in the package), which documents every key; the dataclasses declare
the keys and their types only (`default_settings`). The algorithm settings are
typed sections (query_generation, linking, ranking, training); a model
records the sections it was trained with, and at answer time those recorded
values are used except for the keys the user set (`explicit`), see
`Settings.algorithm_for_model`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, get_type_hints

import yaml

from coqa.booster_settings import BoosterSettings
from coqa.dbqa.settings import DBQASettings
from coqa.kb import KBConfig
from coqa.linking.settings import LinkingSettings
from coqa.querygen.settings import QueryGenerationSettings
from coqa.ranking.settings import RankingSettings
from coqa.resources import DEFAULT_CONFIG_FILE, DEFAULT_MODEL
from coqa.shapes import SHAPES

SHAPE_NAMES = tuple(shape.name for shape in SHAPES)

BACKENDS = ("oxigraph", "sparql", "gstore")
KB_KEYS = tuple(f.name for f in fields(KBConfig))


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class TrainingSettings:
    seed: int
    folds: int
    positive_f1: float
    # binary: one pointwise model scores and orders the linked terms; lambdarank: a listwise model with
    # graded labels (gold entity over gold value) orders them and a pointwise one with the same tree settings
    # scores them (the ranker reads the score). Chosen on held-out train questions (docs/measurements/linking.md, "The order of linked terms").
    linker: BoosterSettings
    # LambdaRank ranked better than the pointwise model on held-out train folds (docs/model-format.md, "Learning to rank"; docs/measurements/ranking.md).
    ranker: BoosterSettings


ALGORITHM_SECTIONS = ("query_generation", "linking", "ranking", "training")
OBJECTIVES = ("binary", "lambdarank")


@dataclass(frozen=True)
class Settings:
    backend: str
    store: str
    endpoint: str
    gstore_url: str
    gstore_db: str
    gstore_user: str
    gstore_password: str
    mention_index: str
    model: str
    cache_dir: str
    timeout: float
    retries: int
    retry_backoff: float
    # An answer whose confidence is below this is left out (0: none is).
    min_confidence: float
    # A batch stops once this many questions in a row found the remote KB unreachable (0: never).
    stop_after_unreachable: int
    # Rows of recently sent queries kept in memory, for questions that send them again (0: none): for a whole
    # run of answer/eval/train; by `coqa serve` for kb_cache_seconds (0: for the question that asked only).
    kb_cache_rows: int
    kb_cache_seconds: float
    # Linked nodes per query counting the predicates around them (1: a query per node).
    kb_nodes_per_query: int
    hanlp: bool
    log_level: str
    query_generation: QueryGenerationSettings
    linking: LinkingSettings
    ranking: RankingSettings
    training: TrainingSettings
    dbqa: DBQASettings
    # Dotted keys of the algorithm settings set by a config file, the environment or a flag.
    explicit: frozenset[str] = field(default=frozenset(), compare=False)

    def with_overrides(self, values: Mapping[str, Any], source: str) -> "Settings":
        """A copy with `values` applied (sections as nested mappings); unknown
        keys and bad types raise ConfigError."""
        settings, changed = _override(self, values, source, "")
        if settings.backend not in BACKENDS:
            raise ConfigError(f"{source}: backend must be one of {', '.join(BACKENDS)}, not {settings.backend!r}")
        unknown = [name for name in settings.query_generation.shapes.split(",") if name and name not in SHAPE_NAMES]
        if unknown:
            raise ConfigError(f"{source}: query_generation.shapes names unknown shapes {', '.join(unknown)} (known: {', '.join(SHAPE_NAMES)})")
        if not 0.0 <= settings.min_confidence <= 1.0:
            raise ConfigError(f"{source}: min_confidence must be in [0, 1], not {settings.min_confidence}")
        if settings.kb_nodes_per_query < 1:
            raise ConfigError(f"{source}: kb_nodes_per_query must be at least 1, not {settings.kb_nodes_per_query}")
        if settings.linking.min_mention_length < 1:
            raise ConfigError(f"{source}: linking.min_mention_length must be at least 1")
        for booster in (settings.training.linker, settings.training.ranker):
            if booster.objective not in OBJECTIVES:
                raise ConfigError(f"{source}: objective must be one of {', '.join(OBJECTIVES)}, not {booster.objective!r}")
            if booster.bags < 1 or not 0.0 < booster.bag_fraction <= 1.0:
                raise ConfigError(f"{source}: bags must be at least 1 and bag_fraction in (0, 1], not {booster.bags} and {booster.bag_fraction}")
        return replace(settings, explicit=self.explicit | {key for key in changed if "." in key})

    def algorithm(self) -> dict[str, Any]:
        """The algorithm sections as plain data (what a model records)."""
        return {name: _plain(getattr(self, name)) for name in ALGORITHM_SECTIONS}

    def algorithm_for_model(self, recorded: Mapping[str, Any]) -> "Settings":
        """These settings with the algorithm sections a model recorded, except
        for the keys the user set explicitly, which win."""
        merged = replace(self.with_overrides(recorded, "model"), explicit=self.explicit)
        mine = self.algorithm()
        return merged.with_overrides(_nested({key: _lookup(mine, key) for key in self.explicit}), "settings")

    def kb_config(self) -> KBConfig:
        """What the knowledge-base layer needs of these settings."""
        return KBConfig(**{name: getattr(self, name) for name in KB_KEYS})

    @property
    def cache_path(self) -> Path:
        return Path(os.path.expanduser(self.cache_dir))

    @property
    def model_path(self) -> Path:
        return Path(os.path.expanduser(self.model)) if self.model else DEFAULT_MODEL


@lru_cache(maxsize=1)
def default_settings() -> Settings:
    """The built-in defaults: the values of config.yaml (shipped in the package),
    the one place they are written; ConfigError naming a key it lacks."""
    return _build(Settings, read_config_file(DEFAULT_CONFIG_FILE), str(DEFAULT_CONFIG_FILE), "")


def _build(cls: Any, values: Mapping[str, Any], source: str, prefix: str) -> Any:
    """A settings dataclass with every field taken from `values` (sections as
    nested mappings); ConfigError for a missing, unknown or mistyped key."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source}: setting {prefix[:-1]!r} must be a mapping of settings")
    hints = get_type_hints(cls)
    known = [f for f in fields(cls) if f.name != "explicit"]
    missing = [prefix + f.name for f in known if f.name not in values]
    unknown = sorted(prefix + str(key) for key in set(values) - {f.name for f in known})
    if missing or unknown:
        raise ConfigError(f"{source}: missing settings {', '.join(missing) or 'none'}; unknown settings {', '.join(unknown) or 'none'}")
    built = {}
    for f in known:
        kind = hints[f.name]
        if is_dataclass(kind):
            built[f.name] = _build(kind, values[f.name], source, f"{prefix}{f.name}.")
        else:
            built[f.name] = _coerce(prefix + f.name, f.type, values[f.name], source)
    return cls(**built)


def _override(section: Any, values: Mapping[str, Any], source: str, prefix: str) -> tuple[Any, set[str]]:
    """`section` (a settings dataclass) with `values` applied, and the dotted keys changed."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source}: setting {prefix[:-1]!r} must be a mapping of settings")
    known = {f.name: f for f in fields(section) if f.name != "explicit"}
    changes: dict[str, Any] = {}
    changed: set[str] = set()
    for key, value in values.items():
        if key not in known:
            raise ConfigError(f"{source}: unknown setting {prefix + str(key)!r} (known: {', '.join(known)})")
        if value is None:
            continue
        current = getattr(section, key)
        if is_dataclass(current):
            changes[key], inner = _override(current, value, source, f"{prefix}{key}.")
            changed |= inner
        else:
            changes[key] = _coerce(prefix + key, known[key].type, value, source)
            if isinstance(current, Mapping):  # a mapping setting is updated entry by entry
                changes[key] = {**current, **changes[key]}
            changed.add(prefix + key)
    return replace(section, **changes), changed


def _plain(section: Any) -> dict[str, Any]:
    return {key: dict(value) if isinstance(value, Mapping) else value for key, value in asdict(section).items()}


def _lookup(data: Mapping[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        data = data[part]
    return data


def _nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    """{"a.b": 1} -> {"a": {"b": 1}}."""
    result: dict[str, Any] = {}
    for dotted, value in flat.items():
        *parents, last = dotted.split(".")
        node = result
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return result


def _coerce(key: str, type_name: Any, value: Any, source: str) -> Any:
    type_name = type_name if isinstance(type_name, str) else type_name.__name__
    if type_name.startswith("Mapping"):
        return _coerce_mapping(key, value, source)
    try:
        if type_name == "bool":
            if isinstance(value, str):
                lowered = value.strip().lower()
                if lowered not in ("1", "0", "true", "false", "yes", "no", "on", "off"):
                    raise ValueError(value)
                return lowered in ("1", "true", "yes", "on")
            return bool(value)
        if type_name == "int":
            return int(value)
        if type_name == "float":
            return float(value)
        return str(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: setting {key!r} must be a {type_name}, not {value!r}") from None


def _coerce_mapping(key: str, value: Any, source: str) -> dict[str, int]:
    """A mapping of names to whole numbers (YAML text is read when it comes as a string)."""
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError:
            value = None
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: setting {key!r} must be a mapping of names to numbers, not {value!r}")
    return {str(name): int(_coerce(f"{key}.{name}", "int", number, source)) for name, number in value.items()}


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The settings in a YAML file (a mapping of keys to values)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read config file {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {path} is not valid YAML: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings")
    return data


def environment_overrides(environ: Mapping[str, str]) -> dict[str, Any]:
    """COQA_<KEY> variables as settings, COQA_<SECTION>__<KEY> for a key of a
    section (COQA_TRAINING__SEED, COQA_TRAINING__RANKER__ROUNDS); COQA_CONFIG
    names the file, not a key."""
    names = {f.name for f in fields(Settings)} - {"explicit"}
    flat = {
        key[5:].lower().replace("__", "."): value
        for key, value in environ.items()
        if key.startswith("COQA_") and key[5:].lower().split("__")[0] in names
    }
    return _nested(flat)


def load_settings(
    config_file: str | Path | None = None,
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Resolve settings: defaults, then the config file (argument or
    $COQA_CONFIG), then COQA_* variables, then command-line flags (None = unset)."""
    environ = os.environ if environ is None else environ
    settings = default_settings()
    config_file = config_file or environ.get("COQA_CONFIG")
    if config_file:
        settings = settings.with_overrides(read_config_file(config_file), str(config_file))
    settings = settings.with_overrides(environment_overrides(environ), "environment")
    return settings.with_overrides(flags or {}, "command line")
