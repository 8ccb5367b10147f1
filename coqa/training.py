"""Training the linking and ranking models from a CCKS-format training file.

Supervision comes from the gold SPARQL (which entities and predicates the
question is about) and the gold answers (which candidate queries are right).
Statistics learned from the questions themselves (keyphraseness,
predicate associations) and the linking scores fed to the ranker are
cross-fitted: each question's features come from models and counts that did
not see it, so the ranker learns from the same noise it meets at run time.
Every fold gets its own linker and ranker; the pipeline's stages are never
changed. Everything is seeded: the same inputs give the same model.
"""

from __future__ import annotations

import hashlib
import json
import time
from itertools import accumulate
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from coqa.boosting import BoostedScorer, fit_scorer
from coqa.booster_settings import BoosterSettings
from coqa.config import Settings
from coqa.querygen.coverage import expressing_template
from coqa.dataset import GoldQuestion
from coqa.evaluation.metrics import question_prf
from coqa.gold import as_term, is_variable, parse_query
from coqa.kb.names import Term
from coqa.linking.linker import LINK_FEATURES, EntityLinker, LinkCandidate, best_links
from coqa.linking.model import LinkerModel, fit_keyphraseness, fit_link_scorers
from coqa.mentions.detection import Mention, normalize_question
from coqa.model import TrainedModel
from coqa.pipeline import Pipeline
from coqa.ranking.paraphrase import PredicateParaphrases
from coqa.ranking.answer_features import gold_answer_class_keys
from coqa.ranking.associations import PredicateAssociations
from coqa.ranking.calibration import Calibration
from coqa.ranking.features import rank_features
from coqa.ranking.keys import directed, pair_key
from coqa.ranking.model import RankerModel, fit_paraphrases, fit_statistics
from coqa.ranking.neighbours import PredicateNeighbours
from coqa.ranking.relation_evidence import RelationEvidence
from coqa.ranking.ranker import QueryRanker
from coqa.ranking.wording import remove_spans
from coqa.shapes import TYPE_PREDICATE
from coqa.templates import Template, template_digest


@dataclass
class TrainingSummary:
    """What the model learned from (printed by `coqa train`, kept in meta.json)."""

    questions: int
    link_candidates: int
    link_positives: int
    candidates: int
    positives: int
    questions_with_positive: int
    expressible: int  # gold queries some template can express (coqa.querygen.coverage)
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
    relations = sorted({p[1:-1] for _, p, _ in query.triples if p.startswith("<") and p[1:-1] != TYPE_PREDICATE})
    if len(relations) == 2:
        predicates.append(pair_key(relations))
    return query.constants(), predicates


def nlpcc_training_settings(settings: Settings, questions: Sequence[GoldQuestion], templates: Mapping[str, Template]) -> Settings:
    """The settings to train on an NLPCC file with (the model records them):
    only the shapes its gold queries have (an NLPCC question asks for one
    fact of one subject: other shapes add work and wrong candidates), and
    mentions from one character on when some gold subject is a single
    character named in its question (`狗`, `铑`; the default skips such spans,
    which are noise on PKU BASE); names written by sound or shortened
    (`linking.name_variants`, coqa.mentions.name_variants: NLPCC questions are typed by
    people, with input-method slips and short forms); and the predicate-name
    features (`ranking.name_associations`: each predicate is the gold one of a
    few NLPCC questions at most, so most are rare or unseen). Keys the user set explicitly are kept."""
    shapes = sorted({name for q in questions if (name := expressing_template(q.sparql, templates)) is not None})
    one_character = any(
        len(term.value) == 1 and term.value in normalize_question(q.question)
        for q in questions
        for term in gold_terms(q.sparql)[0]
        if not term.is_literal
    )
    implied: dict[str, dict[str, Any]] = {}
    if shapes and "query_generation.shapes" not in settings.explicit:
        implied["query_generation"] = {"shapes": ",".join(shapes)}
    implied["linking"] = {}
    if one_character and "linking.min_mention_length" not in settings.explicit:
        implied["linking"]["min_mention_length"] = 1
    if "linking.name_variants" not in settings.explicit:
        implied["linking"]["name_variants"] = True
    if "ranking.name_associations" not in settings.explicit:
        implied["ranking"] = {"name_associations": True}
    return replace(settings.with_overrides(implied, "NLPCC training file"), explicit=settings.explicit)




def training_settings(
    settings: Settings, questions: Sequence[GoldQuestion], nlpcc: bool, evidence: RelationEvidence | None, templates: Mapping[str, Template],
) -> Settings:  # fmt: skip
    """The settings a training on `questions` runs with: `ranking.relation_evidence`
    on when `evidence` is given, and for an NLPCC training file
    (`nlpcc`) those of `nlpcc_training_settings`. ValueError when
    `ranking.relation_evidence` is on and no evidence is given."""
    if evidence is not None:
        settings = settings.with_overrides({"ranking": {"relation_evidence": True}}, "command line")
    elif settings.ranking.relation_evidence:
        raise ValueError("ranking.relation_evidence is on: give its file with --relation-evidence FILE")
    return nlpcc_training_settings(settings, questions, templates) if nlpcc else settings


def training_data_digest(questions: Sequence[GoldQuestion]) -> str:
    """SHA-256 of the training questions, their gold queries and answers."""
    records = [[q.question, q.sparql, list(q.answers)] for q in questions]
    return hashlib.sha256(json.dumps(records, ensure_ascii=False).encode("utf-8")).hexdigest()


def link_label(term: Term, gold: set[Term]) -> int:
    """The relevance grade of linking `term` in a question whose gold constants
    are `gold`: 2 for a gold entity, 1 for a gold literal, 0 otherwise. A gold
    value (`"5A"` in 等级为5a的景点) is right to link but is a constraint on the
    entity the question is about, which should come first; a pointwise
    linker reads every positive grade as right."""
    if term not in gold:
        return 0
    return 1 if term.is_literal else 2


def _is_gold_mention(mention: Mention, gold: set[Term]) -> bool:
    return any(Term(e.target, e.kind == "l") in gold for e in mention.entries)


def _wording(example: _Example) -> str:
    """The question with its gold mentions taken out: the words that ask for the predicates."""
    return remove_spans(example.text, [(m.start, m.end) for m in example.mentions if _is_gold_mention(m, example.gold)])


def _mention_surfaces(example: _Example) -> tuple[int, set[str], set[str]]:
    """The example's fold, the surfaces matched in it and those that were a gold
    mention, for the keyphraseness table. A mention spanning its whole question
    is not counted: it says nothing about which part of a question is the key
    phrase, and the table over all ships in the model, which must not hold a
    training question verbatim."""
    within = [m for m in example.mentions if (m.start, m.end) != (0, len(example.text))]
    return example.fold, {m.surface for m in within}, {m.surface for m in within if _is_gold_mention(m, example.gold)}


@dataclass(frozen=True)
class LinkScores:
    """Cross-fitted scores of an example's link candidates, one per candidate:
    `scores` (probabilities) and `order` (see `coqa.linking.model.LinkerModel`)."""

    scores: list[float]
    order: list[float]


@dataclass
class _Example:
    question: GoldQuestion
    text: str
    fold: int
    gold: set[Term]
    predicates: list[str]
    shape: str | None  # the registered shape whose template expresses the gold query
    mentions: list[Mention]
    link_candidates: list[LinkCandidate] = field(default_factory=list)


@dataclass
class RankingTable:
    """The ranker's training rows, question by question (`groups` are the
    sizes of consecutive runs of one question's rows), with each row's answer
    F1 and the question's fold."""

    rows: list[dict[str, float]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    f1s: list[float] = field(default_factory=list)
    answer_counts: list[int] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)
    folds: list[int] = field(default_factory=list)

    def questions_with_positive(self) -> int:
        ends = accumulate(self.groups)
        return sum(1 for size, end in zip(self.groups, ends) if any(self.labels[end - size : end]))


class Trainer:
    """Trains a TrainedModel with a pipeline (no model) over the training KB.

    `evidence` (coqa.ranking.relation_evidence) is required with
    `ranking.relation_evidence` and ignored without: ValueError otherwise."""

    def __init__(
        self, pipeline: Pipeline, settings: Settings, progress: Callable[[Iterable], Iterable] | None = None,
        evidence: RelationEvidence | None = None,
    ) -> None:  # fmt: skip
        if settings.ranking.relation_evidence and evidence is None:
            raise ValueError("ranking.relation_evidence is on but no relation-evidence file was given (coqa train --relation-evidence FILE)")
        self.pipeline = pipeline
        self.settings = settings
        self.evidence = evidence if settings.ranking.relation_evidence else None
        self.folds = settings.training.folds
        self.seed = settings.training.seed
        self.progress = progress or (lambda items: items)

    def train(self, questions: Sequence[GoldQuestion]) -> tuple[TrainedModel, TrainingSummary]:
        started = time.perf_counter()
        examples, keyphraseness, link_scores, (linker_scorer, order_scorer) = self.link_examples(questions)
        associations, neighbours, paraphrases = self.ranking_statistics(examples)
        table = self.ranking_table(examples, link_scores, associations, neighbours, paraphrases)
        ranker_scorer = self._fit(table.rows, table.labels, table.groups, rank_features(self.settings.ranking), self.settings.training.ranker)
        calibration = Calibration.fit_out_of_fold(
            table.rows, table.labels, table.groups, table.folds, table.f1s, table.answer_counts,
            lambda rows, labels, groups: self._fit(rows, labels, groups, rank_features(self.settings.ranking), self.settings.training.ranker),
        )  # fmt: skip
        expressible = sum(e.shape is not None for e in examples)
        link_labels = [link_label(c.term, e.gold) for e in examples for c in e.link_candidates]
        summary = TrainingSummary(
            len(examples), len(link_labels), sum(label > 0 for label in link_labels), len(table.rows), sum(table.labels),
            table.questions_with_positive(), expressible, time.perf_counter() - started,
        )  # fmt: skip
        model = TrainedModel(
            linker=LinkerModel(keyphraseness[self.folds], linker_scorer, order_scorer),
            ranker=RankerModel(
                associations[self.folds], neighbours, ranker_scorer, paraphrases[self.folds], calibration=calibration, evidence=self.evidence
            ),
            settings=self.settings.algorithm(),
            template_digest=template_digest(self.pipeline.templates),
            training_data_digest=training_data_digest(questions),
            figures={key: value for key, value in asdict(summary).items() if key != "seconds"},  # same data, same bytes
        )
        return model, summary

    def link_examples(
        self, questions: Sequence[GoldQuestion]
    ) -> tuple[list[_Example], list[dict[str, tuple[int, int]]], list[LinkScores], tuple[BoostedScorer, BoostedScorer | None]]:
        """The examples with their link candidates, the keyphraseness table per
        fold (index `folds`: over all), the cross-fitted link scores per
        example, and the linker's scorers fitted on all examples (`_fit_linker`)."""
        examples = [self._example(i, q) for i, q in enumerate(questions)]
        keyphraseness = fit_keyphraseness([_mention_surfaces(e) for e in examples], self.folds)
        linkers = [
            EntityLinker(self.pipeline.kb, self.pipeline.templates, LinkerModel(table), self.settings.linking)
            for table in keyphraseness[: self.folds]
        ]
        for example in self.progress(examples):
            example.link_candidates = linkers[example.fold].candidates(example.text, example.mentions)
        rows = [c.features for e in examples for c in e.link_candidates]
        labels = [link_label(c.term, e.gold) for e in examples for c in e.link_candidates]
        groups = [len(e.link_candidates) for e in examples if e.link_candidates]
        folds = np.array([e.fold for e in examples for _ in e.link_candidates])
        scores, order = np.zeros(len(rows)), np.zeros(len(rows))
        for fold in range(self.folds):
            held_out = folds == fold
            if held_out.any() and (~held_out).any():
                kept_groups = [len(e.link_candidates) for e in examples if e.link_candidates and e.fold != fold]
                fold_scorers = fit_link_scorers(
                    [r for r, h in zip(rows, held_out) if not h], [label for label, h in zip(labels, held_out) if not h], kept_groups,
                    LINK_FEATURES, self.settings.training.linker, self.seed,
                )  # fmt: skip
                held_rows = [r for r, h in zip(rows, held_out) if h]
                scores[held_out] = fold_scorers[0].score(held_rows)
                order[held_out] = (fold_scorers[1] or fold_scorers[0]).score(held_rows)
        per_example: list[LinkScores] = []
        start = 0
        for example in examples:
            end = start + len(example.link_candidates)
            per_example.append(LinkScores(scores[start:end].tolist(), order[start:end].tolist()))
            start = end
        return examples, keyphraseness, per_example, fit_link_scorers(rows, labels, groups, LINK_FEATURES, self.settings.training.linker, self.seed)

    def ranking_statistics(
        self, examples: Sequence[_Example]
    ) -> tuple[list[PredicateAssociations], PredicateNeighbours, list[PredicateParaphrases | None]]:
        """What the ranker's features are learned from, per cross-fitting fold
        (index `folds`: over all): the association counts, the TF-IDF neighbours
        (one table, which hides a question's own fold when asked) and, with
        `ranking.name_associations`, the predicate paraphrases (None without)."""
        wordings = [_wording(e) for e in examples]
        predicates, folds = [e.predicates for e in examples], [e.fold for e in examples]
        answer_classes = [gold_answer_class_keys([as_term(a) or Term.literal(a) for a in e.question.answers]) for e in examples]
        associations, neighbours = fit_statistics(
            wordings, predicates, answer_classes, [e.shape for e in examples], folds, self.folds, self.settings.ranking
        )  # fmt: skip
        paraphrases: list[PredicateParaphrases | None] = [None] * (self.folds + 1)
        if self.settings.ranking.name_associations:
            paraphrases = list(fit_paraphrases(wordings, predicates, folds, self.folds))
        return associations, neighbours, paraphrases

    def ranking_table(
        self,
        examples: Sequence[_Example],
        link_scores: Sequence[LinkScores],
        associations: Sequence[PredicateAssociations],
        neighbours: PredicateNeighbours,
        paraphrases: Sequence[PredicateParaphrases | None],
    ) -> RankingTable:
        """The ranker's training rows, from cross-fitted links and statistics."""
        rankers = [
            QueryRanker(
                RankerModel(associations[fold], neighbours, paraphrases=paraphrases[fold], evidence=self.evidence), self.settings.ranking,
                hidden_fold=fold,
            )  # fmt: skip
            for fold in range(self.folds)
        ]
        table = RankingTable()
        for example, scores in self.progress(list(zip(examples, link_scores))):
            linked = best_links(example.link_candidates, scores.scores, scores.order)
            candidates = self.pipeline.generate(example.text, linked, associations[example.fold])
            if not candidates:
                continue
            f1s = [question_prf([str(a) for a in c.answers], example.question.answers).f1 for c in candidates]
            best = max(f1s)
            table.rows.extend(rankers[example.fold].featurize(example.text, linked, candidates))
            table.labels.extend(int(best >= self.settings.training.positive_f1 and f1 >= best) for f1 in f1s)
            table.f1s.extend(f1s)
            table.answer_counts.extend(len(c.answers) for c in candidates)
            table.groups.append(len(candidates))
            table.folds.append(example.fold)
        return table

    def _fit(
        self, rows: Sequence[Mapping[str, float]], labels: Sequence[int], groups: Sequence[int], names: Sequence[str],
        settings: BoosterSettings,
    ) -> BoostedScorer:  # fmt: skip
        return fit_scorer(rows, labels, groups, names, settings, self.seed)

    def _example(self, i: int, question: GoldQuestion) -> _Example:
        text = normalize_question(question.question)
        gold, predicates = gold_terms(question.sparql)
        mentions = self.pipeline.detect(text)
        shape = expressing_template(question.sparql, self.pipeline.templates)
        return _Example(question, text, i % self.folds, gold, predicates, shape, mentions)
