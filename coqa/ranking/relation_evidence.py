"""Relation evidence from another labelled question file: how its questions
word the predicates of their gold queries, for predicates the training file
never shows.

`coqa train --relation-evidence FILE` (an NLPCC KBQA training file: 14,609
questions over 4,533 Baidu Baike infobox predicates, the source PKU BASE's
predicates come from) pairs the wording of each question of FILE (the
question without the names of its gold query's constants) with the name of
each of its gold predicates, and fits predicate paraphrases on these pairs
(IBM model 1 over characters in both directions, coqa.ranking.paraphrase).
Being over characters, the tables score any predicate name; the ranker
reads them as features of the candidate's path (`relation_evidence_features`),
so what one question file learned about wording carries to predicates the
other never asks for. FILE is none of the training questions: the tables
are not cross-fitted, and the model records FILE's digest (meta.json).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from coqa.dataset import GoldQuestion
from coqa.gold import parse_query
from coqa.kb.surfaces import base_name, matching_name, normalize_surface
from coqa.mentions.detection import normalize_question
from coqa.querygen.candidate import Candidate
from coqa.ranking.context import QuestionContext, path_predicates
from coqa.ranking.paraphrase import PredicateParaphrases
from coqa.shapes import TYPE_PREDICATE

RELATION_EVIDENCE_FILE = "relation_evidence.json"

# Of the path's predicates: how well the wording explains the answer's and the
# weakest one's name, and how well all their names explain the wording.
RELATION_EVIDENCE_FEATURES = ("p_evidence_name_last", "p_evidence_name_min", "p_evidence_wording")
# Of those, the ones also compared with the question's best candidate (`add_relative_features`).
RELATION_EVIDENCE_RELATIVE = ("p_evidence_name_last", "p_evidence_wording")


def evidence_pairs(questions: Sequence[GoldQuestion]) -> list[tuple[str, str]]:
    """(wording, predicate name) pairs of labelled questions: the normalized
    question with each constant of its gold query that it writes (by its
    name without qualifier, `base_name`) marked out as `remove_spans` marks a
    mention, and the matching name of each relation predicate of the gold
    query. A question that writes none of its constants gives no pair (its
    wording would hold the subject's name, which says nothing about the
    relation)."""
    pairs: list[tuple[str, str]] = []
    for question in questions:
        if not question.sparql:
            continue
        query = parse_query(question.sparql)
        text = normalize_question(question.question)
        names = {normalize_surface(base_name(term.value)).strip() for term in query.constants()}
        found = sorted((name for name in names if name and name in text), key=lambda name: (-len(name), name))
        if not found:
            continue
        for name in found:
            text = text.replace(name, "|" * len(name))
        predicates = sorted({p[1:-1] for _, p, _ in query.triples if p.startswith("<") and p[1:-1] != TYPE_PREDICATE})
        pairs.extend((text, matching_name(predicate)) for predicate in predicates)
    return pairs


@dataclass(frozen=True)
class RelationEvidence:
    """Predicate paraphrases fitted on the pairs of a relation-evidence file, and its digest."""

    paraphrases: PredicateParaphrases
    digest: str  # SHA-256 of the pairs it was fitted on

    @classmethod
    def fit(cls, questions: Sequence[GoldQuestion]) -> "RelationEvidence":
        """Fitted on `evidence_pairs(questions)`; ValueError when they give none."""
        pairs = evidence_pairs(questions)
        if not pairs:
            raise ValueError("the relation-evidence file gives no (wording, predicate) pair: none of its questions writes its gold subject")
        digest = hashlib.sha256(json.dumps(pairs, ensure_ascii=False).encode("utf-8")).hexdigest()
        return cls(PredicateParaphrases.fit(pairs), digest)

    def save(self, directory: Path) -> str:
        data = {"digest": self.digest, **self.paraphrases.to_json()}
        (directory / RELATION_EVIDENCE_FILE).write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        return RELATION_EVIDENCE_FILE

    @classmethod
    def load(cls, directory: Path) -> "RelationEvidence":
        data = json.loads((directory / RELATION_EVIDENCE_FILE).read_text(encoding="utf-8"))
        return cls(PredicateParaphrases.from_json(data), str(data["digest"]))


def relation_evidence_features(candidate: Candidate, rest: str, evidence: RelationEvidence, context: QuestionContext) -> dict[str, float]:
    """The path's predicates against the rest of the question under the
    evidence's paraphrases: the name score (`PredicateParaphrases.scores`,
    first) of the predicate that gives the answers and the lowest over the
    path, and how well the path's names together explain the wording."""
    predicates = path_predicates(candidate)
    if not predicates:
        return dict.fromkeys(RELATION_EVIDENCE_FEATURES, 0.0)
    key = (rest, tuple(predicates))
    if key not in context.evidence:
        if rest not in context.evidence_wordings:
            context.evidence_wordings[rest] = evidence.paraphrases.against(rest)
        against = context.evidence_wordings[rest]
        names = [matching_name(p) for p in predicates]
        name_scores = [against.name_score(name) for name in names]
        last = name_scores[-1] if candidate.shape.answer_predicate_last() else name_scores[0]
        context.evidence[key] = (last, min(name_scores), against.path_wording_score(tuple(names)))
    return dict(zip(RELATION_EVIDENCE_FEATURES, context.evidence[key]))
