"""Training the linking and ranking models from a CCKS-format training file.

Supervision comes from the gold SPARQL (which entities and predicates the
question is about) and the gold answers (which candidate queries are right).
Statistics learned from the questions themselves (keyphraseness,
predicate associations) and the linking scores fed to the ranker are
cross-fitted: each question's features come from models and counts that did
not see it, so the ranker learns from the same noise it meets at run time.
Everything is seeded: the same inputs give the same model.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np
from threadpoolctl import threadpool_limits
from sklearn.ensemble import HistGradientBoostingClassifier

from coqa.coverage import expressing_template
from coqa.dataset import GoldQuestion
from coqa.evaluation.metrics import question_prf
from coqa.gold import is_variable, parse_query
from coqa.kb.names import Term
from coqa.linking import LinkCandidate
from coqa.mentions import Mention, normalize_question
from coqa.model import FeatureScorer, TrainedModel
from coqa.pipeline import Analysis, Pipeline
from coqa.ranking import PredicateAssociations, PredicateNeighbours, directed, grams, remove_spans

FOLDS = 5
POSITIVE_F1 = 0.5


@dataclass
class TrainingSummary:
    """What the model learned from (printed by `coqa train`)."""

    questions: int
    link_candidates: int
    link_positives: int
    candidates: int
    positives: int
    questions_with_positive: int
    expressible: int  # gold queries some template can express (coqa.coverage)
    seconds: float


def gold_terms(sparql: str) -> tuple[set[Term], list[str]]:
    """Entities/literals in subject or object position of a gold query, and its
    predicates, each also as a directed key (see `directed`)."""
    query = parse_query(sparql)
    predicates: list[str] = []
    for subject, predicate, obj in query.triples:
        if predicate.startswith("<"):
            outward = not is_variable(subject) and is_variable(obj)
            inward = is_variable(subject) and not is_variable(obj)
            predicates.append(predicate[1:-1])
            if outward or inward:
                predicates.append(directed(predicate[1:-1], outward))
    return query.constants(), predicates


LINKER_PARAMETERS = {"max_iter": 300, "learning_rate": 0.08, "max_leaf_nodes": 31}
# Chosen on held-out train questions (train.txt 4201-5220, model fitted on 1-4200), never on dev.
RANKER_PARAMETERS = {"max_iter": 300, "learning_rate": 0.08, "max_leaf_nodes": 63, "l2_regularization": 1.0}


def _fit(rows: Sequence[dict[str, float]], labels: Sequence[int], seed: int, parameters: dict[str, float]) -> FeatureScorer:
    names = sorted({name for row in rows for name in row})
    scorer = FeatureScorer(None, names)
    # One thread: as fast on two cores, and OpenMP threads slow to a crawl on a busy machine.
    with threadpool_limits(limits=1):
        classifier = HistGradientBoostingClassifier(random_state=seed, **parameters)
        scorer.classifier = classifier.fit(scorer.matrix(rows), np.array(labels))
    return scorer


def _is_gold_mention(mention: Mention, gold: set[Term]) -> bool:
    return any(Term(e.target, e.kind == "l") in gold for e in mention.entries)


@dataclass
class _Example:
    question: GoldQuestion
    text: str
    fold: int
    gold: set[Term]
    predicates: list[str]
    mentions: list[Mention]
    link_candidates: list[LinkCandidate] | None = None


class Trainer:
    """Trains a TrainedModel with a pipeline whose KB and index are the training KB's."""

    def __init__(self, pipeline: Pipeline, seed: int = 0, progress: Callable[[Iterable], Iterable] | None = None) -> None:
        self.pipeline = pipeline
        self.seed = seed
        self.progress = progress or (lambda items: items)

    def train(self, questions: Sequence[GoldQuestion]) -> tuple[TrainedModel, TrainingSummary]:
        started = time.perf_counter()
        examples = [self._example(i, q) for i, q in enumerate(questions)]
        keyphraseness = self._keyphraseness_by_fold(examples)
        associations = self._associations_by_fold(examples)
        for example in self.progress(examples):
            self.pipeline.linker.keyphraseness = keyphraseness[example.fold]
            example.link_candidates = self.pipeline.linker.candidates(example.text, example.mentions)
        link_rows, link_labels, link_scores = self._cross_fitted_link_scores(examples)
        rank_rows: list[dict[str, float]] = []
        rank_labels: list[int] = []
        with_positive = 0
        for example, scores in self.progress(list(zip(examples, link_scores))):
            labels = self._rank_examples(example, scores, associations[example.fold], rank_rows)
            rank_labels.extend(labels)
            with_positive += any(labels)
        model = TrainedModel(
            linker=_fit(link_rows, link_labels, self.seed, LINKER_PARAMETERS),
            ranker=_fit(rank_rows, rank_labels, self.seed, RANKER_PARAMETERS),
            keyphraseness=keyphraseness[FOLDS],
            associations=associations[FOLDS],
            info={"questions": len(examples), "seed": self.seed},
        )
        expressible = sum(expressing_template(q.sparql, self.pipeline.templates) is not None for q in questions)
        summary = TrainingSummary(
            len(examples), len(link_rows), sum(link_labels), len(rank_rows), sum(rank_labels), with_positive,
            expressible, time.perf_counter() - started,
        )  # fmt: skip
        model.info.update(vars(summary))
        return model, summary

    def _example(self, i: int, question: GoldQuestion) -> _Example:
        text = normalize_question(question.question)
        gold, predicates = gold_terms(question.sparql)
        mentions = self.pipeline.detect(text)
        return _Example(question, text, i % FOLDS, gold, predicates, mentions)

    @staticmethod
    def _keyphraseness_by_fold(examples: Sequence[_Example]) -> list[dict[str, tuple[int, int]]]:
        """Per fold (and, at index FOLDS, over all): surface -> (gold mention count, match count)."""
        per_fold = [Counter() for _ in range(FOLDS)], [Counter() for _ in range(FOLDS)]
        for example in examples:
            for surface in {m.surface for m in example.mentions}:
                per_fold[1][example.fold][surface] += 1
            for surface in {m.surface for m in example.mentions if _is_gold_mention(m, example.gold)}:
                per_fold[0][example.fold][surface] += 1
        linked_total, seen_total = sum(per_fold[0], Counter()), sum(per_fold[1], Counter())
        tables = []
        for fold in range(FOLDS + 1):
            linked = linked_total - per_fold[0][fold] if fold < FOLDS else linked_total
            seen = seen_total - per_fold[1][fold] if fold < FOLDS else seen_total
            tables.append({surface: (linked.get(surface, 0), count) for surface, count in seen.items() if count > 0})
        return tables

    @staticmethod
    def _associations_by_fold(examples: Sequence[_Example]) -> list[PredicateAssociations]:
        tables = [PredicateAssociations() for _ in range(FOLDS + 1)]
        texts = []
        for example in examples:
            spans = [(m.start, m.end) for m in example.mentions if _is_gold_mention(m, example.gold)]
            texts.append(remove_spans(example.text, spans))
            question_grams = grams(texts[-1])
            for fold, table in enumerate(tables):
                if fold != example.fold:
                    table.add(question_grams, example.predicates)
        neighbours = PredicateNeighbours(texts, [e.predicates for e in examples], [e.fold for e in examples])
        for fold, table in enumerate(tables):
            table.neighbours = neighbours
            table.hidden_fold = fold if fold < FOLDS else None
        return tables

    def _cross_fitted_link_scores(self, examples: Sequence[_Example]) -> tuple[list[dict[str, float]], list[int], list[list[float]]]:
        rows: list[dict[str, float]] = []
        labels: list[int] = []
        owners: list[int] = []
        for i, example in enumerate(examples):
            for candidate in example.link_candidates or []:
                rows.append(candidate.features)
                labels.append(int(candidate.term in example.gold))
                owners.append(i)
        scores = np.zeros(len(rows))
        folds = np.array([examples[i].fold for i in owners])
        for fold in range(FOLDS):
            held_out = folds == fold
            if held_out.any() and (~held_out).any():
                kept = [i for i, hidden in enumerate(held_out) if not hidden]
                scorer = _fit([rows[i] for i in kept], [labels[i] for i in kept], self.seed, LINKER_PARAMETERS)
                scores[held_out] = scorer.score([r for r, h in zip(rows, held_out) if h])
        per_example: list[list[float]] = [[] for _ in examples]
        for owner, score in zip(owners, scores):
            per_example[owner].append(float(score))
        return rows, labels, per_example

    def _rank_examples(
        self, example: _Example, scores: list[float], associations: PredicateAssociations, rows: list[dict[str, float]]
    ) -> list[int]:
        """Append the ranking features of the example's candidates to `rows`; return their labels."""
        candidates = example.link_candidates or []
        analysis: Analysis = self.pipeline.analyse_links(example.text, example.mentions, candidates, scores)
        self.pipeline.featurize(analysis, associations)
        f1s = [question_prf([str(a) for a in c.answers], example.question.answers).f1 for c in analysis.candidates]
        best = max(f1s, default=0.0)
        rows.extend(c.features for c in analysis.candidates)
        return [int(best >= POSITIVE_F1 and f1 >= best) for f1 in f1s]
