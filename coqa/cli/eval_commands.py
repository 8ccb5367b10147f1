"""`coqa score`, `coqa compare` and `coqa eval`: official scores of a result
file, two runs side by side, and dev-set validation of the pipeline."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path

from coqa.cli import dbqa_commands
from coqa.cli.common import add_kb_options, fail, settings_from_args
from coqa.cli.output import writable_directory
from coqa.cli.progress import Progress, add_progress_option
from coqa.dataset import DatasetError, QuestionFormat, file_format, nlpcc_answers, read_gold_questions, read_lines
from coqa.evaluation.compare import Comparison, compare_files
from coqa.evaluation.metrics import DbqaScores, KbqaScores, MacroScores, nlpcc_kbqa_scores
from coqa.evaluation.scoring import ScoringError, score_ccks, score_nlpcc_dbqa, score_nlpcc_kbqa
from coqa.evaluation.validate import ValidationReport, validate
from coqa.evaluation.reliability import reliability_lines

TASKS = ("ccks", "nlpcc-kbqa", "nlpcc-dbqa")
USAGE_ERROR = 2
DEFAULT_AT = (1, 5)

SCORE_EPILOG = """examples:
  coqa score result.txt ../shared/data/pkubase-bench/dev.txt
      CCKS macro P, macro R and averaged F1 against a CCKS file
  coqa score result.txt gold-answers.txt --json
      gold as one answer line per question; scores as JSON
  coqa score --task nlpcc-kbqa ranked.txt gold.txt --at 1 --at 3
  coqa score --task nlpcc-dbqa scores.txt labelled.txt

Result lines: answers separated by tabs; a tab, LF or CR inside an answer is
written as \\t, \\n, \\r (as `coqa answer` writes it) and compared in that form."""

COMPARE_EPILOG = """examples:
  coqa compare eval-old/result.txt eval-new/result.txt ../shared/data/pkubase-bench/dev.txt
  coqa compare a.txt b.txt gold-answers.txt | head"""

EVAL_EPILOG = """examples:
  coqa eval ../shared/data/pkubase-bench/dev.txt --store /tmp/s --model /tmp/model
  coqa eval dev.txt --store /tmp/s --limit 100 --out /tmp/eval-100
  coqa eval dev.txt --gstore http://127.0.0.1:9000 --db pkubase --mention-index /tmp/idx/mentions --jobs 4
  coqa eval ../shared/data/nlpcc-kbqa/dev.txt --store /tmp/n --model /tmp/nm
      an NLPCC file: the NLPCC KBQA scores (averaged F1, MRR, Accuracy@1/@5) first, then the same breakdown
  coqa eval --task nlpcc-dbqa ../shared/data/nlpcc-dbqa/dev.txt --repair-labels [--model /tmp/dbqa-model]
      NLPCC DBQA: MRR, MAP, ACC@1, the scores by question type and the worst questions

The report directory is checked (created, writable) before the run."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the score, compare and eval subcommands."""
    score = commands.add_parser(
        "score",
        help="official scores of a result file against gold answers",
        description="Score RESULT (one tab-separated answer line per question; for nlpcc-dbqa one score "
        "per sentence line) against GOLD (a CCKS file or one answer line per question; for nlpcc-dbqa "
        "question<TAB>sentence<TAB>label lines). Exit code 2 when the files do not line up.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    score.add_argument("result", metavar="RESULT")
    score.add_argument("gold", metavar="GOLD")
    score.add_argument("--task", choices=TASKS, default="ccks", help="metric set (default: ccks)")
    score.add_argument(
        "--at",
        type=_positive,
        action="append",
        metavar="N",
        help="nlpcc-kbqa Accuracy@N cut-off, repeatable (default: 1 and 5)",
    )
    score.add_argument("--json", action="store_true", help="print the scores as JSON, full precision")
    score.add_argument(
        "--repair-labels", action="store_true",
        help="nlpcc-dbqa: read a label of 0/1 digits as its first digit (the official 2017 dev set has one `10`), each repair reported",
    )
    score.set_defaults(run=run_score)

    compare = commands.add_parser(
        "compare",
        help="compare two result files on the same gold answers",
        description="Averaged F1 of RESULT_A and RESULT_B, questions B wins and loses against A, "
        "and every question whose F1 differs.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("result_a", metavar="RESULT_A")
    compare.add_argument("result_b", metavar="RESULT_B")
    compare.add_argument("gold", metavar="GOLD")
    compare.set_defaults(run=run_compare)

    evaluate = commands.add_parser(
        "eval",
        help="run the pipeline on a CCKS or NLPCC dev file and report where errors come from",
        description="Answer every question of DEV_FILE (CCKS format; or NLPCC KBQA, whose scores "
        "averaged F1, MRR and Accuracy@1/@5 come first) and print macro P/R/F1, a breakdown "
        "by gold query shape, entity-linking recall@k, candidate recall, ranking accuracy, latency and "
        "throughput. Writes errors.jsonl, summary.md and result.txt to --out.",
        epilog=EVAL_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("dev_file", metavar="DEV_FILE")
    add_kb_options(evaluate)
    evaluate.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    evaluate.add_argument("--limit", type=_positive, metavar="N", help="only the first N questions")
    evaluate.add_argument("--jobs", type=_positive, default=1, metavar="N", help="questions answered in parallel")
    evaluate.add_argument("--out", metavar="DIR", help="report directory (default: eval-<DEV>-<time>)")
    add_progress_option(evaluate)
    dbqa_commands.add_task_options(evaluate)
    evaluate.set_defaults(run=run_eval)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def run_score(args: argparse.Namespace) -> int:
    try:
        if args.task == "ccks":
            scores: MacroScores | KbqaScores | DbqaScores = score_ccks(args.result, args.gold)
        elif args.task == "nlpcc-kbqa":
            scores = score_nlpcc_kbqa(args.result, args.gold, sorted(set(args.at or DEFAULT_AT)))
        else:
            scores = score_nlpcc_dbqa(args.result, args.gold, args.repair_labels)
    except ScoringError as error:
        return fail(str(error), USAGE_ERROR)
    if args.json:
        print(json.dumps({"task": args.task, **asdict(scores)}, ensure_ascii=False))
    else:
        print("\n".join(score_lines(scores)))
    return 0


def score_lines(scores: MacroScores | KbqaScores | DbqaScores) -> list[str]:
    """Readable lines of a score set."""
    rows = [("questions", str(scores.questions))]
    if isinstance(scores, MacroScores):
        rows += [
            ("macro precision", f"{scores.precision:.4f}"),
            ("macro recall", f"{scores.recall:.4f}"),
            ("averaged F1", f"{scores.f1:.4f}  (mean of per-question F1: the official CCKS figure)"),
            ("F1 of macro P, R", f"{scores.f1_of_macro_means:.4f}  (2PR/(P+R) of the two above; not official)"),
        ]
    elif isinstance(scores, KbqaScores):
        rows += [("MRR", f"{scores.mrr:.4f}")]
        rows += [(f"Accuracy@{n}", f"{value:.4f}") for n, value in scores.accuracy.items()]
        rows += [("averaged F1", f"{scores.f1:.4f}")]
    else:
        rows += [("MRR", f"{scores.mrr:.4f}"), ("MAP", f"{scores.map:.4f}"), ("ACC@1", f"{scores.accuracy_at_1:.4f}")]
    return [f"{name:<18}{value}" for name, value in rows]


def run_compare(args: argparse.Namespace) -> int:
    try:
        comparison = compare_files(args.result_a, args.result_b, args.gold)
    except ScoringError as error:
        return fail(str(error), USAGE_ERROR)
    print("\n".join(comparison_lines(comparison, args.result_a, args.result_b)))
    return 0


def comparison_lines(comparison: Comparison, name_a: str, name_b: str) -> list[str]:
    """Readable lines of a comparison: scores, won/lost, then each differing question."""
    a, b = comparison.scores_a, comparison.scores_b
    lines = [
        f"A  {name_a}: averaged F1 {a.f1:.4f}  (macro P {a.precision:.4f}, macro R {a.recall:.4f})",
        f"B  {name_b}: averaged F1 {b.f1:.4f}  (macro P {b.precision:.4f}, macro R {b.recall:.4f})",
        f"B - A: {b.f1 - a.f1:+.4f} over {a.questions} questions; B wins {comparison.won}, "
        f"loses {comparison.lost}, {comparison.unchanged} unchanged",
    ]
    if comparison.differences:
        lines += ["", "question  F1 A    F1 B    B - A"]
        lines += [
            f"{d.number:<8}  {d.f1_a:.4f}  {d.f1_b:.4f}  {d.delta:+.4f}  {d.question}".rstrip()
            for d in comparison.differences
        ]
    return lines


def run_eval(args: argparse.Namespace) -> int:
    if dbqa_commands.wants_dbqa(args, args.dev_file):
        return dbqa_commands.run_eval(args)
    try:
        questions = read_gold_questions(args.dev_file)
        nlpcc = file_format(read_lines(args.dev_file)) == QuestionFormat.NLPCC
    except DatasetError as error:
        return fail(str(error), USAGE_ERROR)
    if args.limit:
        questions = questions[: args.limit]
    out = Path(args.out or f"eval-{Path(args.dev_file).stem}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        writable_directory(out)
    except OSError as error:
        return fail(f"cannot write reports to {out}: {error.strerror}", USAGE_ERROR)
    settings = settings_from_args(args)
    from coqa.batch import BatchReport, answer_safely
    from coqa.explanation import Answer
    from coqa.pipeline import Pipeline

    try:
        pipeline = Pipeline.from_settings(settings)
    except FileNotFoundError as error:
        return fail(str(error))
    counted = BatchReport(stop_after_unreachable=settings.stop_after_unreachable)

    def answer(question: str) -> Answer:
        given = answer_safely(pipeline, question)
        counted.add(given)  # BackendDown (a KBError: one line, exit 1) ends the run
        progress.failed = counted.kb_failed
        return given

    with Progress(len(questions), "answered", args.progress_every) as progress:
        report = validate(questions, answer, jobs=args.jobs, progress=lambda done, _total: progress.update(done))
    if nlpcc:
        print("\n".join(nlpcc_score_lines(report)) + "\n")
    print("\n".join(report_lines(report)))
    try:
        paths = report.write(out, nlpcc)
    except OSError as error:
        return fail(f"cannot write reports to {out}: {error.strerror}")
    print(f"\nreports: {', '.join(str(p) for p in paths)}")
    return 0


def nlpcc_score_lines(report: ValidationReport) -> list[str]:
    """The NLPCC KBQA scores of a validation run on an NLPCC file: the given
    and gold answers as NLPCC answer strings (coqa.dataset.nlpcc_answers)."""
    scores = nlpcc_kbqa_scores(
        [nlpcc_answers(o.given_answers) for o in report.outcomes],
        [nlpcc_answers(o.gold_answers) for o in report.outcomes],
        DEFAULT_AT,
    )
    return ["NLPCC KBQA (answers compared without white space, lower case)"] + score_lines(scores)


def report_lines(report: ValidationReport) -> list[str]:
    """Readable lines of a validation report, macro scores first."""
    s = report.scores
    lines = [
        f"questions          {s.questions}",
        f"macro precision    {s.precision:.4f}",
        f"macro recall       {s.recall:.4f}",
        f"averaged F1        {s.f1:.4f}",
        "",
        "by gold query shape   questions  exact   avg F1",
    ]
    lines += [
        f"  {b.shape:<20}{b.scores.questions:>9}  {b.exact:>5}   {b.scores.f1:.4f}" if b.scores.questions
        else f"  {b.shape:<20}{0:>9}  {0:>5}   -"
        for b in report.by_shape
    ]
    lines += ["", "stage that failed"]
    lines += [f"  {stage:<20}{count:>9}" for stage, count in report.stages.items()]
    lines += [
        "",
        f"entity-linking recall ({report.linking_questions} questions with gold entities): "
        + "  ".join(f"@{k} {v:.4f}" for k, v in report.linking_recall.items()),
        f"  gold entities first among the terms of their own mention: {report.mention_first:.4f} "
        f"(of {report.gold_entity_count})",
        f"candidate recall   {report.candidate_recall:.4f}",
        f"ranking accuracy   {report.ranking_accuracy:.4f}  (over {report.ranking_questions} questions "
        "with a correct candidate)",
        f"latency            p50 {report.latency_p50 * 1000:.1f} ms, p95 {report.latency_p95 * 1000:.1f} ms",
        f"throughput         {report.throughput:.2f} questions/s ({report.wall_seconds:.1f} s)",
        "",
    ]
    return lines + reliability_lines(report.reliability)
