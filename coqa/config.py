"""Settings: built-in defaults < `--config FILE` < COQA_* environment < flags.

The built-in defaults are the values in the packaged coqa/config.yaml, which
documents every key (a test keeps the two equal).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Mapping

import yaml

from coqa.resources import DEFAULT_MODEL

BACKENDS = ("oxigraph", "sparql", "gstore")


class ConfigError(ValueError):
    """A setting that cannot be used; the message names the key and the fix."""


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
    hanlp: bool = False
    log_level: str = "WARNING"

    def with_overrides(self, values: Mapping[str, Any], source: str) -> "Settings":
        """A copy with `values` applied; unknown keys and bad types raise ConfigError."""
        known = {f.name: f for f in fields(self)}
        changes: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                raise ConfigError(f"{source}: unknown setting {key!r} (known: {', '.join(known)})")
            if value is None:
                continue
            changes[key] = _coerce(key, known[key].type, value, source)
        settings = replace(self, **changes)
        if settings.backend not in BACKENDS:
            raise ConfigError(f"{source}: backend must be one of {', '.join(BACKENDS)}, not {settings.backend!r}")
        return settings

    @property
    def cache_path(self) -> Path:
        return Path(os.path.expanduser(self.cache_dir))

    @property
    def model_path(self) -> Path:
        return Path(os.path.expanduser(self.model)) if self.model else DEFAULT_MODEL


def _coerce(key: str, type_name: Any, value: Any, source: str) -> Any:
    type_name = type_name if isinstance(type_name, str) else type_name.__name__
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


def environment_overrides(environ: Mapping[str, str]) -> dict[str, str]:
    """COQA_<KEY> variables as settings (COQA_CONFIG names the file, not a key)."""
    names = {f.name for f in fields(Settings)}
    return {
        key[5:].lower(): value
        for key, value in environ.items()
        if key.startswith("COQA_") and key[5:].lower() in names
    }


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
