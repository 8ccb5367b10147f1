"""The shipped demo knowledge base: loaded once into the cache, safe under
concurrent first use, and its CCKS questions' gold answers are exactly what
their gold SPARQL returns on it."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from coqa.dataset import read_ccks, read_question_file
from coqa.kb import INDEX_SUBDIR, MANIFEST, STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.demo import DEMO_CCKS, DEMO_QUESTIONS, demo_fingerprint, ensure_demo_store
from coqa.kb.mention_index import MENTION, MentionIndex


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_demo_store(tmp_path_factory.mktemp("cache"))


def test_loaded_once_then_reused(tmp_path: Path) -> None:
    store = ensure_demo_store(tmp_path)
    assert store == tmp_path / f"demo-{demo_fingerprint()}"
    manifest = store / MANIFEST
    stamp = manifest.stat().st_mtime_ns
    assert ensure_demo_store(tmp_path) == store
    assert manifest.stat().st_mtime_ns == stamp
    assert sorted(p.name for p in tmp_path.iterdir()) == [store.name]


def test_demo_files_load_without_rejects(demo_store: Path) -> None:
    [load] = json.loads((demo_store / MANIFEST).read_text(encoding="utf-8"))["loads"]
    for file in load["files"]:
        assert file["lines"] == file["loaded"] > 0, file
    assert not (demo_store / "rejects.tsv").exists()


def _first_use(cache: str) -> str:
    return str(ensure_demo_store(Path(cache)))


def test_concurrent_first_use_yields_one_good_store(tmp_path: Path) -> None:
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        paths = pool.map(_first_use, [str(tmp_path)] * 2)
    assert len(set(paths)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(paths[0]).name]
    store = OxigraphStore(Path(paths[0]) / STORE_SUBDIR)
    try:
        assert store.select("select ?x where { <周杰伦> <妻子> ?x . }").column()[0].value == "昆凌"
    finally:
        store.close()


def test_gold_sparql_gives_exactly_the_gold_answers(demo_store: Path) -> None:
    questions = read_ccks(DEMO_CCKS)
    assert len(questions) >= 40
    store = OxigraphStore(demo_store / STORE_SUBDIR)
    try:
        for question in questions:
            answers = sorted(str(term) for term in store.select(question.sparql).column())
            assert answers == sorted(question.answers), question
    finally:
        store.close()


def test_demo_questions_and_shapes() -> None:
    questions = read_question_file(DEMO_QUESTIONS).questions
    assert 8 <= len(questions) <= 15 and all(questions)
    sparql = " ".join(q.sparql for q in read_ccks(DEMO_CCKS))
    for shape in ["<2008年北京奥运会 >", "<类型>", '<誉称> "', "<徐峥> ?x <陶虹>", '"嫦娥一号"卫星']:
        assert shape in sparql, shape


def test_mentions_include_aliases_and_an_ambiguous_mention(demo_store: Path) -> None:
    index = MentionIndex.open(demo_store / INDEX_SUBDIR)
    ranks = {(e.target, e.rank) for e in index.lookup("流浪地球") if e.kind == MENTION}
    assert ranks == {("流浪地球_（2019年郭帆执导的电影）", 1), ("流浪地球_（刘慈欣创作的短篇科幻小说）", 2)}
    assert {e.target for e in index.lookup("北京奥运会") if e.kind == MENTION} == {"2008年北京奥运会"}  # targets are canonical names
    assert {e.target for e in index.lookup("星爷") if e.kind == MENTION} == {"周星驰"}
