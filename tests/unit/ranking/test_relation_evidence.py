"""Relation evidence (coqa.ranking.relation_evidence): the (wording, predicate
name) pairs of another labelled question file, the features a candidate's
path gets from the paraphrases fitted on them, the part in the model
directory, and `coqa train --relation-evidence`. All questions are invented."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from coqa.cli.main import main
from coqa.config import default_settings
from coqa.dataset import GoldQuestion, nlpcc_gold_sparql
from coqa.kb.demo import DEMO_DIR, ensure_demo_store
from coqa.kb.names import Term
from coqa.linking.linker import LinkedNode
from coqa.querygen.candidate import Candidate
from coqa.ranking.context import QuestionContext
from coqa.ranking.features import RANK_FEATURES, rank_features
from coqa.ranking.relation_evidence import (
    RELATION_EVIDENCE_FEATURES,
    RelationEvidence,
    evidence_pairs,
    relation_evidence_features,
)  # fmt: skip
from coqa.ranking.wording import remove_spans
from coqa.shapes import CHAIN_OUT_OUT, ONE_HOP_OUT

# (question, subject, predicate): how an invented question file words a few relations.
RECORDS = [
    ("长河大桥有多长?", "长河大桥", "全长"), ("青山隧道全长多少米?", "青山隧道", "全长"), ("白云路有多长呢", "白云路", "长度"),
    ("小明的老婆是谁?", "小明", "妻子"), ("张三的老婆叫什么", "张三", "配偶"), ("李四的妻子是谁", "李四", "妻子"),
    ("王五是在哪里出生的?", "王五", "出生地"), ("赵六出生在哪里", "赵六", "出生地"), ("孙七的出生地是哪", "孙七", "出生地"),
    ("红楼是哪一年建成的", "红楼", "建成时间"), ("绿塔哪年建的?", "绿塔", "建造时间"), ("蓝桥是什么时候建成的", "蓝桥", "建成时间"),
]  # fmt: skip
QUESTIONS = [GoldQuestion(i, q, nlpcc_gold_sparql(s, p), ()) for i, (q, s, p) in enumerate(RECORDS, start=1)]

PERSON = LinkedNode(Term.entity("周八_（演员）"), 0.9, 0, 2, "周八")


def features(evidence: RelationEvidence, question: str, predicates: tuple[str, ...]) -> dict[str, float]:
    shape = CHAIN_OUT_OUT if len(predicates) == 2 else ONE_HOP_OUT
    candidate = Candidate(shape, {}, (PERSON,), predicates, (Term.entity("某处"),))
    context = QuestionContext(question, (PERSON,), {}, np.zeros(0))
    return relation_evidence_features(candidate, remove_spans(question, [(PERSON.start, PERSON.end)]), evidence, context)


def test_pairs_mark_out_the_subject_and_pair_the_wording_with_the_predicate_name() -> None:
    pairs = evidence_pairs(QUESTIONS[:2])
    assert pairs == [("||||有多长?", "全长"), ("||||全长多少米?", "全长")]


def test_a_pkubase_subject_is_marked_out_by_its_name_without_qualifier() -> None:
    question = GoldQuestion(1, "《李白》是谁唱的？", "select ?x where { <李白_（李荣浩演唱歌曲）> <演唱者> ?x . }", ())
    assert evidence_pairs([question]) == [("《||》是谁唱的?", "演唱者")]


def test_a_question_that_does_not_write_its_subject_gives_no_pair() -> None:
    assert evidence_pairs([GoldQuestion(1, "它有多长?", nlpcc_gold_sparql("长河大桥", "全长"), ())]) == []
    with pytest.raises(ValueError, match="no \\(wording, predicate\\) pair"):
        RelationEvidence.fit([GoldQuestion(1, "它有多长?", nlpcc_gold_sparql("长河大桥", "全长"), ())])


def test_the_predicate_the_evidence_words_so_scores_above_the_others() -> None:
    evidence = RelationEvidence.fit(QUESTIONS)
    question = "周八的老婆是谁?"  # a subject and a question the evidence never saw
    spouse, birthplace, length = (features(evidence, question, (p,)) for p in ("配偶", "出生地", "全长"))
    for name in RELATION_EVIDENCE_FEATURES:
        assert spouse[name] > birthplace[name] and spouse[name] > length[name], name


def test_a_chain_is_as_strong_as_its_weakest_predicate_and_answers_with_its_last() -> None:
    evidence = RelationEvidence.fit(QUESTIONS)
    question = "周八的老婆是在哪里出生的"
    chain = features(evidence, question, ("妻子", "出生地"))
    birthplace, spouse = features(evidence, question, ("出生地",)), features(evidence, question, ("妻子",))
    assert chain["p_evidence_name_last"] == birthplace["p_evidence_name_last"]
    assert chain["p_evidence_name_min"] == min(birthplace["p_evidence_name_last"], spouse["p_evidence_name_last"])
    assert chain["p_evidence_wording"] > max(birthplace["p_evidence_wording"], spouse["p_evidence_wording"])  # both names explain it


def test_scoring_against_one_wording_gives_exactly_the_figures_of_each_pair() -> None:
    paraphrases = RelationEvidence.fit(QUESTIONS).paraphrases
    for wording in ("|的老婆是在哪里出生的", "||有多长", "", "||"):
        against = paraphrases.against(wording)
        for name in ("配偶", "出生地", "妻子出生地", "全长", "从未见过", "", "出生地"):  # the repeated name reads the memo
            assert (against.name_score(name), against.path_wording_score((name,))) == paraphrases.scores(wording, name)
        # A path's names together, summed on from the kept sums of its first names: the bits of the joined name.
        for path in (("妻子", "出生地"), ("配偶", "全长"), ("妻子", "配偶"), ("", "全长")):
            assert against.path_wording_score(path) == paraphrases.scores(wording, "".join(path))[1]


def test_the_evidence_round_trips_through_the_model_directory(tmp_path: Path) -> None:
    evidence = RelationEvidence.fit(QUESTIONS)
    assert evidence.save(tmp_path) == "relation_evidence.json"
    loaded = RelationEvidence.load(tmp_path)
    assert loaded.digest == evidence.digest == RelationEvidence.fit(QUESTIONS).digest
    assert features(loaded, "周八出生在哪", ("出生地",)) == features(evidence, "周八出生在哪", ("出生地",))
    assert RelationEvidence.fit(QUESTIONS[:6]).digest != evidence.digest


def test_the_part_is_the_same_bytes_under_any_hash_seed(tmp_path: Path) -> None:
    source = nlpcc_file(tmp_path / "evidence.txt", RECORDS)
    fit = (
        "import sys; from pathlib import Path; from coqa.dataset import read_gold_questions; "
        "from coqa.ranking.relation_evidence import RelationEvidence; "
        "RelationEvidence.fit(read_gold_questions(sys.argv[1])).save(Path(sys.argv[2]))"
    )
    for seed in ("1", "2"):
        (tmp_path / seed).mkdir()
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", fit, str(source), str(tmp_path / seed)], check=True, env=environment, timeout=120)
    assert (tmp_path / "1" / "relation_evidence.json").read_bytes() == (tmp_path / "2" / "relation_evidence.json").read_bytes()


def test_the_features_are_the_rankers_only_with_the_setting() -> None:
    assert rank_features(default_settings().ranking) == RANK_FEATURES
    with_evidence = rank_features(replace(default_settings().ranking, relation_evidence=True))
    assert with_evidence[: len(RANK_FEATURES)] == RANK_FEATURES
    assert set(with_evidence) - set(RANK_FEATURES) == {*RELATION_EVIDENCE_FEATURES, "gap_p_evidence_name_last", "gap_p_evidence_wording"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(ensure_demo_store(tmp_path_factory.mktemp("cache")))


def nlpcc_file(path: Path, records: list[tuple[str, str, str]]) -> Path:
    blocks = [f"<question id={i}>\t{q}\n<triple id={i}>\t{s} ||| {p} ||| 某值\n<answer id={i}>\t某值\n=====" for i, (q, s, p) in enumerate(records, 1)]
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


def test_train_with_relation_evidence_ships_it_and_records_its_digest(store: str, tmp_path: Path, capsys) -> None:
    model = tmp_path / "model"
    evidence = nlpcc_file(tmp_path / "evidence.txt", RECORDS)
    args = ["train", str(DEMO_DIR / "questions.ccks.txt"), "-o", str(model), "--store", store, "--limit", "8"]
    assert main([*args, "--relation-evidence", str(evidence)]) == 0
    meta = json.loads((model / "meta.json").read_text(encoding="utf-8"))
    assert meta["settings"]["ranking"]["relation_evidence"] is True
    assert meta["relation_evidence_digest"] == RelationEvidence.fit(QUESTIONS).digest
    assert "relation_evidence.json" in meta["files"] and set(RELATION_EVIDENCE_FEATURES) <= set(meta["features"]["ranker"])
    assert main(["ask", "周星驰的身高是多少？", "--store", store, "--model", str(model)]) == 0
    (model / "relation_evidence.json").unlink()
    capsys.readouterr()
    assert main(["ask", "周星驰的身高是多少？", "--store", store, "--model", str(model)]) != 0
    assert "relation_evidence.json" in capsys.readouterr().err


def test_train_refuses_an_evidence_file_without_pairs_and_the_setting_without_a_file(
    store: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    args = ["train", str(DEMO_DIR / "questions.ccks.txt"), "-o", str(tmp_path / "model"), "--store", store, "--limit", "8"]
    useless = nlpcc_file(tmp_path / "useless.txt", [("它有多长?", "长河大桥", "全长")])
    assert main([*args, "--relation-evidence", str(useless)]) == 2
    assert "no (wording, predicate) pair" in capsys.readouterr().err
    monkeypatch.setenv("COQA_RANKING__RELATION_EVIDENCE", "true")
    assert main(args) == 2
    assert "--relation-evidence FILE" in capsys.readouterr().err
    assert not (tmp_path / "model").exists()
