"""Each stage on its own, on the shipped demo knowledge base: mention
detection, entity linking, query generation, ranking features, training and
the model directory (saved, loaded, refused when out of date)."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from coqa.boosting import BoostedScorer, FeatureMismatch, feature_matrix, fit_scorer
from coqa.config import ConfigError, Settings, default_settings
from coqa.dataset import read_ccks
from coqa.kb.demo import DEMO_DIR, ensure_demo_store
from coqa.kb.names import Term
from coqa.kb.surfaces import base_name, qualifier
from coqa.linking.linker import (
    LINK_FEATURES,
    EntityLinker,
    LinkCandidate,
    LinkedNode,
    best_links,
)
from coqa.mentions.detection import Mention, normalize_question
from coqa.model import ModelError, TrainedModel
from coqa.model_folder import META_FILE
from coqa.pipeline import Pipeline
from coqa.ranking.features import RANK_FEATURES
from coqa.ranking.ranker import QueryRanker
from coqa.shapes import CHAIN, COUNT, ONE_HOP_OUT, SHAPES_BY_NAME
from coqa.training import Trainer, link_label

DEMO_CCKS = DEMO_DIR / "questions.ccks.txt"
STAR = Term.entity("周星驰")


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return replace(default_settings(), store=str(ensure_demo_store(tmp_path_factory.mktemp("cache"))))


@pytest.fixture(scope="module")
def bare(settings: Settings) -> Pipeline:
    return Pipeline.without_model(settings)


@pytest.fixture(scope="module")
def model_dir(settings: Settings, bare: Pipeline, tmp_path_factory: pytest.TempPathFactory) -> Path:
    model, _ = Trainer(bare, settings).train(read_ccks(DEMO_CCKS))
    path = tmp_path_factory.mktemp("model") / "demo"
    model.save(path)
    return path


@pytest.fixture(scope="module")
def trained(bare: Pipeline, model_dir: Path) -> TrainedModel:
    return TrainedModel.load(model_dir, bare.templates)


def _node(term: Term, start: int, end: int, surface: str, score: float = 0.9) -> LinkedNode:
    return LinkedNode(term, score, start, end, surface)


def test_mentions_find_an_alias_from_mention2ent(bare: Pipeline) -> None:
    mentions = bare.detect(normalize_question("星爷的身高是多少？"))
    alias = next(m for m in mentions if m.surface == "星爷")
    assert (alias.start, alias.end) == (0, 2)
    assert any(entry.target == "周星驰" and entry.rank == 1 for entry in alias.entries)


def test_one_qualifier_rule_for_names() -> None:
    assert (base_name("李白_（唐朝诗人）"), qualifier("李白_（唐朝诗人）")) == ("李白", "唐朝诗人")
    assert (base_name("李白_(唐朝诗人)"), qualifier("李白_(唐朝诗人)")) == ("李白", "唐朝诗人")
    assert (base_name("故宫博物院（故宫）"), qualifier("故宫博物院（故宫）")) == ("故宫博物院", "")


def test_the_linker_scores_its_own_candidates(bare: Pipeline, trained: TrainedModel, settings: Settings) -> None:
    linker = EntityLinker(bare.kb, bare.templates, trained.linker, settings.linking)
    text = normalize_question("星爷的身高是多少？")
    linking = linker.link(text, bare.detect(text))
    assert linking.linked[0].term == STAR
    assert all(candidate.features.keys() == set(LINK_FEATURES) for candidate in linking.candidates)
    assert len(linking.scores) == len(linking.candidates) and all(0.0 < s < 1.0 for s in linking.scores)


def test_the_linker_judges_how_the_facts_around_a_term_fit_the_question(bare: Pipeline, trained: TrainedModel, settings: Settings) -> None:
    linker = EntityLinker(bare.kb, bare.templates, trained.linker, settings.linking)
    text = normalize_question("周星驰的身高是多少？")
    star = next(c for c in linker.candidates(text, bare.detect(text)) if c.term == STAR)
    # The content characters outside the mention are 身高; <周星驰> has a <身高> fact.
    assert star.features["t_context"] == 1.0 and star.features["t_context_gap"] == 0.0
    text = normalize_question("周星驰的母校是哪里？")
    star = next(c for c in linker.candidates(text, bare.detect(text)) if c.term == STAR)
    assert star.features["t_context"] < 1.0


def test_query_generation_instantiates_registered_shapes_with_their_answers(bare: Pipeline) -> None:
    node = _node(STAR, 0, 3, "周星驰")
    candidates = bare.generator.generate([node])
    height = [c for c in candidates if c.shape is ONE_HOP_OUT and c.predicates == ("身高",)]
    assert height and height[0].answers == (Term.literal("174cm"),)
    assert any(c.shape.family == CHAIN for c in candidates)
    assert not any(c.shape.family == COUNT for c in candidates)
    counted = [c for c in bare.generator.generate([node], count_question=True) if c.shape.family == COUNT]
    assert counted and all(SHAPES_BY_NAME[c.shape.counts or ""].name == c.shape.counts for c in counted)


def test_ranking_features_are_exactly_the_declared_ones(bare: Pipeline, trained: TrainedModel, settings: Settings) -> None:
    text = normalize_question("周星驰的身高是多少？")
    linked = [_node(STAR, 0, 3, "周星驰")]
    candidates = bare.generator.generate(linked)
    rows = QueryRanker(trained.ranker, settings.ranking).featurize(text, linked, candidates)
    for candidate, row in zip(candidates, rows):
        assert row.keys() == set(RANK_FEATURES)
        assert [name for name in RANK_FEATURES if name.startswith("shape_") and row[name]] == [candidate.shape.feature]
    ranked = QueryRanker(trained.ranker, settings.ranking).rank(text, linked, candidates)
    assert ranked[0][1].predicates == ("身高",)


def test_a_row_missing_a_feature_is_an_error_not_a_zero() -> None:
    row = dict.fromkeys(RANK_FEATURES, 0.0)
    del row["shape_star3_in"]
    with pytest.raises(FeatureMismatch, match="features missing: shape_star3_in"):
        feature_matrix([row], RANK_FEATURES)


def test_a_row_with_an_unknown_feature_is_an_error_whether_or_not_one_is_missing() -> None:
    good = dict.fromkeys(RANK_FEATURES, 0.0)
    extra = {**good, "not_a_feature": 1.0}
    swapped = {**extra}
    del swapped["shape_star3_in"]
    with pytest.raises(FeatureMismatch, match="features missing: none; unknown: not_a_feature"):
        feature_matrix([good, extra], RANK_FEATURES)
    with pytest.raises(FeatureMismatch, match="features missing: shape_star3_in; unknown: not_a_feature"):
        feature_matrix([good, swapped], RANK_FEATURES)
    assert feature_matrix([good, good], RANK_FEATURES).shape == (2, len(RANK_FEATURES))


def test_linked_terms_come_in_the_order_given_with_the_scores_given() -> None:
    def candidate(term: Term, start: int, end: int) -> LinkCandidate:
        return LinkCandidate(term, Mention(start, end, "x" * (end - start), (), frozenset()))

    value = Term.literal("5A")
    candidates = [candidate(value, 0, 2), candidate(STAR, 3, 6), candidate(STAR, 3, 5)]
    linked = best_links(candidates, scores=[0.9, 0.6, 0.8], order=[0.5, 0.7, 0.2])
    # The entity's node comes from its candidate first in order, with that candidate's score.
    assert [(n.term, n.score, n.end) for n in linked] == [(STAR, 0.6, 6), (value, 0.9, 2)]


def test_a_gold_entity_is_graded_above_a_gold_value() -> None:
    gold = {STAR, Term.literal("5A")}
    assert [link_label(t, gold) for t in (STAR, Term.literal("5A"), Term.entity("刘德华"))] == [2, 1, 0]


@pytest.mark.parametrize("objective", ["binary", "lambdarank"])
def test_graded_labels_train_both_objectives(objective: str) -> None:
    # Each question: a wrong term (x=0), a gold value (x=1), a gold entity (x=2).
    rows = [{"x": float(x)} for _ in range(40) for x in (0, 1, 2)]
    labels = [0, 1, 2] * 40
    scorer = fit_scorer(rows, labels, [3] * 40, ["x"], replace(default_settings().training.linker, objective=objective, rounds=20, min_data_in_leaf=1), seed=0)
    wrong, value, entity = scorer.score([{"x": 0.0}, {"x": 1.0}, {"x": 2.0}])
    assert wrong < value and wrong < entity
    if objective == "lambdarank":  # the pointwise model reads both positive grades as right
        assert value < entity


@pytest.mark.parametrize("objective", ["binary", "lambdarank"])
def test_a_bagged_scorer_scores_with_the_mean_of_its_members_and_saves_each(objective: str, tmp_path: Path) -> None:
    rows = [{"x": float(x), "y": float((x * 7 + q) % 5)} for q in range(60) for x in (0, 1, 2)]
    labels = [0, 1, 2] * 60
    settings = replace(default_settings().training.linker, objective=objective, rounds=20, min_data_in_leaf=1, bags=3, bag_fraction=0.5)
    bagged = fit_scorer(rows, labels, [3] * 60, ["x", "y"], settings, seed=4)
    assert [booster.params["seed"] for booster in bagged.boosters] == [12, 13, 14]
    assert bagged.save(tmp_path / "ranker.txt") == ["ranker.txt", "ranker.1.txt", "ranker.2.txt"]
    loaded = BoostedScorer.load(tmp_path / "ranker.txt")
    probe = [{"x": 0.0, "y": 1.0}, {"x": 2.0, "y": 3.0}]
    assert loaded.score(probe) == bagged.score(probe)
    raw = [sum(b.predict(bagged.matrix(probe), raw_score=objective == "lambdarank")[i] for b in bagged.boosters) / 3 for i in (0, 1)]
    if objective == "lambdarank":
        raw = [1.0 / (1.0 + math.exp(-value)) for value in raw]
    assert loaded.score(probe) == pytest.approx(raw)
    one = fit_scorer(rows, labels, [3] * 60, ["x", "y"], replace(settings, bags=1), seed=4)
    assert len(one.boosters) == 1 and one.save(tmp_path / "one.txt") == ["one.txt"]


def test_bags_must_be_positive_and_their_share_a_fraction() -> None:
    with pytest.raises(ConfigError, match="bags must be at least 1"):
        default_settings().with_overrides({"training": {"ranker": {"bags": 0}}}, "test")
    with pytest.raises(ConfigError, match="bag_fraction in"):
        default_settings().with_overrides({"training": {"ranker": {"bag_fraction": 1.5}}}, "test")


def test_training_records_its_settings_and_learns_the_demo(model_dir: Path, trained: TrainedModel, settings: Settings) -> None:
    meta = json.loads((model_dir / META_FILE).read_text(encoding="utf-8"))
    assert meta["settings"] == settings.algorithm()
    assert meta["features"] == {"linker": list(LINK_FEATURES), "ranker": list(RANK_FEATURES)}
    assert meta["figures"]["questions"] == len(read_ccks(DEMO_CCKS)) and meta["figures"]["positives"] > 0
    assert not list(model_dir.glob("*.pkl")) and trained.linker.scorer is not None


def test_a_saved_model_scores_like_the_trained_one(bare: Pipeline, settings: Settings, tmp_path: Path) -> None:
    model, _ = Trainer(bare, settings).train(read_ccks(DEMO_CCKS)[:20])
    model.save(tmp_path / "m")
    loaded = TrainedModel.load(tmp_path / "m", bare.templates)
    rows = [dict.fromkeys(LINK_FEATURES, 1.0), dict.fromkeys(LINK_FEATURES, 0.0)]
    assert loaded.linker.scorer.score(rows) == model.linker.scorer.score(rows)
    assert model.linker.order_scorer is not None and loaded.linker.order_scorer is not None
    assert loaded.linker.order_scorer.score(rows) == model.linker.order_scorer.score(rows)
    assert loaded.linker.keyphraseness == model.linker.keyphraseness


def _copy(model_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    return copy


def _edit_meta(path: Path, **changes: object) -> None:
    meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    meta.update(changes)
    (path / META_FILE).write_text(json.dumps(meta), encoding="utf-8")


def test_a_model_with_other_feature_names_is_refused_naming_them(bare: Pipeline, model_dir: Path, tmp_path: Path) -> None:
    copy = _copy(model_dir, tmp_path)
    _edit_meta(copy, features={"linker": list(LINK_FEATURES), "ranker": [*RANK_FEATURES[1:], "old_feature"]})
    with pytest.raises(ModelError) as refused:
        TrainedModel.load(copy, bare.templates)
    message = str(refused.value)
    assert "\n" not in message and "is out of date: ranker features differ" in message
    assert f"the model lacks {RANK_FEATURES[0]}, the code has no old_feature" in message and "retrain" in message


def test_a_model_trained_with_other_templates_is_refused(bare: Pipeline, model_dir: Path, tmp_path: Path) -> None:
    copy = _copy(model_dir, tmp_path)
    _edit_meta(copy, template_digest="0" * 64)
    with pytest.raises(ModelError, match="out of date: the query templates changed since it was trained; retrain"):
        TrainedModel.load(copy, bare.templates)


def test_a_model_of_another_format_or_a_pickle_is_refused(bare: Pipeline, model_dir: Path, tmp_path: Path) -> None:
    copy = _copy(model_dir, tmp_path)
    _edit_meta(copy, format_version=1)
    with pytest.raises(ModelError, match="has format 1, this coqa .* reads format 3"):
        TrainedModel.load(copy, bare.templates)
    pickle_file = tmp_path / "default.pkl"
    pickle_file.write_bytes(b"\x80\x05.")
    with pytest.raises(ModelError, match="is not a coqa model directory"):
        TrainedModel.load(pickle_file, bare.templates)


def test_the_pipeline_uses_the_models_settings_unless_overridden(model_dir: Path, settings: Settings, tmp_path: Path) -> None:
    copy = _copy(model_dir, tmp_path)
    recorded = settings.with_overrides({"query_generation": {"max_candidates": 11}}, "test").algorithm()
    _edit_meta(copy, settings=recorded)
    assert Pipeline.from_settings(settings.with_overrides({"model": str(copy)}, "test")).generator.limits.max_candidates == 11
    explicit = settings.with_overrides({"model": str(copy), "query_generation": {"max_candidates": 9}}, "test")
    assert Pipeline.from_settings(explicit).generator.limits.max_candidates == 9
