"""The pipeline: question -> mentions -> linked entities -> candidate queries
-> ranked -> executed -> answers, with the explanation of every step.

`Pipeline.from_settings(settings).answer(text)` is the library entry point;
the CLI, `coqa eval` and the training loop all go through it.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

from coqa.config import ConfigError, Settings
from coqa.mentions.cues import CUES
from coqa.explanation import Answer, CandidateRecord, Explanation, Failure, FailureKind, LinkedTerm, MentionRecord
from coqa.querygen.candidate import CapCut
from coqa.kb import KnowledgeBase, mention_index_directory, open_kb
from coqa.kb.base import KBError, KBUnreachable
from coqa.kb.mention_index import MentionIndex
from coqa.kb.result_cache import CachedKnowledgeBase
from coqa.linking.linker import EntityLinker, LinkCandidate, LinkedNode
from coqa.mentions.detection import Mention, detect_mentions, normalize_question
from coqa.mentions.name_variants import NameVariants
from coqa.model import ModelError, TrainedModel
from coqa.querygen.candidate import Candidate
from coqa.querygen.generator import QueryGenerator
from coqa.querygen.relevance import PredicateAssociation
from coqa.ranking.associations import PredicateAssociations
from coqa.ranking.keys import directed
from coqa.ranking.ranker import QueryRanker
from coqa.ranking.wording import grams
from coqa.resources import QUERIES_DIR
from coqa.shapes import SHAPES
from coqa.templates import Template, load_templates

log = logging.getLogger("coqa")
_Stage = TypeVar("_Stage", EntityLinker, QueryRanker)
MAX_QUESTION_LENGTH = 300
SHAPE_ORDER = {shape.name: i for i, shape in enumerate(SHAPES)}


@dataclass
class Analysis:
    """The intermediate results for one question (what training needs too)."""

    text: str
    mentions: list[Mention]
    link_candidates: list[LinkCandidate]
    linked: list[LinkedNode]
    candidates: list[Candidate]
    cuts: list[CapCut] = field(default_factory=list)  # query_generation settings that cut something


def canonical_order(candidates: list[Candidate], linked: list[LinkedNode]) -> list[Candidate]:
    """A question's candidates in a total order that depends on nothing but
    their content: by the link rank of their nodes, shape, then bindings."""
    rank = {node: i for i, node in enumerate(linked)}

    def key(candidate: Candidate) -> tuple:
        return (
            tuple(rank.get(node, len(linked)) for node in candidate.nodes),
            SHAPE_ORDER[candidate.shape.name],
            tuple(sorted(candidate.bindings.items())),
        )

    return sorted(candidates, key=key)


def learned_association(associations: PredicateAssociations) -> PredicateAssociation:
    """Query generation's learned relevance: for a text, the best association
    of a predicate (directed, or not when `outward` is None) with the
    character grams of the text (query generation memoises the scores)."""

    def for_text(text: str) -> Callable[[str, bool | None], float]:
        against = associations.against(grams(text))
        return lambda predicate, outward: against.best(predicate if outward is None else directed(predicate, outward))

    return for_text


class Pipeline:
    """Answers questions over one knowledge base with one trained model.

    Without a model (training), `detect` and `generate` work and `answer`
    raises ModelError. The algorithm settings in effect are the model's,
    except for the keys set explicitly in `settings` (Settings.algorithm_for_model).
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        index: MentionIndex,
        model: TrainedModel | None,
        templates: dict[str, Template],
        settings: Settings,
        extra_spans: Callable[[str], Iterable[tuple[int, int]]] | None = None,
        rows_lifetime: float | None = None,
    ) -> None:
        # The rows of recent queries, in front of `kb`, kept for `rows_lifetime`
        # seconds (None: the whole run). The embedded store keeps them as long
        # as it runs whatever the lifetime: coqa opens it as a snapshot that
        # cannot change meanwhile.
        lifetime = None if settings.backend == "oxigraph" else rows_lifetime
        self.kb = CachedKnowledgeBase(kb, settings.kb_cache_rows, lifetime)
        self.index = index
        self.model = model
        self.templates = templates
        self.extra_spans = extra_spans
        if model is not None:
            try:
                settings = settings.algorithm_for_model(model.settings)
            except ConfigError as error:
                raise ModelError(f"the model's recorded settings cannot be used ({error}); retrain with `coqa train`") from None
        self.settings = settings
        self.generator = QueryGenerator(self.kb, templates, settings.query_generation, settings.kb_nodes_per_query)
        self.name_variants = NameVariants.build(index) if settings.linking.name_variants else None
        self.linker = EntityLinker(self.kb, templates, model.linker, settings.linking, self.generator.reader.reads) if model else None
        self.ranker = QueryRanker(model.ranker, settings.ranking) if model else None

    @classmethod
    def from_settings(cls, settings: Settings, rows_lifetime: float | None = None) -> "Pipeline":
        """Open the KB, mention index and model the settings name (KBError,
        ModelError or NERUnavailable with a clear message when one cannot be opened).
        `rows_lifetime`: seconds the rows of a query are answered from memory
        (None: for the whole run, as `coqa answer` and `eval` do; `coqa serve`
        passes `kb_cache_seconds`, so an engine whose data changes is read again)."""
        templates = load_templates(QUERIES_DIR)
        model = TrainedModel.load(settings.model_path, templates)
        return cls._open(settings, model, templates, rows_lifetime)

    @classmethod
    def without_model(cls, settings: Settings) -> "Pipeline":
        """A pipeline over the settings' KB and index without a model (for training)."""
        return cls._open(settings, None, load_templates(QUERIES_DIR))

    @classmethod
    def _open(
        cls, settings: Settings, model: TrainedModel | None, templates: dict[str, Template], rows_lifetime: float | None = None
    ) -> "Pipeline":
        index_dir = mention_index_directory(settings.kb_config())
        try:
            index = MentionIndex.open(index_dir)
        except FileNotFoundError as error:
            raise KBError(str(error)) from None
        extra_spans = None
        if settings.hanlp:
            from coqa.mentions.ner import hanlp_spans

            extra_spans = hanlp_spans()
        return cls(open_kb(settings.kb_config()), index, model, templates, settings, extra_spans, rows_lifetime)

    def detect(self, text: str) -> list[Mention]:
        """Mentions in the normalized question."""
        mentions = detect_mentions(text, self.index, self.extra_spans, self.settings.linking.min_mention_length)
        if self.name_variants is None:
            return mentions
        variants = self.name_variants.mentions(text, ((m.start, m.end) for m in mentions))
        return sorted(mentions + variants, key=lambda m: (m.start, -m.end))

    def generate(self, text: str, linked: list[LinkedNode], associations: PredicateAssociations | None = None) -> list[Candidate]:
        """Candidate queries for the linked nodes of the normalized question (see `generate_recorded`)."""
        return self.generate_recorded(text, linked, associations)[0]

    def generate_recorded(
        self, text: str, linked: list[LinkedNode], associations: PredicateAssociations | None = None
    ) -> tuple[list[Candidate], list[CapCut]]:
        """`generate`, with the query_generation settings that cut something.
        The predicates around a node are chosen with the question-word
        associations of `associations` (default: the model's; training passes
        those of the other folds), none without a model.
        Candidates come in canonical order: by the link rank of their nodes,
        shape, then bindings. The generator groups some candidates through
        sets, whose iteration order changes with PYTHONHASHSEED; the ranker's
        training rows and its ties must not, so that the same inputs train the
        same model in any process."""
        if associations is None and self.model is not None:
            associations = self.model.ranker.associations
        association = learned_association(associations) if associations is not None else None
        count_question = bool(CUES["count"].search(text))
        candidates, cuts = self.generator.generate_recorded(linked, text, count_question, association)
        return canonical_order(candidates, linked), cuts

    def analyse(self, text: str) -> Analysis:
        """Mentions, scored links and candidate queries for a normalized question."""
        linker = self._trained(self.linker)
        mentions = self.detect(text)
        linking = linker.link(text, mentions)
        candidates, cuts = self.generate_recorded(text, linking.linked)
        return Analysis(text, mentions, linking.candidates, linking.linked, candidates, cuts)

    def rank(self, analysis: Analysis) -> list[tuple[float, Candidate]]:
        """Candidates with their scores, best first."""
        return self._trained(self.ranker).rank(analysis.text, analysis.linked, analysis.candidates)

    @staticmethod
    def _trained(stage: _Stage | None) -> _Stage:
        if stage is None:
            raise ModelError("this pipeline has no trained model: train one with `coqa train`")
        return stage

    def answer(self, question: str) -> Answer:
        """The answers to one question and the explanation; never raises for a
        bad question or a KB failure (the explanation's `failure` says why)."""
        started = time.perf_counter()
        explanation = Explanation(question=question)
        answers: list[str] = []
        self.kb.start_question()
        try:
            answers = self._answer(question, explanation)
        except KBUnreachable as error:
            explanation.failure = Failure(FailureKind.KB_UNREACHABLE, str(error))
        except KBError as error:
            explanation.failure = Failure(FailureKind.KB_ERROR, str(error))
        if explanation.failure:
            log.info("no answer for %r: %s", question, explanation.failure)
        explanation.seconds = time.perf_counter() - started
        return Answer(answers, explanation)

    def _answer(self, question: str, explanation: Explanation) -> list[str]:
        if not question.strip():
            explanation.failure = Failure(FailureKind.EMPTY_QUESTION)
            return []
        text = normalize_question(question)
        # Checked after normalising: NFKC expands some characters (U+FDFA to 18), and the
        # work per question grows with the normalized length.
        if len(text) > MAX_QUESTION_LENGTH:
            explanation.failure = Failure(FailureKind.TOO_LONG, f"longer than {MAX_QUESTION_LENGTH} characters once normalized")
            return []
        explanation.normalized = text
        analysis = self.analyse(text)
        explanation.mentions = [MentionRecord(m.surface, m.start, m.end, sorted(m.sources)) for m in analysis.mentions]
        explanation.linked = [LinkedTerm(n.surface, str(n.term), round(n.score, 4)) for n in analysis.linked]
        if not analysis.mentions:
            explanation.failure = Failure(FailureKind.NO_MENTION)
            return []
        ranked = self.rank(analysis)
        explanation.cuts = analysis.cuts
        explanation.candidates = [self._record(score, c) for score, c in ranked]
        if not ranked:
            explanation.failure = Failure(FailureKind.NO_CANDIDATE)
            return []
        score, best = ranked[0]
        sparql = best.sparql(self.templates)
        answers = [str(term) for term in (best.answers if best.exact else self.kb.select(sparql).column(0))]
        explanation.chosen = CandidateRecord(sparql, best.shape.name, round(score, 4), answers)
        if not answers:
            explanation.failure = Failure(FailureKind.NO_ANSWER)
            return answers
        calibration = self._trained(self.ranker).model.calibration
        assert calibration is not None, "a loaded model has its calibration"
        explanation.confidence = round(calibration.confidence([s for s, _ in ranked], len(answers)), 4)
        if explanation.confidence < self.settings.min_confidence:
            explanation.failure = Failure(FailureKind.LOW_CONFIDENCE, f"{explanation.confidence:.4f} < {self.settings.min_confidence:g}")
            return []
        return answers

    def _record(self, score: float, candidate: Candidate) -> CandidateRecord:
        return CandidateRecord(
            candidate.sparql(self.templates), candidate.shape.name, round(score, 4), list(map(str, candidate.answers))
        )

    def close(self) -> None:
        self.generator.close()
        self.kb.close()
