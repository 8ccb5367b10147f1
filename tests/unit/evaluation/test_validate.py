"""validate(): shape classification, linking recall, candidate recall,
ranking accuracy, stage attribution, reports and thread-pool order.

The answer function is a lookup in a dict of Answer records built here:
validate is bookkeeping over those records and never sees a KB."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from coqa.cli.main import main
from coqa.dataset import GoldQuestion, read_ccks
from coqa.evaluation.categories import SHAPES, query_shape
from coqa.evaluation.validate import (
    ERRORS_FILE,
    RESULT_FILE,
    SUMMARY_FILE,
    gold_entities,
    percentile,
    validate,
)
from coqa.explanation import (
    Failure,
    FailureKind,
    Answer,
    CandidateRecord,
    Explanation,
    LinkedTerm,
    MentionRecord,
)

BENCH = Path(__file__).parents[3].parent / "shared" / "data" / "pkubase-bench"


@pytest.mark.parametrize(
    ("sparql", "shape"),
    [
        ("select ?x where { <青石镇> <所属县> ?x. }", "one hop"),
        ('select ?x where { ?x <誉称> "千湖之城" }', "one hop"),
        ("select ?x where { <鹰嘴山> <类型> ?x. }", "one hop"),
        ("select ?x where { <青石镇> <所属县> <云岭县>. <青石镇> <面积> ?x. }", "one hop"),
        ("select ?x where { <甲一> <出生地> ?y. ?y <所属县> ?x. }", "chain"),
        ("select ?y where { <书甲> <译者> ?x. ?y <作者> ?x. }", "chain"),
        ("select ?x ?y where { <陈默> <妻子> ?y. ?y <代表作品> ?x. }", "chain"),
        ("select ?x where { ?x <导演> <陈默>. ?x <主演> <林晚>. }", "star"),
        ("select ?x where { <甲一> <好友> ?x. <乙二> <好友> ?x. }", "star"),
        ("select ?x where { ?x <所在地> <云岭县>. ?x <类型> <山>. }", "type constraint"),
        ("select ?x where { ?x <类型> <山>. }", "type constraint"),
        ('select ?x where { ?x <类型> <山>. ?x <别称> "笔架" }', "type constraint"),
        ('select ?y where { ?x <誉称> "千湖之城". ?x <市花> ?y. }', "literal constraint"),
        ('select ?x where { ?x <品牌> <河图>. ?x <缺点> "偏重". }', "literal constraint"),
        ("select ?x where { <陈默> ?x <林晚>. }", "predicate answer"),
        ("select ?x ?y where { <陈默> ?x <林晚>. }", "predicate answer"),
        ("select ?x where { ?x <导演> <陈默>. ?x <主演> <林晚>. ?x <出品> <河图>. }", "complex"),
        ("select ?x where { ?x <成就> ?y. filter regex(?y, '第一'). }", "complex"),
        ("select ?x where { {<甲一> <剑法> ?x.} UNION {<甲一> <内功> ?x.} }", "complex"),
        ("select (count(?x) as ?n) where { ?x <所在地> <云岭县>. }", "complex"),
        ("select ?x where { ?x <导演> <陈默>. } order by ?x limit 3", "complex"),
        ("select ?x where { <甲一> <好友> ?x. <乙二> <好友> ?y. }", "complex"),
        ("select ?x where { <甲一> <好友> <乙二>. }", "complex"),
        ("not sparql at all", "complex"),
        ("select ?x where { <Filter乐队> <成员> ?x. }", "one hop"),
        ("select ?values where { <甲一> <好友> ?values. }", "one hop"),
        ("select * where { <甲一> ?p <乙二>. }", "predicate answer"),
    ],
)
def test_query_shape(sparql, shape):
    assert query_shape(sparql) == shape


def test_gold_entities_are_distinct_names_in_subject_or_object_position():
    sparql = 'select ?x where { <甲一> <好友> ?x. ?x <好友> <甲一>. ?x <誉称> "剑神". <乙二> ?x <丙三>. }'
    assert gold_entities(sparql) == ["<甲一>", "<乙二>", "<丙三>"]


def test_percentile_is_nearest_rank():
    values = [float(v) for v in range(20, 0, -1)]
    assert percentile(values, 0.50) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) == 0.0


def gold(number: int, question: str, sparql: str, answers: tuple[str, ...]) -> GoldQuestion:
    return GoldQuestion(number, question, sparql, answers)


def record(
    question: str,
    answers: list[str],
    *,
    mentions: int = 1,
    linked: tuple[str, ...] = (),
    candidates: tuple[tuple[str, list[str]], ...] = (),
    chosen: int | None = 0,
    failure: Failure | None = None,
    normalized: bool = True,
) -> Answer:
    cands = [CandidateRecord(sparql, "one hop", 1.0 - i / 10, list(a)) for i, (sparql, a) in enumerate(candidates)]
    explanation = Explanation(
        question=question,
        normalized=question if normalized else "",
        mentions=[MentionRecord(question[:2], 0, 2, ["mention"]) for _ in range(mentions)],
        linked=[LinkedTerm(question[:2], term, 1.0) for term in linked],
        candidates=cands,
        chosen=cands[chosen] if cands and chosen is not None else None,
        failure=failure,
    )
    return Answer(answers, explanation)


HOP = "select ?x where { <青石镇> <所属县> ?x. }"
STAR = "select ?x where { ?x <导演> <陈默>. ?x <主演> <林晚>. }"
WRONG = "select ?x where { <青石镇> <面积> ?x. }"


def scenario() -> tuple[list[GoldQuestion], dict[str, Answer]]:
    """One question per stage, with known linking and candidate outcomes."""
    questions = [
        gold(1, "q正确", HOP, ("<云岭县>",)),
        gold(2, "q排序", HOP, ("<云岭县>",)),
        gold(3, "q候选", STAR, ("<片一>", "<片二>")),
        gold(4, "q链接", STAR, ("<片一>", "<片二>")),
        gold(5, "q无提及", HOP, ("<云岭县>",)),
        gold(6, "q坏输入", HOP, ("<云岭县>",)),
        gold(7, "q输出", HOP, ("<云岭县>",)),
        gold(8, "q文字", 'select ?x where { ?x <誉称> "千湖之城". }', ("<湖城>",)),
        gold(9, "   ", HOP, ("<云岭县>",)),
    ]
    answers = {
        "q正确": record("q正确", ["<云岭县>"], linked=("<青石镇>",), candidates=((HOP, ["<云岭县>"]),)),
        # the right candidate is second, the wrong one was chosen
        "q排序": record(
            "q排序", ["\"12平方公里\""], linked=("<白鹭湖>", "<青石镇>"),
            candidates=((WRONG, ['"12平方公里"']), (HOP, ["<云岭县>", " <云岭县>"])),
        ),
        # both entities linked, but no candidate gives exactly the gold set
        "q候选": record(
            "q候选", ["<片一>"], linked=("<林晚>", "<甲一>", "<陈默>"),
            candidates=(("select ?x where { ?x <导演> <陈默>. }", ["<片一>", "<片三>"]), (STAR, ["<片一>"])),
            chosen=1,
        ),
        # <林晚> is not linked; a candidate happens to give the gold answers anyway
        "q链接": record("q链接", [], linked=("<陈默>",), candidates=((STAR, ["<片二>", "<片一>"]),), chosen=None),
        "q无提及": record("q无提及", [], mentions=0, failure=Failure(FailureKind.NO_MENTION)),
        "q坏输入": record(
            "q坏输入", [], mentions=0, failure=Failure(FailureKind.TOO_LONG, "longer than 300 characters"), normalized=False
        ),  # refused before normalising, as the pipeline does
        "q输出": record("q输出", [], linked=("<青石镇>",), candidates=((HOP, ["<云岭县>"]),)),
        # no gold entity: linking recall skips it; answered right
        "q文字": record("q文字", ["<湖城>"], linked=('"千湖之城"',), candidates=(("x", ["<湖城>"]),)),
        "   ": record("   ", [], mentions=0),
    }
    return questions, answers


def test_validate_scores_and_attributes_stages(tmp_path):
    questions, answers = scenario()
    report = validate(questions, answers.__getitem__)
    stages = {o.question: o.stage for o in report.outcomes}
    assert stages == {
        "q正确": "none",
        "q排序": "ranking",
        "q候选": "candidates",
        "q链接": "linking",
        "q无提及": "no mention",
        "q坏输入": "bad input",
        "q输出": "output",
        "q文字": "none",
        "   ": "bad input",
    }
    assert report.stages == {
        "bad input": 2, "no mention": 1, "linking": 1, "candidates": 1, "ranking": 1, "output": 1, "none": 2,
    }

    # F1: q正确 1, q候选 P=1 R=1/2 -> 2/3, q文字 1, the rest 0
    assert report.scores.questions == 9
    assert report.scores.f1 == pytest.approx((1 + 2 / 3 + 1) / 9)
    assert report.scores.precision == pytest.approx(3 / 9)
    assert report.scores.recall == pytest.approx(2.5 / 9)

    # candidates give the gold set for q正确, q排序, q链接, q输出, q文字
    assert report.candidate_recall == pytest.approx(5 / 9)
    # ... and the chosen one does for q正确, q输出, q文字
    assert report.ranking_questions == 5
    assert report.ranking_accuracy == pytest.approx(3 / 5)

    by_shape = {b.shape: b for b in report.by_shape}
    assert list(by_shape) == list(SHAPES)
    assert by_shape["one hop"].scores.questions == 7 and by_shape["one hop"].exact == 2
    assert by_shape["star"].scores.questions == 2
    assert by_shape["star"].scores.f1 == pytest.approx(1 / 3)
    assert by_shape["chain"].scores.questions == 0


def test_linking_recall_at_k(tmp_path):
    questions, answers = scenario()
    report = validate(questions, answers.__getitem__)
    # questions with gold entities: all but q文字 (8). Gold entities found in
    # the linked list (position in brackets):
    #   q正确 <青石镇>[1] 1/1 from k=1; q排序 <青石镇>[2]; q候选 <陈默>[3] <林晚>[1];
    #   q链接 <陈默>[1] of 2; q输出 <青石镇>[1]; q无提及, q坏输入, '   ' nothing
    assert report.linking_questions == 8
    expected = {
        1: (1 + 0 + 0.5 + 0.5 + 1) / 8,
        3: (1 + 1 + 1 + 0.5 + 1) / 8,
        5: (1 + 1 + 1 + 0.5 + 1) / 8,
        10: (1 + 1 + 1 + 0.5 + 1) / 8,
    }
    assert report.linking_recall == pytest.approx(expected)


def test_linked_terms_are_counted_once_in_order():
    question = gold(1, "q", STAR, ("<片一>",))
    answer = record("q", [], linked=("<甲一>", "<甲一>", "<乙二>", "<陈默>", "<丙三>", "<林晚>"))
    report = validate([question], lambda _: answer)
    assert report.outcomes[0].linked == ["<甲一>", "<乙二>", "<陈默>", "<丙三>", "<林晚>"]
    assert report.linking_recall == pytest.approx({1: 0.0, 3: 0.5, 5: 1.0, 10: 1.0})


def test_gold_entities_first_among_the_terms_of_their_own_mention():
    question = gold(1, "q", STAR, ("<片一>",))
    explanation = record("q", []).explanation
    explanation.linked = [
        LinkedTerm("导演", "<甲一>", 0.9),
        LinkedTerm("陈默", "<陈默>", 0.8),  # first of its mention, second in the question
        LinkedTerm("林晚", "<林晚_（书）>", 0.7),
        LinkedTerm("林晚", "<林晚>", 0.6),  # second of its mention
    ]
    report = validate([question], lambda _: Answer([], explanation))
    assert report.outcomes[0].linked_mentions == ["导演", "陈默", "林晚", "林晚"]
    assert report.linking_recall[1] == 0.0
    assert (report.mention_first, report.gold_entity_count) == (0.5, 2)


def test_reports_are_written(tmp_path):
    questions, answers = scenario()
    report = validate(questions, answers.__getitem__)
    errors, summary, result = report.write(tmp_path / "out")
    assert (errors.name, summary.name, result.name) == (ERRORS_FILE, SUMMARY_FILE, RESULT_FILE)

    records = [json.loads(line) for line in errors.read_text(encoding="utf-8").splitlines()]
    assert [r["question"] for r in records] == ["q排序", "q候选", "q链接", "q无提及", "q坏输入", "q输出", "   "]
    ranking = records[0]
    assert ranking["gold_sparql"] == HOP and ranking["chosen_sparql"] == WRONG
    assert ranking["gold_answers"] == ["<云岭县>"] and ranking["given_answers"] == ['"12平方公里"']
    assert ranking["stage"] == "ranking" and ranking["f1"] == 0.0 and ranking["shape"] == "one hop"
    assert records[4]["failure"] == "question too long: longer than 300 characters"

    text = summary.read_text(encoding="utf-8")
    assert f"| averaged F1 | {report.scores.f1:.4f} |" in text
    assert "| star | 2 | 0 |" in text and "| ranking | 1 |" in text
    assert f"Candidate recall (some candidate gives the gold answers): {5 / 9:.4f}" in text

    assert result.read_text(encoding="utf-8").split("\n") == [
        "<云岭县>", '"12平方公里"', "<片一>", "", "", "", "", "<湖城>", "", ""
    ]


def test_jobs_answer_concurrently_and_keep_input_order():
    questions = [gold(i + 1, f"问题{i}", HOP, (f"<答{i}>",)) for i in range(8)]
    barrier = threading.Barrier(2, timeout=10)
    calls: list[tuple[int, int]] = []

    def answer_fn(question: str) -> Answer:
        index = int(question[2:])
        if index < 2:
            barrier.wait()  # fails unless two calls run at the same time
        time.sleep(0.002 * (8 - index))  # later questions finish first
        return record(question, [f"<答{index}>"] if index % 2 == 0 else [])

    report = validate(questions, answer_fn, jobs=2, progress=lambda done, total: calls.append((done, total)))
    assert [o.number for o in report.outcomes] == list(range(1, 9))
    assert [o.given_answers for o in report.outcomes] == [[f"<答{i}>"] if i % 2 == 0 else [] for i in range(8)]
    assert report.scores.f1 == pytest.approx(0.5)
    assert calls == [(done, 8) for done in range(1, 9)]
    assert all(o.seconds > 0 for o in report.outcomes)
    assert report.latency_p50 <= report.latency_p95
    assert report.throughput == pytest.approx(8 / report.wall_seconds)


def test_answer_fn_errors_propagate():
    def broken(question: str) -> Answer:
        raise RuntimeError("pipeline exploded")

    with pytest.raises(RuntimeError, match="exploded"):
        validate([gold(1, "q", HOP, ("<a>",))] * 4, broken, jobs=2)


def test_eval_refuses_an_unreadable_dev_file(tmp_path, capsys):
    assert main(["eval", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "out")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_every_train_question_gets_one_shape():
    path = BENCH / "train.txt"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    questions = read_ccks(path)
    shapes = Counter(query_shape(q.sparql) for q in questions)
    assert set(shapes) <= set(SHAPES)
    assert sum(shapes.values()) == len(questions)
    print("\nshapes of train.txt gold queries:")
    for shape in SHAPES:
        print(f"  {shape:<20}{shapes[shape]:>6}  {100 * shapes[shape] / len(questions):5.1f}%")
    # the bulk of CCKS questions are one hop; every common shape occurs
    assert shapes["one hop"] > len(questions) / 2
    assert all(shapes[s] > 0 for s in SHAPES)
