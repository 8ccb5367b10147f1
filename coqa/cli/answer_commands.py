"""`coqa answer`, `coqa ask` and `coqa train`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import nullcontext
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, TypeVar

from coqa.cli import dbqa_commands
from coqa.cli.common import add_kb_options, add_min_confidence_option, fail, settings_from_args
from coqa.cli.output import ResultOutput
from coqa.cli.progress import FitProgress, Progress, add_progress_option
from coqa.cli.prompt import questions_at_prompt
from coqa.dataset import DatasetError, QuestionFile, QuestionFormat, format_nlpcc_record, read_gold_questions, read_question_file
from coqa.explanation import LOW_CONFIDENCE

if TYPE_CHECKING:  # the pipeline imports the model stack: only the commands' run functions need it
    from coqa.batch import BatchReport
    from coqa.explanation import Answer, Explanation

SHOWN_CANDIDATES = 5
ASK_HISTORY = "ask_history"  # the prompt's history, in the cache directory
Example = TypeVar("Example")

ANSWER_DESCRIPTION = """Answer a question file. Writes exactly one line per question, in order:
answers tab-separated, entities as <name>, literals as "value", an empty line
when there is no answer; a tab, LF or CR inside an answer is written as \\t,
\\n, \\r.

QUESTIONS holds one question per line (a leading `qN:` is stripped), or is a
CCKS file (qN:question / SPARQL / answers / blank line blocks), whose
questions are answered, or an NLPCC KBQA file (<question id=N> lines), whose
questions are answered in the NLPCC submission layout: <question id=N>,
<answer id=N> with the answers separated by ' | ' (the values of the best
query's answers, no quotes or brackets), a line of '='.

A question that cannot be answered (empty, too long, nothing recognisable,
a knowledge-base error) gets an empty line and a logged reason
(COQA_LOG_LEVEL=INFO shows them); the run goes on. The result file is
replaced only when the run ends. Exit code 1 when the knowledge base failed
and no question got an answer, or was unreachable for stop_after_unreachable
questions in a row (3; the run stops there; the file is then not written),
or when no question got an answer at all (the file is written)."""

ANSWER_EPILOG = """examples:
  coqa answer questions.txt -o result.txt
      the shipped demo knowledge base and model
  coqa answer dev.txt -o result.txt --store /data/pkubase-store --jobs 2
      the questions of a CCKS file, two worker processes
  coqa answer ../shared/data/nlpcc-kbqa/dev.txt -o result.txt --store /tmp/n --model /tmp/nm
      an NLPCC file, answered in the NLPCC submission layout
  coqa answer questions.txt -o - --endpoint http://127.0.0.1:7878/query --mention-index /data/idx/mentions
      a SPARQL endpoint, result lines on stdout
  coqa answer --task nlpcc-dbqa test.txt -o scores.txt
      NLPCC DBQA (question<TAB>sentence lines): one score per line, the shipped DBQA model"""

ASK_EPILOG = """examples:
  coqa ask '周星驰的身高是多少？'
  coqa ask '周星驰的身高是多少？' --json --top 3 --store /data/pkubase-store
  coqa ask                       (a prompt: one question per line, arrow keys edit and recall
                                  earlier questions; exit, Ctrl-D or Ctrl-C ends it)

Exit code 1 when the knowledge base failed for every question asked."""

TRAIN_EPILOG = """examples:
  coqa train ../shared/data/pkubase-bench/train.txt --store /tmp/s -o /tmp/model
  coqa train train.txt --store /tmp/s -o /tmp/model --limit 500 --seed 1
  coqa train ../shared/data/nlpcc-kbqa/train.txt --store /tmp/n -o /tmp/nm
      an NLPCC training file: its gold triples and answers supervise
  coqa train train.txt --store /tmp/s -o /tmp/model --relation-evidence ../shared/data/nlpcc-kbqa/train.txt
      the ranker also learns how the NLPCC questions word their predicates
  coqa train --task nlpcc-dbqa ../shared/data/nlpcc-dbqa/train.txt -o /tmp/dbqa-model
      NLPCC DBQA sentence ranking (no knowledge base needed)"""


def register(commands: argparse._SubParsersAction) -> None:
    answer = commands.add_parser(
        "answer",
        help="answer a question file into result.txt (official format)",
        description=ANSWER_DESCRIPTION,
        epilog=ANSWER_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    answer.add_argument("questions", help="question file, UTF-8: one question per line, a CCKS or an NLPCC file")
    answer.add_argument("-o", "--output", required=True, help="result file to write (- for stdout)")
    answer.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    answer.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    answer.add_argument(
        "--details", metavar="FILE.jsonl",
        help="also write one JSON object per question, in order: question, answers, confidence, sparql, failure",
    )  # fmt: skip
    add_min_confidence_option(answer)
    add_progress_option(answer)
    add_kb_options(answer)
    dbqa_commands.add_task_options(answer)
    answer.set_defaults(run=run_answer)

    ask = commands.add_parser(
        "ask",
        help="answer one question and show why (mentions, links, candidate queries)",
        description="Answer a question and show every step. Without QUESTION, reads questions at a prompt.",
        epilog=ASK_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ask.add_argument("question", nargs="?", help="the question (omit for a prompt loop)")
    ask.add_argument("--json", action="store_true", help="print the explanation as JSON")
    ask.add_argument("--top", type=int, default=SHOWN_CANDIDATES, help="candidate queries to show (default 5)")
    ask.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    add_kb_options(ask)
    ask.set_defaults(run=run_ask)

    train = commands.add_parser(
        "train",
        help="train the linking and ranking model on a CCKS or NLPCC training file",
        description="Train from a CCKS-format file (qN:question / gold SPARQL / gold answers / blank line) "
        "or an NLPCC KBQA training file (<question id=N> / <triple id=N> / <answer id=N>; the gold triple "
        "<subject> <predicate> ?x is the gold query) against the knowledge base the gold queries were "
        "written for. Seeded and deterministic.",
        epilog=TRAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    train.add_argument("train_file", help="CCKS-format or NLPCC training file")
    train.add_argument("-o", "--output", required=True, help="model directory to write")
    train.add_argument("--seed", type=int, help="random seed (default: training.seed of the config, 0)")
    train.add_argument("--limit", type=int, help="train on the first N questions only")
    train.add_argument(
        "--relation-evidence", metavar="FILE",
        help="another labelled question file (NLPCC or CCKS format) whose wording of its gold predicates "
        "the ranker learns from (turns on ranking.relation_evidence; its digest is kept in meta.json)",
    )  # fmt: skip
    add_progress_option(train)
    add_kb_options(train)
    dbqa_commands.add_task_options(train)
    train.set_defaults(run=run_train)


def run_answer(args: argparse.Namespace) -> int:
    from coqa.batch import BatchReport, answer_stream, write_answers

    if dbqa_commands.wants_dbqa(args, args.questions):
        return dbqa_commands.run_answer(args)
    if args.jobs < 1:
        return fail("--jobs must be at least 1", 2)
    try:
        source = read_question_file(args.questions)
    except DatasetError as error:
        return fail(str(error), 2)
    if source.kind == QuestionFormat.CCKS:
        print(f"coqa: {args.questions} is a CCKS file: answering the question of each of its "
              f"{len(source.questions)} blocks", file=sys.stderr)
    if source.kind == QuestionFormat.NLPCC:
        print(f"coqa: {args.questions} is an NLPCC file: answering its {len(source.questions)} questions "
              "in the NLPCC submission layout", file=sys.stderr)
    settings = settings_from_args(args)
    started = time.perf_counter()
    report = BatchReport(stop_after_unreachable=settings.stop_after_unreachable)
    try:
        output = ResultOutput(args.output, inputs=[args.questions])
    except OSError as error:
        return fail(f"cannot write {args.output}: {error.strerror}")
    try:
        details = ResultOutput(args.details) if args.details else None
    except OSError as error:
        output.discard()
        return fail(f"cannot write {args.details}: {error.strerror}")
    try:
        with output, details or nullcontext(), Progress(len(source.questions), "answered", args.progress_every) as progress:
            render = _renderer(source)

            def written(answer: Answer) -> str:
                if details is not None:
                    details.write(json.dumps(answer.details(), ensure_ascii=False) + "\n")
                return render(answer)

            def write_line(line: str) -> None:
                output.write(line + "\n")
                progress.failed = report.kb_failed
                progress.advance()

            answers = answer_stream(settings, source.questions, args.jobs)
            write_answers(answers, write_line, report, written)
            if report.kb_failed_run:
                return fail(str(report.kb_problem()) + ("" if output.to_stdout else f"; {output.name} not written"))
            output.commit()
            if details is not None:
                details.commit()
    except OSError as error:
        return fail(f"cannot write {output.name}: {error.strerror}")
    return _summary(report, output.name, time.perf_counter() - started)


def _renderer(source: QuestionFile) -> Callable[[Answer], str]:
    """What is written for each answer, in question order: a result line, or
    for an NLPCC file the question's NLPCC submission record (without the
    final "\\n", which the writer adds)."""
    if source.kind != QuestionFormat.NLPCC:
        return lambda answer: answer.line()
    records = iter(zip(source.ids, source.questions))

    def nlpcc_record(answer: Answer) -> str:
        number, question = next(records)
        return format_nlpcc_record(number, question, answer.answers)[:-1]

    return nlpcc_record


def _summary(report: BatchReport, output_name: str, seconds: float) -> int:
    """Print what a finished `coqa answer` run did; its exit code (1 when no question got an answer)."""
    print(
        f"{report.questions} questions, {report.answered} answered, {len(report.failures)} without answer "
        f"in {seconds:.1f} s -> {output_name}",
        file=sys.stderr,
    )
    if report.kb_failures:
        print(f"coqa: warning: {report.kb_problem()}", file=sys.stderr)
    if report.questions and not report.answered:
        return fail(f"none of the {report.questions} questions got an answer ({report.reason_counts()})")
    return 0


def run_ask(args: argparse.Namespace) -> int:
    from coqa.batch import BatchReport, answer_safely
    from coqa.pipeline import Pipeline

    settings = settings_from_args(args)
    pipeline = Pipeline.from_settings(settings)
    report = BatchReport(stop_after_unreachable=settings.stop_after_unreachable)
    questions = [args.question] if args.question is not None else questions_at_prompt(settings.cache_path / ASK_HISTORY)
    try:
        for question in questions:
            answer = answer_safely(pipeline, question)
            report.add(answer)
            if args.json:
                data = answer.explanation.to_dict()
                data["candidates"] = data["candidates"][: args.top]
                print(json.dumps(data, ensure_ascii=False, indent=2))
            else:
                print(format_explanation(answer.explanation, args.top))
    except KeyboardInterrupt:
        if args.question is not None:
            raise
        print()  # Ctrl-C while a question of the prompt is answered ends the session quietly, as at the prompt
    finally:
        pipeline.close()
    if report.kb_failed_run:
        return fail(str(report.kb_problem()))
    return 0


def format_explanation(explanation: Explanation, top: int) -> str:
    """The human-readable explanation `coqa ask` prints."""
    lines = [f"question:   {explanation.question}", f"normalized: {explanation.normalized}"]
    lines.append("mentions:   " + (", ".join(f"{m.text} [{'/'.join(m.sources)}]" for m in explanation.mentions) or "-"))
    lines.append("linked:")
    lines += [f"  {link.score:.3f}  {link.term}  <- {link.mention}" for link in explanation.linked[:10]] or ["  -"]
    lines.append(f"candidates: {len(explanation.candidates)} (top {min(top, len(explanation.candidates))})")
    for candidate in explanation.candidates[:top]:
        shown = "\t".join(candidate.answers[:5]) + (" ..." if len(candidate.answers) > 5 else "")
        lines.append(f"  {candidate.score:.3f}  [{candidate.shape}]  {candidate.sparql}")
        lines.append(f"         -> {shown or '(no answer)'}")
    if explanation.chosen:
        lines.append(f"query:      {explanation.chosen.sparql}")
    lines.append("answers:    " + ("\t".join(explanation.chosen.answers) if explanation.chosen else ""))
    if explanation.chosen and explanation.chosen.answers:
        low = "  (low: this answer is likely wrong)" if explanation.confidence < LOW_CONFIDENCE else ""
        lines.append(f"confidence: {explanation.confidence:.2f}{low}")
    if explanation.failure:
        lines.append(f"no answer:  {explanation.failure}")
    lines.append(f"time:       {explanation.seconds * 1000:.1f} ms")
    return "\n".join(lines)


def run_train(args: argparse.Namespace) -> int:
    from coqa.boosting import round_observer
    from coqa.pipeline import Pipeline
    from coqa.resources import QUERIES_DIR
    from coqa.ranking.relation_evidence import RelationEvidence
    from coqa.templates import load_templates
    from coqa.training import Trainer, training_settings

    if dbqa_commands.wants_dbqa(args, args.train_file):
        return dbqa_commands.run_train(args)
    settings = settings_from_args(args)
    try:
        questions = read_gold_questions(args.train_file)
        evidence = RelationEvidence.fit(read_gold_questions(args.relation_evidence)) if args.relation_evidence else None
        if args.limit:
            questions = questions[: args.limit]
        if not questions:
            return fail(f"no questions in {args.train_file}", 2)
        nlpcc = read_question_file(args.train_file).kind == QuestionFormat.NLPCC
        settings = training_settings(settings, questions, nlpcc, evidence, load_templates(QUERIES_DIR))
    except (DatasetError, ValueError) as error:
        return fail(str(error), 2)
    pipeline = Pipeline.without_model(settings)

    passes = 0

    def progress(items: Iterable[Example]) -> Iterator[Example]:
        nonlocal passes
        passes += 1
        items = list(items)
        with Progress(len(items), f"training (pass {passes})", args.progress_every) as shown:
            yield from shown.track(items)

    if args.seed is not None:
        settings = settings.with_overrides({"training": {"seed": args.seed}}, "command line")
    fits = FitProgress(args.progress_every)
    observing = round_observer.set(fits)
    try:
        model, summary = Trainer(pipeline, settings, progress=progress, evidence=evidence).train(questions)
    finally:
        round_observer.reset(observing)
    model.save(args.output)
    print(
        f"trained on {summary.questions} questions: {summary.link_candidates} link candidates "
        f"({summary.link_positives} right), {summary.candidates} candidate queries ({summary.positives} right; "
        f"{summary.questions_with_positive} questions have a right one) in {summary.seconds:.0f} s -> {args.output}\n"
        f"the query templates express {summary.expressible} of the {summary.questions} gold queries "
        f"({summary.expressible / summary.questions:.1%})"
    )
    return 0
