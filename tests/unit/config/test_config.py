"""Settings: defaults = config.yaml, then --config file, then COQA_* variables, then flags."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.config import (
    ConfigError,
    Settings,
    _build,
    default_settings,
    load_settings,
    read_config_file,
)
from coqa.resources import DEFAULT_CONFIG_FILE


def _nested_keys(value: object, prefix: str = "") -> set[str]:
    """Every dotted key of a settings dataclass or of a mapping read from YAML (mapping settings count as leaves)."""
    if is_dataclass(value):
        items = {f.name: getattr(value, f.name) for f in fields(value) if f.name != "explicit"}
    elif isinstance(value, dict) and prefix.rstrip(".") != "query_generation.chain_rows":
        items = value
    else:
        return {prefix.rstrip(".")}
    return set().union(*(_nested_keys(item, f"{prefix}{key}.") for key, item in items.items()))


def test_config_yaml_holds_every_nested_setting_and_nothing_else() -> None:
    data = read_config_file(DEFAULT_CONFIG_FILE)
    assert _nested_keys(data) == _nested_keys(default_settings())
    assert "query_generation.answers_per_node" in _nested_keys(data) and "ranking.name_associations" in _nested_keys(data)


def test_a_defaults_file_lacking_a_key_is_refused(tmp_path: Path) -> None:
    data = read_config_file(DEFAULT_CONFIG_FILE)
    del data["training"]["ranker"]["num_leaves"]
    with pytest.raises(ConfigError, match="missing settings training.ranker.num_leaves"):
        _build(Settings, data, "defaults", "")


def test_algorithm_sections_nest_in_files_and_environment(tmp_path: Path) -> None:
    config = tmp_path / "coqa.yaml"
    config.write_text("training:\n  ranker:\n    rounds: 40\nquery_generation:\n  chain_rows:\n    chain_out_in: 7\n", encoding="utf-8")
    settings = load_settings(config, environ={"COQA_TRAINING__SEED": "4"})
    assert (settings.training.ranker.rounds, settings.training.seed, settings.training.linker.rounds) == (40, 4, 300)
    assert settings.query_generation.chain_rows == {"chain_out_out": 1500, "chain_in_out": 1000, "chain_out_in": 7}
    assert settings.explicit == {"training.ranker.rounds", "training.seed", "query_generation.chain_rows"}


def test_a_models_recorded_settings_apply_unless_set_explicitly() -> None:
    recorded = default_settings().with_overrides({"query_generation": {"max_candidates": 50, "star_nodes": 2}}, "model").algorithm()
    mine = load_settings(environ={"COQA_QUERY_GENERATION__MAX_CANDIDATES": "70"})
    effective = mine.algorithm_for_model(recorded)
    assert (effective.query_generation.max_candidates, effective.query_generation.star_nodes) == (70, 2)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"training": {"sed": 1}}, "unknown setting 'training.sed'"),
        ({"training": 3}, "setting 'training' must be a mapping"),
        ({"training": {"ranker": {"objective": "pairwise"}}}, "objective must be one of binary, lambdarank"),
        ({"query_generation": {"chain_rows": [1]}}, "'query_generation.chain_rows' must be a mapping"),
    ],
)
def test_bad_algorithm_settings_are_one_line_errors(values: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        default_settings().with_overrides(values, "test")


def test_precedence_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "coqa.yaml"
    config.write_text("backend: sparql\nendpoint: http://file\ntimeout: 3\nretries: 5\n", encoding="utf-8")
    environ = {"COQA_ENDPOINT": "http://env", "COQA_RETRIES": "1", "COQA_HANLP": "yes", "HOME": "/x"}
    settings = load_settings(config, {"endpoint": "http://flag", "timeout": None}, environ)
    assert (settings.backend, settings.endpoint, settings.timeout, settings.retries, settings.hanlp) == (
        "sparql", "http://flag", 3.0, 1, True,
    )


def test_config_file_named_by_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("log_level: DEBUG\n", encoding="utf-8")
    assert load_settings(environ={"COQA_CONFIG": str(config)}).log_level == "DEBUG"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("storee: /tmp/x\n", "unknown setting 'storee'"),
        ("timeout: soon\n", "setting 'timeout' must be a float"),
        ("backend: virtuoso\n", "backend must be one of oxigraph, sparql, gstore"),
        ("- a\n- b\n", "must hold a mapping"),
        ("a: [\n", "not valid YAML"),
    ],
)
def test_bad_settings_are_named(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "bad.yaml"
    config.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        load_settings(config, environ={})


def test_bad_environment_value_is_a_one_line_cli_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COQA_HANLP", "maybe")
    assert main(["sparql", "select * where { ?s ?p ?o } limit 1"]) == 1
    assert capsys.readouterr().err.strip() == "coqa: error: environment: setting 'hanlp' must be a bool, not 'maybe'"


def test_config_option_works_before_and_after_the_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("backend: gstore\n", encoding="utf-8")
    for argv in (["--config", str(config), "sparql", "select ?x {}"], ["sparql", "select ?x {}", "--config", str(config)]):
        assert main(argv) == 1
        assert "the gstore backend needs a server URL" in capsys.readouterr().err
