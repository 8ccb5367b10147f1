"""The NLPCC KBQA task over the same pipeline: loading NLPCC KB files, reading
NLPCC question files, writing NLPCC submissions, NLPCC scoring, training and
answering end to end. The knowledge base and questions here are invented; the
last tests read ../shared/data/nlpcc-kbqa at run time (skipped without it)."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.config import ConfigError, default_settings
from coqa.dataset import (
    QuestionFormat,
    DatasetError,
    GoldQuestion,
    file_format,
    format_nlpcc_record,
    nlpcc_answers,
    nlpcc_gold_sparql,
    read_gold_questions,
    read_question_file,
)
from coqa.evaluation.metrics import nlpcc_kbqa_scores
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.backends.oxigraph_store import OxigraphStore
from coqa.kb.base import KBError
from coqa.kb.loading.formats import NLPCC_KB, LineError
from coqa.kb.loading.loader import load_kb
from coqa.kb.loading.nlpcc_reading import parse_nlpcc_line, regular_lines_as_pkubase
from coqa.kb.loading.sources import find_sources
from coqa.kb.mention_index import NAME, MentionIndex
from coqa.kb.names import Term, sparql_name
from coqa.linking.linker import LinkedNode
from coqa.querygen.generator import QueryGenerator
from coqa.templates import load_templates
from coqa.ranking.name_features import NAME_ASSOCIATION_FEATURES, PARAPHRASE_FEATURES
from coqa.ranking.paraphrase import PARAPHRASES_FILE
from coqa.resources import QUERIES_DIR
from coqa.training import nlpcc_training_settings

REPO_ROOT = Path(__file__).resolve().parents[2]
NLPCC_DIR = REPO_ROOT.parent / "shared" / "data" / "nlpcc-kbqa"
sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import synthetic  # noqa: E402

# Invented facts: books, bridges and towns that do not exist.
FACTS = [
    ("青石桥", "所在地", "临江县"),
    ("青石桥", "建成时间", "1921年"),
    ("临江县", "所属地区", "南山市"),
    ("南山市", "人口", "约120万"),
    ("星河旅人（小说）", "作者", "林秋"),
    ("星河旅人（小说）", "出版社", "北岸出版社"),
    ("林秋", "出生地", "临江县"),
    ("白鹭湖", "面积", "12.5平方公里"),
    ("白鹭湖", "所在地", "南山市"),
]


def nlpcc_lines(facts: list[tuple[str, str, str]]) -> str:
    return "".join(f"{s} ||| {p} ||| {o}\n" for s, p, o in facts)


def select(store: Path, sparql: str) -> list[list[str]]:
    kb = OxigraphStore(store / STORE_SUBDIR)
    try:
        return [[str(term) for term in row] for row in kb.select(sparql).rows]
    finally:
        kb.close()


# --- the KB: line rules, terms, accounting ------------------------------------


def test_an_nlpcc_line_becomes_an_entity_a_predicate_and_a_literal() -> None:
    triple, repairs = parse_nlpcc_line("青石桥 ||| 所在地 ||| 临江县\r")
    assert (triple.subject, triple.predicate, str(triple.object)) == ("青石桥", "所在地", '"临江县"')
    assert repairs == ["CRLF line end"]
    for bad, reason in [
        ("青石桥 ||| 所在地", "2 ' ||| '-separated field"),
        ("青石桥 ||| 别名 ||| 甲 ||| 乙", "' ||| ' inside a field"),
        (" ||| 所在地 ||| 临江县", "empty subject"),
        ("青石桥 |||   ||| 临江县", "empty predicate"),
        ("青石桥 ||| 所在地 |||  ", "empty object"),
    ]:
        with pytest.raises(LineError, match=reason):
            parse_nlpcc_line(bad)


def test_regular_lines_become_regular_pkubase_lines() -> None:
    assert regular_lines_as_pkubase("甲 ||| 乙 ||| 丙 丁\nA B ||| c ||| 1\n") == '<甲>\t<乙>\t"丙 丁" .\n<A B>\t<c>\t"1" .\n'


def test_loading_an_nlpcc_kb_accounts_for_every_line(tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    lines = nlpcc_lines(FACTS).encode("utf-8")
    lines += "青石桥 ||| 别名 ||| 老桥\n".encode("gb18030")  # repaired: GB18030 text
    lines += "\n".encode() + nlpcc_lines(FACTS[:1]).encode()  # blank, duplicate
    lines += 'A{B} ||| 备注 ||| 含"引号"与<尖括号>\\n\n'.encode()  # not on the fast path, loaded
    lines += "青石桥 ||| 所在地\n白鹭湖 ||| 别名 ||| 甲 ||| 乙\n白鹭湖 ||| 别名 ||| \n".encode()  # rejected
    kb.write_bytes(lines)
    store = tmp_path / "store"
    report = load_kb([kb], store)
    total = report.total
    assert report.files[0].kind == NLPCC_KB
    assert (total.lines, total.loaded, total.repaired, total.rejected, total.blank) == (16, 11, 1, 3, 1)
    assert total.duplicates == 1 and report.triples == len(FACTS) + 2
    rejects = (store / "rejects.tsv").read_text(encoding="utf-8")
    assert "' ||| ' inside a field" in rejects and "empty object" in rejects and "\t14\t" in rejects
    assert select(store, "SELECT ?x WHERE { <青石桥> <所在地> ?x }") == [['"临江县"']]
    assert select(store, "SELECT ?x WHERE { <青石桥> <别名> ?x }") == [['"老桥"']]
    assert select(store, f"SELECT ?x WHERE {{ {sparql_name('A{B}')} <备注> ?x }}") == [['"含"引号"与<尖括号>\\n"']]


def test_an_object_that_is_also_a_subject_links_to_that_entity(tmp_path: Path) -> None:
    kb = tmp_path / "kb.txt"
    kb.write_text(nlpcc_lines(FACTS), encoding="utf-8")
    load_kb([kb], tmp_path / "store")
    index = MentionIndex.open(tmp_path / "store" / INDEX_SUBDIR)
    # only subjects are mentions: an object value is not a literal mention
    assert {(entry.kind, entry.target) for entry in index.lookup("临江县")} == {(NAME, "临江县")}
    assert index.lookup("1921年") == []
    # the name before a （…） qualifier is a mention of the subject
    assert (NAME, "星河旅人（小说）") in {(e.kind, e.target) for e in index.lookup("星河旅人")}


def test_nlpcc_files_are_found_by_content_or_by_format(tmp_path: Path) -> None:
    (tmp_path / "kb.txt").write_text(nlpcc_lines(FACTS), encoding="utf-8")
    (tmp_path / "train.txt").write_text("<question id=1>\t青石桥在哪里？\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("facts ||| 不是 ||| 知识\n", encoding="utf-8")
    assert find_sources([tmp_path]) == [(tmp_path / "README.md", NLPCC_KB), (tmp_path / "kb.txt", NLPCC_KB)]
    assert find_sources([tmp_path / "kb.txt"]) == [(tmp_path / "kb.txt", NLPCC_KB)]
    assert find_sources([tmp_path / "train.txt"], "nlpcc") == [(tmp_path / "train.txt", NLPCC_KB)]
    with pytest.raises(KBError, match="cannot tell what"):
        find_sources([tmp_path / "train.txt"])
    with pytest.raises(KBError, match="cannot tell what"):
        find_sources([tmp_path / "kb.txt"], "pkubase")


# --- question files, submissions, scores -------------------------------------

TRAINING_FILE = """<question id=1>\t青石桥在哪里？
<triple id=1>\t青石桥 ||| 所在地 ||| 临江县
<answer id=1>\t临江县
==================================================
<question id=2>\t白鹭湖有多大？
<triple id=2>\t白鹭湖 ||| 面积 ||| 12.5平方公里
<answer id=2>\t12.5平方公里
==================================================
"""


def test_an_nlpcc_training_file_reads_as_labelled_questions(tmp_path: Path) -> None:
    path = tmp_path / "train.txt"
    path.write_text(TRAINING_FILE, encoding="utf-8")
    first, second = read_gold_questions(path)
    assert (first.number, first.question, first.answers) == (1, "青石桥在哪里？", ('"临江县"',))
    assert first.sparql == "SELECT ?x WHERE { <青石桥> <所在地> ?x . }"
    assert second.number == 2
    source = read_question_file(path)
    assert (source.kind, source.questions, source.ids) == (QuestionFormat.NLPCC, ["青石桥在哪里？", "白鹭湖有多大？"], (1, 2))


def test_a_record_line_of_another_question_is_refused_with_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(TRAINING_FILE.replace("<answer id=2>", "<answer id=3>"), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.txt:7: <answer id=3> does not belong"):
        read_gold_questions(path)
    path.write_text("<question id=1>\t谁？\nsomething else\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.txt:2: expected a <question id=N>"):
        read_gold_questions(path)


def test_submission_records_print_answer_values_best_first() -> None:
    record = format_nlpcc_record(7, "问题？", ['"甲 | 乙"', "<丙>", '"制表\t符"'])
    assert record == "<question id=7>\t问题？\n<answer id=7>\t甲 | 乙 | 丙 | 制表\\t符\n" + "=" * 50 + "\n"
    assert nlpcc_answers(['"a | b"', '""']) == ["a", "b"]
    assert file_format(record.splitlines()) == QuestionFormat.NLPCC


def test_nlpcc_scores_ignore_white_space_and_case() -> None:
    scores = nlpcc_kbqa_scores([["Hello World", "x"], ["y"]], [["helloworld"], ["z"]], (1, 5))
    assert scores.mrr == 0.5 and scores.accuracy == {1: 0.5, 5: 0.5}
    assert abs(scores.f1 - (2 * 0.5 * 1 / 1.5) / 2) < 1e-12


def test_score_reads_nlpcc_submissions_and_gold_files(tmp_path: Path, capsys) -> None:
    gold = tmp_path / "gold.txt"
    gold.write_text(TRAINING_FILE, encoding="utf-8")
    result = tmp_path / "result.txt"
    result.write_text(format_nlpcc_record(1, "青石桥在哪里？", ['"临江 县"']) + format_nlpcc_record(2, "?", []), "utf-8")
    assert main(["score", "--task", "nlpcc-kbqa", str(result), str(gold), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert (scores["questions"], scores["f1"], scores["mrr"]) == (2, 0.5, 0.5)


# --- end to end: load, train, answer, eval ------------------------------------

PLACES = ["青石桥", "白鹭湖", "松风亭", "云溪塔", "鹤鸣寺", "落霞湾", "听雨楼", "望江台", "紫竹林", "金沙滩", "翠屏山", "清泉村"]
QUESTIONS = {
    "所在地": "{}在哪里？",
    "建成时间": "{}是什么时候建成的？",
    "面积": "{}的面积有多大？",
    "设计者": "{}是谁设计的？",
}


def invented_kb() -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str, str]]]:
    """Facts about invented places, and a question for each fact."""
    facts, questions = [], []
    for number, place in enumerate(PLACES):
        values = {"所在地": f"第{number + 1}区", "建成时间": f"{1900 + number * 7}年", "面积": f"{number + 2}平方公里",
                  "设计者": PLACES[(number + 5) % len(PLACES)] + "工坊"}  # fmt: skip
        for predicate, value in values.items():
            facts.append((place, predicate, value))
            questions.append((QUESTIONS[predicate].format(place), place, predicate, value))
    return facts, questions


def nlpcc_file(questions: list[tuple[str, str, str, str]], with_gold: bool = True) -> str:
    records = []
    for number, (question, subject, predicate, value) in enumerate(questions, start=1):
        record = f"<question id={number}>\t{question}\n"
        if with_gold:
            record += f"<triple id={number}>\t{subject} ||| {predicate} ||| {value}\n<answer id={number}>\t{value}\n"
        records.append(record + "=" * 50 + "\n")
    return "".join(records)


def test_load_train_answer_eval_on_an_invented_nlpcc_kb(tmp_path: Path, capsys) -> None:
    facts, questions = invented_kb()
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "kb.txt").write_text(nlpcc_lines(facts), encoding="utf-8")
    split = len(questions) * 2 // 3  # the last places are asked about only in dev
    train, dev = questions[:split], questions[split:]
    (tmp_path / "train.txt").write_text(nlpcc_file(train), encoding="utf-8")
    (tmp_path / "dev.txt").write_text(nlpcc_file(dev), encoding="utf-8")
    (tmp_path / "questions.txt").write_text(nlpcc_file(dev, with_gold=False), encoding="utf-8")
    store, model = str(tmp_path / "store"), str(tmp_path / "model")
    assert main(["load", str(tmp_path / "kb"), "--store", store]) == 0
    assert main(["train", str(tmp_path / "train.txt"), "--store", store, "-o", model]) == 0
    meta = json.loads((Path(model) / "meta.json").read_text(encoding="utf-8"))
    recorded = meta["settings"]
    assert recorded["query_generation"]["shapes"] == "one_hop_out"  # the shape of every NLPCC gold query
    assert recorded["ranking"]["name_associations"] is True
    assert set(NAME_ASSOCIATION_FEATURES) <= set(meta["features"]["ranker"])
    assert set(PARAPHRASE_FEATURES) <= set(meta["features"]["ranker"]) and (Path(model) / PARAPHRASES_FILE).is_file()
    assert recorded["linking"]["name_variants"] is True
    assert recorded["linking"]["min_mention_length"] == 2  # no gold subject is a single character
    result = tmp_path / "result.txt"
    assert main(["answer", str(tmp_path / "questions.txt"), "-o", str(result), "--store", store, "--model", model]) == 0
    written = result.read_text(encoding="utf-8").splitlines()
    answers = [line.split("\t", 1)[1] for line in written if line.startswith("<answer id=")]
    assert [line.split("\t")[0] for line in written if line.startswith("<answer id=")] == [
        f"<answer id={n}>" for n in range(1, len(dev) + 1)
    ]
    assert sum(answer == value for answer, (_, _, _, value) in zip(answers, dev)) >= len(dev) * 3 // 4
    capsys.readouterr()
    assert main(["score", "--task", "nlpcc-kbqa", str(result), str(tmp_path / "dev.txt")]) == 0
    assert "averaged F1" in capsys.readouterr().out
    out = tmp_path / "eval"
    assert main(["eval", str(tmp_path / "dev.txt"), "--store", store, "--model", model, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "NLPCC KBQA" in printed and "Accuracy@1" in printed and "entity-linking recall" in printed
    assert (out / "result.txt").read_text(encoding="utf-8") == result.read_text(encoding="utf-8")


def test_an_nlpcc_training_file_sets_its_shapes_and_one_character_mentions_unless_the_user_set_them() -> None:
    templates = load_templates(QUERIES_DIR)
    questions = [
        GoldQuestion(1, "铑是什么时候被发现的？", nlpcc_gold_sparql("铑", "发现时间"), ('"1803年"',)),
        GoldQuestion(2, "青石桥在哪里？", nlpcc_gold_sparql("青石桥", "所在地"), ('"临江县"',)),
    ]
    implied = nlpcc_training_settings(default_settings(), questions, templates)
    assert (implied.query_generation.shapes, implied.linking.min_mention_length) == ("one_hop_out", 1)
    assert implied.ranking.name_associations and not default_settings().ranking.name_associations
    assert implied.linking.name_variants and not default_settings().linking.name_variants
    assert implied.explicit == frozenset()
    assert nlpcc_training_settings(default_settings(), questions[1:], templates).linking.min_mention_length == 2
    mine = default_settings().with_overrides(
        {
            "linking": {"min_mention_length": 2, "name_variants": False}, "query_generation": {"shapes": ""},
            "ranking": {"name_associations": False},
        },
        "test",
    )  # fmt: skip
    kept = nlpcc_training_settings(mine, questions, templates)
    assert (kept.query_generation.shapes, kept.linking.min_mention_length, kept.ranking.name_associations) == ("", 2, False)
    assert not kept.linking.name_variants


def test_generation_keeps_to_the_shapes_the_settings_name(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "kb.txt").write_text(nlpcc_lines(FACTS + [("松风亭", "所在地", "临江县")]), encoding="utf-8")
    store = tmp_path / "store"
    assert main(["load", str(tmp_path / "kb"), "--store", str(store)]) == 0
    kb = OxigraphStore(store / STORE_SUBDIR)
    try:
        nodes = [LinkedNode(Term.entity("青石桥"), 1.0, 0, 3, "青石桥"), LinkedNode(Term.entity("松风亭"), 0.9, 4, 7, "松风亭")]
        question = "青石桥和松风亭在哪里？"
        every = QueryGenerator(kb, load_templates(QUERIES_DIR), default_settings().query_generation).generate(nodes, question)
        assert {"one_hop_out", "star_out_out"} <= {c.shape.name for c in every}
        kept = QueryGenerator(kb, load_templates(QUERIES_DIR), replace(default_settings().query_generation, shapes="one_hop_out")).generate(nodes, question)
        assert {c.shape.name for c in kept} == {"one_hop_out"}
        assert [c for c in every if c.shape.name == "one_hop_out"] == kept
    finally:
        kb.close()
    with pytest.raises(ConfigError, match="unknown shapes one_hop"):
        default_settings().with_overrides({"query_generation": {"shapes": "one_hop"}}, "test")


# --- the synthetic NLPCC KB ----------------------------------------------------


def test_the_synthetic_nlpcc_kb_is_exact_deterministic_and_loads(tmp_path: Path) -> None:
    synthetic.generate_nlpcc(tmp_path / "a", 5000, seed=3)
    synthetic.generate_nlpcc(tmp_path / "b", 5000, seed=3)
    first = (tmp_path / "a" / synthetic.NLPCC_FILE).read_bytes()
    assert first == (tmp_path / "b" / synthetic.NLPCC_FILE).read_bytes() and first.count(b"\n") == 5000
    assert "（" in first.decode("utf-8")  # subjects with a qualifier
    report = load_kb([tmp_path / "a"], tmp_path / "store")
    total = report.total
    assert total.lines == 5000 == total.loaded + total.repaired + total.rejected + total.blank


# --- the shared data set, read at run time ------------------------------------


@pytest.mark.skipif(not NLPCC_DIR.is_dir(), reason="../shared/data/nlpcc-kbqa is not here")
def test_every_dev_gold_query_finds_its_answer_in_the_shared_nlpcc_kb(tmp_path: Path) -> None:
    report = load_kb([NLPCC_DIR], tmp_path / "store")
    assert [Path(f.path).name for f in report.files] == ["nlpcc-kbqa-kb.txt"]
    assert report.total.rejected == 0
    questions = read_gold_questions(NLPCC_DIR / "dev.txt")
    assert len(questions) == 3000
    kb = OxigraphStore(tmp_path / "store" / STORE_SUBDIR)
    try:
        returned = [[str(t) for row in kb.select(q.sparql).rows for t in row] if q.sparql else [] for q in questions]
    finally:
        kb.close()
    # Some subjects have several values for the asked predicate (different
    # books of the same title): the gold answer is one of them.
    missed = [q.number for q, answers in zip(questions, returned) if not set(q.answers) <= set(answers)]
    assert not missed, missed[:10]
