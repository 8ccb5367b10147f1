"""What the pipeline did for one question: the record `coqa ask` shows,
`coqa eval` inspects, and `Pipeline.answer` returns beside the answers."""

from __future__ import annotations

from coqa.querygen.candidate import CapCut
from dataclasses import asdict, dataclass, field
from typing import Any

from coqa.dataset import format_result_line

LOW_CONFIDENCE = 0.5  # an answer less likely right than wrong is shown marked as uncertain


@dataclass
class MentionRecord:
    """A span of the normalized question that may name something in the KB."""

    text: str
    start: int
    end: int
    sources: list[str]  # index kinds or detectors that found it: mention, name, literal, quote, hanlp


@dataclass
class LinkedTerm:
    """A KB entity (or literal value) a mention was linked to, with its score."""

    mention: str
    term: str  # PKU BASE form: <name> or "literal"
    score: float


@dataclass
class CandidateRecord:
    """A candidate SPARQL query (PKU BASE style) with its shape, score and answers."""

    sparql: str
    shape: str
    score: float
    answers: list[str]


@dataclass
class Explanation:
    """Every stage's output for one question. `failure` says why there is no
    answer (bad input, no mention, no candidate, KB error) and is None otherwise.
    `confidence` is the calibrated probability that the answers are right
    (coqa.ranking.calibration; 0 without answers)."""

    question: str
    normalized: str = ""
    mentions: list[MentionRecord] = field(default_factory=list)
    linked: list[LinkedTerm] = field(default_factory=list)
    candidates: list[CandidateRecord] = field(default_factory=list)  # best first
    cuts: list[CapCut] = field(default_factory=list)  # settings that bounded query generation
    chosen: CandidateRecord | None = None
    failure: str | None = None
    confidence: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Answer:
    """The answers to one question (PKU BASE terms as strings) and how they came out."""

    answers: list[str]
    explanation: Explanation

    def details(self) -> dict[str, Any]:
        """The record `coqa answer --details` writes for the question (one JSON line)."""
        chosen = self.explanation.chosen
        return {
            "question": self.explanation.question,
            "answers": self.answers,
            "confidence": self.explanation.confidence,
            "sparql": chosen.sparql if chosen else None,
            "failure": self.explanation.failure,
        }

    def line(self) -> str:
        """The result.txt line: answers tab-separated, empty when there is none
        (`coqa.dataset.format_result_line`)."""
        return format_result_line(self.answers)
