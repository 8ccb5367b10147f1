"""`coqa answer`, `coqa ask` and `coqa train`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from tqdm import tqdm

from coqa.batch import BatchReport, answer_stream, write_answers
from coqa.cli.common import add_kb_options, fail, settings_from_args
from coqa.dataset import DatasetError, read_ccks, read_questions
from coqa.explanation import Explanation

SHOWN_CANDIDATES = 5


def register(commands: argparse._SubParsersAction) -> None:
    answer = commands.add_parser(
        "answer",
        help="answer a question file into result.txt (official format)",
        description="Answer one question per line (a leading `qN:` is stripped). Writes exactly one line "
        "per input line, in order: answers tab-separated, entities as <name>, literals as \"value\", "
        "an empty line when there is no answer.",
        epilog="example: coqa answer questions.txt -o result.txt --store /data/pkubase-store --jobs 2",
    )
    answer.add_argument("questions", help="question file, UTF-8, one question per line")
    answer.add_argument("-o", "--output", required=True, help="result file to write")
    answer.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    answer.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    add_kb_options(answer)
    answer.set_defaults(run=run_answer)

    ask = commands.add_parser(
        "ask",
        help="answer one question and show why (mentions, links, candidate queries)",
        description="Answer a question and show every step. Without QUESTION, reads questions at a prompt.",
        epilog="example: coqa ask '...的导演是谁？' --store /data/pkubase-store",
    )
    ask.add_argument("question", nargs="?", help="the question (omit for a prompt loop)")
    ask.add_argument("--json", action="store_true", help="print the explanation as JSON")
    ask.add_argument("--top", type=int, default=SHOWN_CANDIDATES, help="candidate queries to show (default 5)")
    ask.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    add_kb_options(ask)
    ask.set_defaults(run=run_ask)

    train = commands.add_parser(
        "train",
        help="train the linking and ranking model on a CCKS-format file",
        description="Train from a CCKS-format file (qN:question / gold SPARQL / gold answers / blank line) "
        "against the knowledge base the gold queries were written for. Seeded and deterministic.",
        epilog="example: coqa train train.txt --store /data/pkubase-store -o models/mine",
    )
    train.add_argument("train_file", help="CCKS-format training file")
    train.add_argument("-o", "--output", required=True, help="model directory to write")
    train.add_argument("--seed", type=int, help="random seed (default: training.seed of the config, 0)")
    train.add_argument("--limit", type=int, help="train on the first N questions only")
    add_kb_options(train)
    train.set_defaults(run=run_train)


def _progress(total: int, description: str) -> tqdm:
    return tqdm(total=total, desc=description, unit="q", disable=not sys.stderr.isatty(), file=sys.stderr)


def run_answer(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.jobs < 1:
        return fail("--jobs must be at least 1", 2)
    try:
        questions = read_questions(args.questions)
    except DatasetError as error:
        return fail(str(error), 2)
    started = time.perf_counter()
    report = BatchReport()
    output = Path(args.output)
    try:
        with open(output, "w", encoding="utf-8", newline="\n") as handle, _progress(len(questions), "answering") as bar:

            def write_line(line: str) -> None:
                handle.write(line + "\n")
                bar.update()

            write_answers(answer_stream(settings, questions, args.jobs), write_line, report)
    except OSError as error:
        return fail(f"cannot write {output}: {error.strerror}")
    seconds = time.perf_counter() - started
    print(
        f"{report.questions} questions, {report.answered} answered, {len(report.failures)} without answer "
        f"in {seconds:.1f} s -> {output}",
        file=sys.stderr,
    )
    return 0


def run_ask(args: argparse.Namespace) -> int:
    from coqa.pipeline import Pipeline

    settings = settings_from_args(args)
    pipeline = Pipeline.from_settings(settings)
    questions = [args.question] if args.question is not None else _prompt()
    for question in questions:
        explanation = pipeline.answer(question).explanation
        if args.json:
            data = explanation.to_dict()
            data["candidates"] = data["candidates"][: args.top]
            print(json.dumps(data, ensure_ascii=False, indent=2))
        else:
            print(format_explanation(explanation, args.top))
    pipeline.close()
    return 0


def _prompt():
    while True:
        try:
            line = input("question> ")
        except EOFError:
            print()
            return
        if line.strip() in ("exit", "quit"):
            return
        if line.strip():
            yield line


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
    if explanation.failure:
        lines.append(f"no answer:  {explanation.failure}")
    lines.append(f"time:       {explanation.seconds * 1000:.1f} ms")
    return "\n".join(lines)


def run_train(args: argparse.Namespace) -> int:
    from coqa.pipeline import Pipeline
    from coqa.training import Trainer

    settings = settings_from_args(args)
    try:
        questions = read_ccks(args.train_file)
    except DatasetError as error:
        return fail(str(error), 2)
    if args.limit:
        questions = questions[: args.limit]
    if not questions:
        return fail(f"no questions in {args.train_file}", 2)
    pipeline = Pipeline.without_model(settings)
    bar = lambda items: tqdm(items, unit="q", disable=not sys.stderr.isatty(), file=sys.stderr)  # noqa: E731
    if args.seed is not None:
        settings = settings.with_overrides({"training": {"seed": args.seed}}, "command line")
    model, summary = Trainer(pipeline, settings, progress=bar).train(questions)
    model.save(args.output)
    print(
        f"trained on {summary.questions} questions: {summary.link_candidates} link candidates "
        f"({summary.link_positives} right), {summary.candidates} candidate queries ({summary.positives} right; "
        f"{summary.questions_with_positive} questions have a right one) in {summary.seconds:.0f} s -> {args.output}\n"
        f"the query templates express {summary.expressible} of the {summary.questions} gold queries "
        f"({summary.expressible / summary.questions:.1%})"
    )
    return 0
