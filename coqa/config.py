"""Settings: built-in defaults < `--config FILE` < COQA_* environment < flags.

The built-in defaults are the values in the packaged coqa/config.yaml, which
documents every key (a test keeps the two equal). The algorithm settings are
typed sections (query_generation, linking, ranking, training); a model
records the sections it was trained with, and at answer time those recorded
values are used except for the keys the user set (`explicit`), see
`Settings.algorithm_for_model`.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from coqa.resources import DEFAULT_MODEL
from coqa.shapes import SHAPES

SHAPE_NAMES = tuple(shape.name for shape in SHAPES)

BACKENDS = ("oxigraph", "sparql", "gstore")


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the key and the fix."""


@dataclass(frozen=True)
class QueryGenerationSettings:
    """How far query generation looks around the linked nodes. Every number
    bounds work per question whatever the degree of a node; when one cut
    something, the explanation records it (coqa.explanation.CapCut)."""

    one_hop_nodes: int = 5
    # Of those, a node whose link score is below this share of the best score among the terms
    # of its own mention span gets no candidates: a homonym or a literal spelling the same
    # words (`<乌克兰_（游戏人物）>` beside `<乌克兰>`) costs the store's queries without being
    # the answer. On pkubase-bench no gold node in the top five of the last 1,220 train
    # questions lies below 0.3 of its span's best; 0 turns the cut off.
    link_score_margin: float = 0.1
    chain_nodes: int = 3
    star_nodes: int = 5
    # Predicates expanded per node and direction, the most relevant to the question first.
    predicates_per_direction: int = 30
    # Answers are fetched for an expanded predicate with at most this many (the store counts
    # them first); a larger one gets candidates that carry only the store's count. No query
    # is cut by a LIMIT, so every engine returns the same rows.
    answers_per_predicate: int = 500
    # Answers fetched per node and direction: the expanded predicates, most relevant first,
    # whose counted answers fit (the others get count-only candidates); chains start from the
    # first hops whose middle nodes fit. Twice answers_per_predicate, so the most relevant
    # one always fits; no pkubase-bench node reaches it (the most: 732, 日本).
    answers_per_node: int = 1000
    # First-hop predicates per node and chain shape whose two-hop paths are counted.
    chain_predicates: int = 10
    # chain_out_in walks every edge into its middle nodes: a first hop through a middle node with
    # more edges arriving than this is not counted (a synthetic hub's 85,000 took 3 s at 10M).
    # Its discovery walks at most this many paths; only when it reaches them are the middle nodes'
    # edges counted, one by one. No pkubase-bench node reached by a first hop has that many (the
    # most: 6,162 into 阿根廷; <人物>'s 12,112 are all <类型>, never a chain's first hop).
    chain_middle_edges: int = 10000
    # Predicate pairs per node and chain shape kept for candidates, the most relevant first.
    chain_pairs: int = 30
    # Paths fetched per node and chain shape (the rarer the shape in CCKS, the less it may
    # cost): first-hop predicates, most relevant first, whose counted paths fit.
    chain_rows: Mapping[str, int] = field(
        default_factory=lambda: {"chain_out_out": 1500, "chain_in_out": 1000, "chain_out_in": 300}
    )
    # A two-constraint star (star_in_in) with at most this many answers gets star_in_in_out
    # candidates: the predicates leaving those answers, up to star_hop_predicates of them per
    # star, the most relevant first (each with at most answers_per_predicate objects).
    star_hop_middles: int = 3
    star_hop_predicates: int = 10
    max_candidates: int = 600
    # Comma-separated shape names (coqa.shapes) to generate; empty: every shape.
    # `coqa train` on an NLPCC file records the shapes its gold queries have.
    shapes: str = ""

    def allows(self, shape_name: str) -> bool:
        """True when candidates of this shape are generated."""
        return not self.shapes or shape_name in self.shapes.split(",")


@dataclass(frozen=True)
class LinkingSettings:
    max_targets_per_mention: int = 12
    # Shortest span of a question matched against the mention index. `coqa
    # train` on an NLPCC file lowers it to 1 when a gold subject is one character.
    min_mention_length: int = 2
    # Mentions of names written by sound or shortened (coqa.mentions.name_variants). `coqa
    # train` on an NLPCC file turns them on; the default leaves PKU BASE linking unchanged.
    name_variants: bool = False


@dataclass(frozen=True)
class RankingSettings:
    """Constants of the ranking features (a model is trained with them)."""

    strong_link: float = 0.3
    association_smoothing: float = 5.0
    # The p_name_assoc features (question wording against the pieces of predicate
    # names, coqa.ranking.keys.name_pieces). `coqa train` on an NLPCC file turns them
    # on; on CCKS held-out train they lowered F1, so they are off by default.
    name_associations: bool = False


@dataclass(frozen=True)
class BoosterSettings:
    """A LightGBM model: `objective` is binary (pointwise) or lambdarank (grouped by question)."""

    objective: str = "binary"
    rounds: int = 300
    learning_rate: float = 0.08
    num_leaves: int = 31
    min_data_in_leaf: int = 20
    lambda_l2: float = 0.0
    # Models averaged (coqa.boosting.fit_scorer); above 1, each round of each is fitted on this share of the questions.
    bags: int = 1
    bag_fraction: float = 0.8


@dataclass(frozen=True)
class TrainingSettings:
    seed: int = 0
    folds: int = 5
    positive_f1: float = 0.5  # a candidate is right when its answers reach this F1 and the question's best
    # binary: one pointwise model scores and orders the linked terms; lambdarank: a listwise model with
    # graded labels (gold entity over gold value) orders them and a pointwise one with the same tree settings
    # scores them (the ranker reads the score). Chosen on held-out train questions (docs/MEASUREMENTS.md, "The order of linked terms").
    linker: BoosterSettings = field(default_factory=lambda: BoosterSettings("lambdarank"))
    # LambdaRank ranked better than the pointwise model on held-out train folds (README, "Learning to rank"; docs/MEASUREMENTS.md).
    ranker: BoosterSettings = field(default_factory=lambda: BoosterSettings("lambdarank", num_leaves=63, lambda_l2=1.0))


ALGORITHM_SECTIONS = ("query_generation", "linking", "ranking", "training")
OBJECTIVES = ("binary", "lambdarank")


@dataclass(frozen=True)
class Settings:
    backend: str = "oxigraph"
    store: str = ""
    endpoint: str = ""
    gstore_url: str = ""
    gstore_db: str = ""
    gstore_user: str = "root"
    gstore_password: str = "123456"
    mention_index: str = ""
    model: str = ""
    cache_dir: str = "~/.cache/coqa"
    timeout: float = 10.0
    retries: int = 2
    retry_backoff: float = 0.5
    # Rows of recently sent queries kept in memory, for questions that send them again (0: none): for a whole
    # run of answer/eval/train; by `coqa serve` for kb_cache_seconds (0: for the question that asked only).
    kb_cache_rows: int = 100_000
    kb_cache_seconds: float = 300.0
    hanlp: bool = False
    log_level: str = "WARNING"
    query_generation: QueryGenerationSettings = field(default_factory=QueryGenerationSettings)
    linking: LinkingSettings = field(default_factory=LinkingSettings)
    ranking: RankingSettings = field(default_factory=RankingSettings)
    training: TrainingSettings = field(default_factory=TrainingSettings)
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

    @property
    def cache_path(self) -> Path:
        return Path(os.path.expanduser(self.cache_dir))

    @property
    def model_path(self) -> Path:
        return Path(os.path.expanduser(self.model)) if self.model else DEFAULT_MODEL


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
    settings = Settings()
    config_file = config_file or environ.get("COQA_CONFIG")
    if config_file:
        settings = settings.with_overrides(read_config_file(config_file), str(config_file))
    settings = settings.with_overrides(environment_overrides(environ), "environment")
    return settings.with_overrides(flags or {}, "command line")
