"""Dev-set validation: run an answer function over gold questions and say
how good the answers are and where the wrong ones went wrong.

`validate` is bookkeeping over the `Answer` records the answer function
returns (coqa.explanation); it never talks to a knowledge base itself.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from coqa.dataset import GoldQuestion, format_nlpcc_record
from coqa.evaluation.metrics import MacroScores, answer_list, answer_set, macro_scores, question_prf
from coqa.evaluation.categories import SHAPES, query_shape
from coqa.evaluation.reliability import ReliabilityBin, reliability_table
from coqa.explanation import Answer, Explanation
from coqa.gold import parse_query

RECALL_AT = (1, 3, 5, 10)

# Stages in the order a question goes through them; the stage that failed is
# the first one whose check fails ("none" when the answers equal the gold set).
BAD_INPUT = "bad input"
NO_MENTION = "no mention"
LINKING = "linking"
CANDIDATES = "candidates"
RANKING = "ranking"
OUTPUT = "output"
NONE = "none"
STAGES = (BAD_INPUT, NO_MENTION, LINKING, CANDIDATES, RANKING, OUTPUT, NONE)

ERRORS_FILE = "errors.jsonl"
SUMMARY_FILE = "summary.md"
RESULT_FILE = "result.txt"

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class QuestionOutcome:
    """What happened to one gold question (number is the gold file's)."""

    number: int
    question: str
    gold_sparql: str
    chosen_sparql: str
    gold_answers: list[str]
    given_answers: list[str]
    precision: float
    recall: float
    f1: float
    shape: str
    gold_entities: list[str]
    linked: list[str]
    linked_mentions: list[str]  # the mention each linked term was linked from, in the order of `linked`
    candidate_hit: bool
    chosen_hit: bool
    stage: str
    failure: str | None
    seconds: float
    confidence: float = 0.0

    def error_record(self) -> dict[str, object]:
        """The JSON object of this question in the error report."""
        return asdict(self)


@dataclass(frozen=True)
class ShapeScores:
    """Scores of the questions of one gold query shape."""

    shape: str
    scores: MacroScores
    exact: int  # questions whose answers equal the gold set


@dataclass(frozen=True)
class ValidationReport:
    """Scores, breakdowns and timings of a validation run."""

    outcomes: list[QuestionOutcome]
    scores: MacroScores
    by_shape: list[ShapeScores]
    linking_recall: dict[int, float]
    linking_questions: int  # questions with gold entities (the recall@k denominator)
    mention_first: float  # share of all gold entities that are the best term of their own mention
    gold_entity_count: int  # its denominator
    candidate_recall: float
    ranking_accuracy: float
    ranking_questions: int  # questions where a candidate gave the gold answers
    stages: dict[str, int]
    latency_p50: float
    latency_p95: float
    throughput: float
    wall_seconds: float
    reliability: list[ReliabilityBin]  # confidence against F1 (coqa.evaluation.reliability)

    def write(self, directory: str | Path, nlpcc: bool = False) -> tuple[Path, Path, Path]:
        """Write the error report (JSONL, one wrong question per line), the
        markdown summary and the result lines (with `nlpcc`, the NLPCC
        submission of the questions, numbered by their ids); return their paths."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        errors, summary, result = directory / ERRORS_FILE, directory / SUMMARY_FILE, directory / RESULT_FILE
        with errors.open("w", encoding="utf-8") as out:
            for outcome in self.outcomes:
                if outcome.stage != NONE:
                    out.write(json.dumps(outcome.error_record(), ensure_ascii=False) + "\n")
        summary.write_text(markdown_summary(self), encoding="utf-8")
        if nlpcc:
            lines = [format_nlpcc_record(o.number, o.question, o.given_answers) for o in self.outcomes]
        else:
            lines = ["\t".join(o.given_answers) + "\n" for o in self.outcomes]
        result.write_text("".join(lines), encoding="utf-8")
        return errors, summary, result


def gold_entities(sparql: str) -> list[str]:
    """Distinct `<names>` in subject or object position of the gold triples, in order."""
    return parse_query(sparql).entities()


def linked_terms(explanation: Explanation) -> list[str]:
    """Distinct linked terms of an explanation, in the pipeline's order."""
    return list(dict.fromkeys(link.term for link in explanation.linked))


def linked_mentions(explanation: Explanation) -> list[str]:
    """The mention each of `linked_terms` was linked from (its first record's)."""
    first: dict[str, str] = {}
    for link in explanation.linked:
        first.setdefault(link.term, link.mention)
    return list(first.values())


def first_of_their_mention(gold: Sequence[str], linked: Sequence[str], mentions: Sequence[str]) -> int:
    """How many gold entities are linked and come first among the linked
    terms of the mention they were linked from (`mentions[i]` is that of
    `linked[i]`; mentions compared by their text). A question's other
    mentions do not count against them, unlike in `recall_at`."""
    first: dict[str, str] = {}
    for mention, term in zip(mentions, linked):
        first.setdefault(mention, term)
    return len(set(gold) & set(first.values()))


def recall_at(gold: Sequence[str], linked: Sequence[str], k: int) -> float:
    """Share of the gold entities among the first k linked terms."""
    return len(set(gold) & set(linked[:k])) / len(gold)


def failed_stage(gold: GoldQuestion, answer: Answer, entities: list[str], linked: list[str]) -> str:
    """The first stage whose check fails, in pipeline order:
    bad input (the question is blank, or the pipeline refused it before
    normalising it: a failure with an empty `normalized`), no mention (no
    mention detected), linking (a gold entity is not among the linked
    terms), candidates (no candidate's answers equal the gold set), ranking
    (a candidate's did, but the chosen one's do not), output (the chosen
    candidate's answers equal the gold set but the answers returned do not);
    "none" when the answers equal the (non-empty) gold set."""
    gold_set = answer_set(gold.answers)
    explanation = answer.explanation
    if gold_set and answer_set(answer.answers) == gold_set:
        return NONE
    if not gold.question.strip() or (explanation.failure and not explanation.normalized):
        return BAD_INPUT
    if not explanation.mentions:
        return NO_MENTION
    if not set(entities) <= set(linked):
        return LINKING
    if not _candidate_hit(explanation, gold_set):
        return CANDIDATES
    if not _chosen_hit(explanation, gold_set):
        return RANKING
    return OUTPUT


def _candidate_hit(explanation: Explanation, gold_set: frozenset[str]) -> bool:
    return bool(gold_set) and any(answer_set(c.answers) == gold_set for c in explanation.candidates)


def _chosen_hit(explanation: Explanation, gold_set: frozenset[str]) -> bool:
    chosen = explanation.chosen
    return bool(gold_set) and chosen is not None and answer_set(chosen.answers) == gold_set


def assess(gold: GoldQuestion, answer: Answer, seconds: float) -> QuestionOutcome:
    """The outcome of one question from its gold record and the answer given."""
    explanation = answer.explanation
    gold_set = answer_set(gold.answers)
    entities, linked = gold_entities(gold.sparql), linked_terms(explanation)
    scores = question_prf(answer.answers, gold.answers)
    return QuestionOutcome(
        number=gold.number,
        question=gold.question,
        gold_sparql=gold.sparql,
        chosen_sparql=explanation.chosen.sparql if explanation.chosen else "",
        gold_answers=answer_list(gold.answers),
        given_answers=answer_list(answer.answers),
        precision=scores.precision,
        recall=scores.recall,
        f1=scores.f1,
        shape=query_shape(gold.sparql),
        gold_entities=entities,
        linked=linked,
        linked_mentions=linked_mentions(explanation),
        candidate_hit=_candidate_hit(explanation, gold_set),
        chosen_hit=_chosen_hit(explanation, gold_set),
        stage=failed_stage(gold, answer, entities, linked),
        failure=explanation.failure.message if explanation.failure else None,
        seconds=seconds,
        confidence=explanation.confidence,
    )


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest-rank percentile: the smallest value with at least `share` of
    the values at or below it (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def summarize(outcomes: list[QuestionOutcome], wall_seconds: float) -> ValidationReport:
    """The report of a run from its outcomes (in input order) and its wall time."""
    with_entities = [o for o in outcomes if o.gold_entities]
    ranked = [o for o in outcomes if o.candidate_hit]
    seconds = [o.seconds for o in outcomes]
    gold_entity_count = sum(len(set(o.gold_entities)) for o in with_entities)
    return ValidationReport(
        outcomes=outcomes,
        scores=macro_scores([question_prf(o.given_answers, o.gold_answers) for o in outcomes]),
        by_shape=[_shape_scores(shape, outcomes) for shape in SHAPES],
        linking_recall={
            k: _mean([recall_at(o.gold_entities, o.linked, k) for o in with_entities]) for k in RECALL_AT
        },
        linking_questions=len(with_entities),
        mention_first=_share(
            sum(first_of_their_mention(o.gold_entities, o.linked, o.linked_mentions) for o in with_entities), gold_entity_count
        ),
        gold_entity_count=gold_entity_count,
        candidate_recall=_mean([1.0 if o.candidate_hit else 0.0 for o in outcomes]),
        ranking_accuracy=_mean([1.0 if o.chosen_hit else 0.0 for o in ranked]),
        ranking_questions=len(ranked),
        stages={stage: sum(1 for o in outcomes if o.stage == stage) for stage in STAGES},
        latency_p50=percentile(seconds, 0.50),
        latency_p95=percentile(seconds, 0.95),
        throughput=len(outcomes) / wall_seconds if wall_seconds > 0 else 0.0,
        wall_seconds=wall_seconds,
        reliability=reliability_table([o.confidence for o in outcomes], [o.f1 for o in outcomes]),
    )


def _shape_scores(shape: str, outcomes: list[QuestionOutcome]) -> ShapeScores:
    members = [o for o in outcomes if o.shape == shape]
    scores = macro_scores([question_prf(o.given_answers, o.gold_answers) for o in members])
    return ShapeScores(shape, scores, sum(1 for o in members if o.stage == NONE))


def validate(
    questions: list[GoldQuestion],
    answer_fn: Callable[[str], Answer],
    jobs: int = 1,
    progress: Progress | None = None,
) -> ValidationReport:
    """Answer every gold question with `answer_fn` and report on the answers.

    With jobs > 1 the questions are answered by a pool of `jobs` threads, so
    `answer_fn` is called concurrently and must be thread-safe. Outcomes stay
    in input order. `progress(done, total)` is called after each question.
    Latency is the wall time of each `answer_fn` call; throughput is questions
    per second of the whole run. Exceptions from `answer_fn` propagate.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    start = time.perf_counter()
    outcomes: list[QuestionOutcome | None] = [None] * len(questions)

    def run(index: int) -> None:
        begin = time.perf_counter()
        answer = answer_fn(questions[index].question)
        outcomes[index] = assess(questions[index], answer, time.perf_counter() - begin)

    if jobs == 1:
        for index in range(len(questions)):
            run(index)
            if progress:
                progress(index + 1, len(questions))
    else:
        pool = ThreadPoolExecutor(max_workers=jobs)
        try:
            futures = [pool.submit(run, index) for index in range(len(questions))]
            for done, future in enumerate(as_completed(futures), start=1):
                future.result()
                if progress:
                    progress(done, len(questions))
        finally:
            pool.shutdown(cancel_futures=True)
    finished = [outcome for outcome in outcomes if outcome is not None]
    return summarize(finished, time.perf_counter() - start)


def _fraction(value: float, count: int) -> str:
    """A score with 4 decimals, or "-" when there was nothing to score."""
    return f"{value:.4f}" if count else "-"


def markdown_summary(report: ValidationReport) -> str:
    """The report as a markdown document."""
    s = report.scores
    lines = [
        "# coqa evaluation",
        "",
        f"{s.questions} questions. Averaged F1 is the mean of the per-question F1 (CCKS definition).",
        "",
        "| metric | value |",
        "|---|---|",
        f"| macro precision | {s.precision:.4f} |",
        f"| macro recall | {s.recall:.4f} |",
        f"| averaged F1 | {s.f1:.4f} |",
        "",
        "## By gold query shape",
        "",
        "| shape | questions | exact | macro P | macro R | averaged F1 |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {b.shape} | {b.scores.questions} | {b.exact} | "
        + " | ".join(_fraction(v, b.scores.questions) for v in (b.scores.precision, b.scores.recall, b.scores.f1))
        + " |"
        for b in report.by_shape
    ]
    lines += ["", "## Stage that failed", "", "| stage | questions |", "|---|---|"]
    lines += [f"| {stage} | {count} |" for stage, count in report.stages.items()]
    lines += [
        "",
        "## Linking, candidates, ranking",
        "",
        f"Entity-linking recall@k over {report.linking_questions} questions with gold entities: "
        + ", ".join(f"@{k} {v:.4f}" for k, v in report.linking_recall.items()),
        "",
        f"Gold entities that are the best term of their own mention: {report.mention_first:.4f} "
        f"of {report.gold_entity_count}",
        "",
        f"Candidate recall (some candidate gives the gold answers): {report.candidate_recall:.4f}",
        "",
        f"Ranking accuracy over the {report.ranking_questions} questions with a correct candidate: "
        f"{report.ranking_accuracy:.4f}",
        "",
        "## Speed",
        "",
        f"Latency p50 {report.latency_p50 * 1000:.1f} ms, p95 {report.latency_p95 * 1000:.1f} ms; "
        f"throughput {report.throughput:.2f} questions/s ({report.wall_seconds:.1f} s in all).",
        "",
    ]
    return "\n".join(lines)
