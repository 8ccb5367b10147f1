"""Pointwise (binary) against listwise (LambdaRank) LightGBM models, by
cross-validation on a training file only (never a dev file).

    python benchmarks/rank_objectives.py ../shared/data/pkubase-bench/train.txt --store /tmp/s

The training rows are built once, as `coqa train` builds them (cross-fitted
statistics and link scores). Then for each fold, each objective is trained
on the other folds with the configured model settings and judged on the
held-out questions: entity linking by the share of questions whose best
linked term is a gold entity or value (recall@1), ranking by the averaged F1
of the top candidate's answers (questions without candidates count 0).
The ranking rows carry the link scores of the configured linker
(`training.linker.objective`; COQA_TRAINING__LINKER__OBJECTIVE=lambdarank
compares the rankers over a listwise linker).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from coqa.boosting import fit_scorer
from coqa.config import load_settings
from coqa.dataset import read_ccks
from coqa.linking import LINK_FEATURES, best_links
from coqa.pipeline import Pipeline
from coqa.ranking import RANK_FEATURES
from coqa.training import Trainer

OBJECTIVES = ("binary", "lambdarank")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train_file")
    parser.add_argument("--store", required=True)
    args = parser.parse_args()
    settings = load_settings(flags={"store": args.store})
    questions = read_ccks(args.train_file)
    trainer = Trainer(Pipeline.without_model(settings), settings)
    training = settings.training
    started = time.perf_counter()
    examples, _, link_scores, _ = trainer.link_examples(questions)
    associations, neighbours = trainer.ranking_statistics(examples)
    table = trainer.ranking_table(examples, link_scores, associations, neighbours)
    print(f"rows built in {time.perf_counter() - started:.0f} s: {len(questions)} questions, {len(table.rows)} candidates")

    print("entity linking, recall@1 on held-out folds:")
    for objective in OBJECTIVES:
        booster = replace(training.linker, objective=objective)
        begun = time.perf_counter()
        hits = 0
        for fold in range(training.folds):
            kept = [e for e in examples if e.fold != fold and e.link_candidates]
            held = [e for e in examples if e.fold == fold]
            rows = [c.features for e in kept for c in e.link_candidates]
            labels = [int(c.term in e.gold) for e in kept for c in e.link_candidates]
            scorer = fit_scorer(rows, labels, [len(e.link_candidates) for e in kept], LINK_FEATURES, booster, training.seed)
            for example in held:
                linked = best_links(example.link_candidates, scorer.score([c.features for c in example.link_candidates]))
                hits += bool(linked) and linked[0].term in example.gold
        print(f"  {objective:<10} {hits / len(examples):.4f}  ({time.perf_counter() - begun:.0f} s for {training.folds} fits)")

    print("query ranking, averaged F1 of the top candidate on held-out folds:")
    group_folds = np.array(table.folds)
    starts = np.concatenate([[0], np.cumsum(table.groups)[:-1]])
    for objective in OBJECTIVES:
        booster = replace(training.ranker, objective=objective)
        begun = time.perf_counter()
        total = 0.0
        for fold in range(training.folds):
            kept = np.flatnonzero(group_folds != fold)
            rows = [i for g in kept for i in range(starts[g], starts[g] + table.groups[g])]
            scorer = fit_scorer(
                [table.rows[i] for i in rows], [table.labels[i] for i in rows], [table.groups[g] for g in kept],
                RANK_FEATURES, booster, training.seed,
            )  # fmt: skip
            for g in np.flatnonzero(group_folds == fold):
                span = range(starts[g], starts[g] + table.groups[g])
                scores = scorer.score([table.rows[i] for i in span])
                total += table.f1s[span[int(np.argmax(scores))]]
        print(f"  {objective:<10} {total / len(questions):.4f}  ({time.perf_counter() - begun:.0f} s for {training.folds} fits)")


if __name__ == "__main__":
    main()
