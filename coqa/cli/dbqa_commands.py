"""`coqa train|answer|eval --task nlpcc-dbqa`: NLPCC document-based QA.

The train, answer and eval commands hand a run over to this module when
`--task nlpcc-dbqa` is given, or when no task is given and the input file is
recognisably a DBQA file (lines of 2 or 3 tab-separated fields).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from coqa.cli.common import fail
from coqa.dataset import DatasetError, read_lines

if TYPE_CHECKING:  # the model stack (LightGBM, numpy) is imported only by the run functions
    from coqa.dbqa.model import DbqaModel
    from coqa.dbqa.reading import DbqaFile

DBQA = "nlpcc-dbqa"
TASK_CHOICES = ("kbqa", DBQA)

EXAMPLES = """DBQA examples (NLPCC document-based QA: rank each question's sentences):
  coqa train --task nlpcc-dbqa ../shared/data/nlpcc-dbqa/train.txt -o /tmp/dbqa-model
  coqa answer --task nlpcc-dbqa test.txt -o scores.txt [--model /tmp/dbqa-model]
      one score per input line (the official submission); default: the shipped DBQA model
  coqa eval --task nlpcc-dbqa ../shared/data/nlpcc-dbqa/dev.txt --repair-labels --model /tmp/dbqa-model
      MRR, MAP, ACC@1, the scores by question type and the worst questions"""


def add_task_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose the task and how DBQA labels are read."""
    parser.add_argument(
        "--task",
        choices=TASK_CHOICES,
        help="kbqa (CCKS / NLPCC KBQA) or nlpcc-dbqa; default: recognised from the file",
    )
    parser.add_argument(
        "--repair-labels",
        action="store_true",
        help="nlpcc-dbqa: read a label of several 0/1 digits (such as `10`) as its first digit, "
        "reporting each such line; without it such a line is refused",
    )


def wants_dbqa(args: argparse.Namespace, path: str) -> bool:
    """True when the run is a DBQA one: `--task nlpcc-dbqa`, or no task and a DBQA file."""
    task = getattr(args, "task", None)
    if task is not None:
        return bool(task == DBQA)
    from coqa.dbqa.reading import looks_like_dbqa

    try:
        return looks_like_dbqa(read_lines(path))
    except DatasetError:
        return False  # the task's own reader reports the file


def _read(args: argparse.Namespace, path: str) -> DbqaFile:
    from coqa.dbqa.reading import read_dbqa

    source = read_dbqa(path, repair_labels=args.repair_labels)
    for repair in source.repairs:
        print(f"coqa: {path}:{repair.line}: label {repair.written!r} read as {repair.read_as} (--repair-labels)", file=sys.stderr)
    return source


def _load_model(args: argparse.Namespace) -> DbqaModel:
    from coqa.dbqa.model import DbqaModel

    return DbqaModel.load(getattr(args, "model", None) or None)


def run_train(args: argparse.Namespace) -> int:
    """Train a DBQA model on a labelled file into the folder `args.output`."""
    from coqa.config import load_settings
    from coqa.dbqa.model import DbqaModelError
    from coqa.dbqa.training import train_model

    settings = load_settings(getattr(args, "config", None)).dbqa.ranker
    try:
        source = _read(args, args.train_file)
        if args.limit:
            source.questions = source.questions[: args.limit]
        model, summary = train_model(source, settings, seed=args.seed or 0)
        model.save(args.output)
    except (DatasetError, DbqaModelError) as error:
        return fail(str(error), 2)
    print(
        f"trained on {summary.questions} questions, {summary.sentences} sentences ({summary.positives} right; "
        f"{summary.questions_without_positive} questions without a right one) in {summary.seconds:.1f} s -> {args.output}"
    )
    return 0


def run_answer(args: argparse.Namespace) -> int:
    """Score every line of a DBQA file into `args.output` (one score per line)."""
    from coqa.dbqa.model import DbqaModelError
    from coqa.dbqa.scoring import format_score, score_file, write_scores

    started = time.perf_counter()
    try:
        source = _read(args, args.questions)
        model = _load_model(args)
        scores = score_file(model, source)
        if args.output == "-":
            sys.stdout.write("".join(format_score(score) + "\n" for score in scores))
        else:
            write_scores(scores, args.output)
    except (DatasetError, DbqaModelError) as error:
        return fail(str(error), 2)
    except OSError as error:
        return fail(f"cannot write {args.output}: {error.strerror}")
    print(
        f"{len(source.questions)} questions, {len(scores)} sentences scored in {time.perf_counter() - started:.1f} s -> {args.output}",
        file=sys.stderr,
    )
    return 0


def run_eval(args: argparse.Namespace) -> int:
    """Score a labelled DBQA file and print MRR, MAP, ACC@1, by type and the worst questions."""
    from coqa.dbqa.model import DbqaModelError
    from coqa.dbqa.scoring import evaluate, evaluation_lines, write_scores

    try:
        source = _read(args, args.dev_file)
        if args.limit:
            source.questions = source.questions[: args.limit]
        model = _load_model(args)
        evaluation = evaluate(model, source)
    except (DatasetError, DbqaModelError) as error:
        return fail(str(error), 2)
    lines = evaluation_lines(evaluation)
    print("\n".join(lines))
    if args.out:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
            write_scores(evaluation.scores, out / "scores.txt")
        except OSError as error:
            return fail(f"cannot write reports to {out}: {error.strerror}")
        print(f"\nreports: {out / 'summary.txt'}, {out / 'scores.txt'}")
    return 0
