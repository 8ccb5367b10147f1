"""Cross-validation of the DBQA ranker on a training file only (never a dev file).

    python benchmarks/dbqa_cv.py ../shared/data/nlpcc-dbqa/train.txt
    python benchmarks/dbqa_cv.py TRAIN --rounds 500 --learning-rate 0.05 --num-leaves 31
    python benchmarks/dbqa_cv.py TRAIN --baseline
    python benchmarks/dbqa_cv.py TRAIN --shift

Questions are dealt to `--folds` folds in a seeded shuffled order; each fold
is scored by a model trained on the others (coqa.dbqa.training.cross_validate).
Prints MAP, MRR and ACC@1 of each fold and their mean; ties count against
the system, as in `coqa eval`. `--baseline` scores by the share of the
question's content characters found in the sentence (no training).
`--shift` trains on the two thirds of the questions whose documents overlap
most with them (the best sentence's character overlap; no label is used to
split) and scores the third that overlaps least: a proxy, within the training
file, for a test set that is harder for lexical features than the training set
(the LightGBM options apply to it too).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from coqa.config import default_settings
from coqa.dbqa.features import document_features
from coqa.dbqa.reading import read_dbqa
from coqa.dbqa.scoring import mean_scores
from coqa.dbqa.training import cross_validate, fit_questions
from coqa.evaluation.metrics import DbqaScores, nlpcc_dbqa_scores

DBQA_BOOSTER = default_settings().dbqa.ranker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train_file")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=DBQA_BOOSTER.rounds)
    parser.add_argument("--learning-rate", type=float, default=DBQA_BOOSTER.learning_rate)
    parser.add_argument("--num-leaves", type=int, default=DBQA_BOOSTER.num_leaves)
    parser.add_argument("--min-data-in-leaf", type=int, default=DBQA_BOOSTER.min_data_in_leaf)
    parser.add_argument("--objective", choices=("lambdarank", "binary"), default=DBQA_BOOSTER.objective)
    parser.add_argument("--baseline", action="store_true", help="character overlap only, no model")
    parser.add_argument("--shift", action="store_true", help="train on the high-overlap two thirds, score the low-overlap third")
    args = parser.parse_args()
    source = read_dbqa(args.train_file)
    settings = replace(
        DBQA_BOOSTER,
        objective=args.objective,
        rounds=args.rounds,
        learning_rate=args.learning_rate,
        num_leaves=args.num_leaves,
        min_data_in_leaf=args.min_data_in_leaf,
    )
    print(f"settings: {settings}, {args.folds} folds, seed {args.seed}")
    started = time.perf_counter()
    if args.baseline:
        groups = [
            ([row["char_overlap"] for row in document_features(q.question, q.sentences)], q.labels) for q in source.questions
        ]
        folds = [nlpcc_dbqa_scores(groups)]
        print("baseline: character overlap of the question's content characters, all questions")
    elif args.shift:
        rows = [document_features(q.question, q.sentences) for q in source.questions]
        overlap = [max((row["char_overlap"] for row in doc), default=0.0) for doc in rows]
        order = sorted(range(len(rows)), key=lambda i: (overlap[i], i))
        hard = order[: len(order) // 3]
        easy = sorted(order[len(order) // 3 :])
        ranker = fit_questions(source.questions, rows, easy, settings, args.seed)
        folds = [nlpcc_dbqa_scores([(ranker.score(rows[i]), source.questions[i].labels) for i in sorted(hard)])]
        print(f"shift: trained on the {len(easy)} questions whose documents overlap most, scored on the other {len(hard)}")
    else:
        folds = cross_validate(source, settings, args.folds, args.seed)
    for number, scores in enumerate(folds, start=1):
        print(f"fold {number}: {line(scores)}")
    print(f"mean:   {line(mean_scores(folds))}")
    print(f"{time.perf_counter() - started:.1f} s")


def line(scores: DbqaScores) -> str:
    return f"questions {scores.questions:4d}  MAP {scores.map:.4f}  MRR {scores.mrr:.4f}  ACC@1 {scores.accuracy_at_1:.4f}"


if __name__ == "__main__":
    main()
