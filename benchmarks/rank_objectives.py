"""Pointwise (binary) against listwise (LambdaRank) LightGBM models, and
rankers with and without some features, by cross-validation on a training
file only (never a dev file).

    python benchmarks/rank_objectives.py ../shared/data/pkubase-bench/train.txt --store /tmp/s

The training rows are built once, as `coqa train` builds them (cross-fitted
statistics and link scores; `--relation-evidence FILE` and `--config FILE`
as in `coqa train`). Then for each fold, each objective is trained
on the other folds with the configured model settings and judged on the
held-out questions: entity linking by the share of questions whose best
linked term is a gold entity or value (recall@1), ranking by the averaged F1
of the top candidate's answers (questions without candidates count 0).
The ranking rows carry the link scores of the configured linker
(`training.linker.objective`; COQA_TRAINING__LINKER__OBJECTIVE=lambdarank
compares the rankers over a listwise linker).

    python benchmarks/rank_objectives.py TRAIN --store /tmp/s --without x_ a_date --seeds 0 1 2

judges ranking features instead: the configured ranker with all features
against the same ranker without the features whose names start with the
given prefixes (both on the same rows and folds), once per training seed
(`--seeds`, default the configured one), with the mean over seeds. Every
question of the file is held out once, so the figure varies far less than
one held-out split's (`benchmarks/split.py`); the cross-fitting folds are
`training.folds` (another count through `--config` is another reading).
`--limit N` uses the first N questions only.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from coqa.boosting import fit_scorer
from coqa.booster_settings import BoosterSettings
from coqa.config import load_settings
from coqa.dataset import QuestionFormat, read_gold_questions, read_question_file
from coqa.linking.linker import LINK_FEATURES, best_links
from coqa.pipeline import Pipeline
from coqa.ranking.features import rank_features
from coqa.ranking.relation_evidence import RelationEvidence
from coqa.resources import QUERIES_DIR
from coqa.templates import load_templates
from coqa.training import RankingTable, Trainer, link_label, training_settings

OBJECTIVES = ("binary", "lambdarank")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train_file")
    parser.add_argument("--store", required=True)
    parser.add_argument("--config", help="a settings file, as `coqa --config FILE train`")
    parser.add_argument("--relation-evidence", help="as `coqa train --relation-evidence FILE`")
    parser.add_argument("--limit", type=int, default=0, help="the first N questions only")
    parser.add_argument("--without", nargs="+", default=[], help="compare the ranker (with --linking: the linker) without features of these prefixes")
    parser.add_argument("--seeds", nargs="+", type=int, help="training seeds of the --without comparison (default: the configured one)")
    parser.add_argument("--linking", action="store_true", help="judge entity linking only (no ranking rows: much faster)")
    args = parser.parse_args()
    settings = load_settings(Path(args.config) if args.config else None, {"store": args.store})
    questions = read_gold_questions(args.train_file)
    if args.limit:
        questions = questions[: args.limit]
    evidence = RelationEvidence.fit(read_gold_questions(args.relation_evidence)) if args.relation_evidence else None
    nlpcc = read_question_file(args.train_file).kind == QuestionFormat.NLPCC
    settings = training_settings(settings, questions, nlpcc, evidence, load_templates(QUERIES_DIR))
    trainer = Trainer(Pipeline.without_model(settings), settings, evidence=evidence)
    training = settings.training
    started = time.perf_counter()
    examples, _, link_scores, _ = trainer.link_examples(questions)
    if args.linking:
        print(f"link candidates built in {time.perf_counter() - started:.0f} s: {len(questions)} questions")
        kept: tuple[str, ...] = tuple(name for name in LINK_FEATURES if not name.startswith(tuple(args.without)))
        print("entity linking on held-out folds: top term gold / gold entities that are the top term (as `coqa eval`):")
        variants: list[tuple[str, str, tuple[str, ...]]] = [(objective, objective, LINK_FEATURES) for objective in OBJECTIVES]
        if args.without:
            variants.append((f"{training.linker.objective} without {' '.join(args.without)}", training.linker.objective, kept))
        for label, objective, names in variants:
            begun = time.perf_counter()
            top, share = linking_cv(examples, names, replace(training.linker, objective=objective), training.folds, training.seed)
            print(f"  {label:<40} {top:.4f} / {share:.4f}  ({len(names)} features, {time.perf_counter() - begun:.0f} s)")
        return
    table = trainer.ranking_table(examples, link_scores, *trainer.ranking_statistics(examples))
    print(f"rows built in {time.perf_counter() - started:.0f} s: {len(questions)} questions, {len(table.rows)} candidates")
    features = rank_features(settings.ranking)
    if args.without:
        kept = tuple(name for name in features if not name.startswith(tuple(args.without)))
        seeds = args.seeds if args.seeds is not None else [training.seed]
        print(f"query ranking ({training.ranker.objective}), averaged F1 of the top candidate on held-out folds, seeds {' / '.join(map(str, seeds))} (mean):")
        for label, names in (("all features", features), (f"without {' '.join(args.without)}", kept)):
            f1s = [ranking_cv(table, names, training.ranker, training.folds, seed) / len(questions) for seed in seeds]
            readings = " / ".join(f"{f1:.4f}" for f1 in f1s)
            print(f"  {label:<40} {readings} ({statistics.mean(f1s):.4f})  ({len(names)} features)", flush=True)
        return

    print("entity linking, recall@1 on held-out folds:")
    for objective in OBJECTIVES:
        begun = time.perf_counter()
        top, _ = linking_cv(examples, LINK_FEATURES, replace(training.linker, objective=objective), training.folds, training.seed)
        print(f"  {objective:<10} {top:.4f}  ({time.perf_counter() - begun:.0f} s for {training.folds} fits)")

    print("query ranking, averaged F1 of the top candidate on held-out folds:")
    for objective in OBJECTIVES:
        begun = time.perf_counter()
        total = ranking_cv(table, features, replace(training.ranker, objective=objective), training.folds, training.seed)
        print(f"  {objective:<10} {total / len(questions):.4f}  ({time.perf_counter() - begun:.0f} s for {training.folds} fits)")


def linking_cv(examples: Sequence[Any], names: Sequence[str], booster: BoosterSettings, folds: int, seed: int) -> tuple[float, float]:
    """Linkers with features `names` trained on the other folds, judged on each
    fold: the share of questions whose top linked term is gold, and the mean
    over questions with gold entities of the share of them that is the top
    linked term (`coqa eval`'s entity-linking recall@1)."""
    hits, shares, with_entities = 0, 0.0, 0
    for fold in range(folds):
        kept = [e for e in examples if e.fold != fold and e.link_candidates]
        rows = [{name: c.features[name] for name in names} for e in kept for c in e.link_candidates]
        labels = [link_label(c.term, e.gold) for e in kept for c in e.link_candidates]
        scorer = fit_scorer(rows, labels, [len(e.link_candidates) for e in kept], names, booster, seed)
        for example in (e for e in examples if e.fold == fold):
            scores = scorer.score([{name: c.features[name] for name in names} for c in example.link_candidates])
            linked = best_links(example.link_candidates, scores, scores)
            hits += bool(linked) and linked[0].term in example.gold
            entities = [t for t in example.gold if not t.is_literal]
            if entities:
                with_entities += 1
                shares += (bool(linked) and linked[0].term in entities) / len(entities)
    return hits / len(examples), shares / max(with_entities, 1)


def ranking_cv(table: RankingTable, names: Sequence[str], booster: BoosterSettings, folds: int, seed: int) -> float:
    """Sum over the questions of the F1 of the top candidate of a ranker with
    features `names` trained on the other folds."""
    group_folds = np.array(table.folds)
    starts = np.concatenate([[0], np.cumsum(table.groups)[:-1]])
    total = 0.0
    for fold in range(folds):
        kept = np.flatnonzero(group_folds != fold)
        rows = [i for g in kept for i in range(starts[g], starts[g] + table.groups[g])]
        scorer = fit_scorer(
            [{name: table.rows[i][name] for name in names} for i in rows], [table.labels[i] for i in rows],
            [table.groups[g] for g in kept], names, booster, seed,
        )  # fmt: skip
        for g in np.flatnonzero(group_folds == fold):
            span = range(starts[g], starts[g] + table.groups[g])
            scores = scorer.score([{name: table.rows[i][name] for name in names} for i in span])
            total += table.f1s[span[int(np.argmax(scores))]]
    return total


if __name__ == "__main__":
    main()
