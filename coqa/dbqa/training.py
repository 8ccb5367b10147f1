"""Training a DBQA model from a labelled file, and cross-validation by question.

Deterministic: the features do not depend on hash seeds, LightGBM runs
seeded, deterministic and on one thread, so the same file, seed and settings
give a byte-identical model folder.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from typing import Sequence

from coqa.booster_settings import BoosterSettings
from coqa.dbqa.features import document_features
from coqa.dbqa.model import DbqaModel
from coqa.dbqa.ranker import SentenceRanker
from coqa.dbqa.reading import DbqaFile, DbqaFormatError, DbqaQuestion
from coqa.evaluation.metrics import DbqaScores, nlpcc_dbqa_scores


@dataclass(frozen=True)
class TrainingSummary:
    questions: int
    sentences: int
    positives: int
    questions_without_positive: int
    seconds: float


def train_model(source: DbqaFile, settings: BoosterSettings, seed: int = 0) -> tuple[DbqaModel, TrainingSummary]:
    """A model trained on every question of a labelled file with the LightGBM
    `settings` (config.yaml's dbqa.ranker); DbqaFormatError when the file has
    no labels or no positive sentence."""
    started = time.perf_counter()
    if not source.labelled:
        raise DbqaFormatError(f"{source.path} has no labels (question<TAB>sentence lines): training needs labelled lines")
    positives = sum(sum(question.labels) for question in source.questions)
    if not positives:
        raise DbqaFormatError(f"{source.path} has no sentence labelled 1: nothing to learn from")
    rows = [document_features(question.question, question.sentences) for question in source.questions]
    ranker = fit_questions(source.questions, rows, range(len(source.questions)), settings, seed)
    figures = {
        "questions": len(source.questions),
        "sentences": source.lines,
        "positives": positives,
        "questions_without_positive": sum(1 for question in source.questions if not any(question.labels)),
        "repaired_labels": len(source.repairs),
    }
    recorded = {"booster": asdict(settings), "seed": seed}
    model = DbqaModel(ranker, recorded, source.digest(), figures)
    summary = TrainingSummary(
        figures["questions"], figures["sentences"], positives, figures["questions_without_positive"], time.perf_counter() - started
    )
    return model, summary


def fit_questions(
    questions: Sequence[DbqaQuestion],
    rows: Sequence[list[dict[str, float]]],
    chosen: Sequence[int],
    settings: BoosterSettings,
    seed: int,
) -> SentenceRanker:
    """A ranker fitted on the questions at the indices `chosen` (`rows[i]`: the feature rows of question i)."""
    flat = [row for i in chosen for row in rows[i]]
    labels = [label for i in chosen for label in questions[i].labels]
    groups = [len(rows[i]) for i in chosen]
    return SentenceRanker.fit(flat, labels, groups, settings, seed)


def cross_validate(source: DbqaFile, settings: BoosterSettings, folds: int = 5, seed: int = 0) -> list[DbqaScores]:
    """The scores of each of `folds` held-out folds of questions (questions
    dealt to folds in a seeded shuffled order), each scored by a model
    trained on the other folds."""
    if folds < 2 or folds > len(source.questions):
        raise ValueError(f"cross-validation needs between 2 and {len(source.questions)} folds, not {folds}")
    rows = [document_features(question.question, question.sentences) for question in source.questions]
    order = list(range(len(source.questions)))
    random.Random(seed).shuffle(order)
    fold_of = {question: position % folds for position, question in enumerate(order)}
    results = []
    for fold in range(folds):
        held_out = [i for i in range(len(order)) if fold_of[i] == fold]
        trained = [i for i in range(len(order)) if fold_of[i] != fold]
        ranker = fit_questions(source.questions, rows, trained, settings, seed)
        groups = [(ranker.score(rows[i]), source.questions[i].labels) for i in held_out]
        results.append(nlpcc_dbqa_scores(groups))
    return results
