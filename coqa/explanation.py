"""What the pipeline did for one question: the record `coqa ask` shows,
`coqa eval` inspects, and `Pipeline.answer` returns beside the answers."""

from __future__ import annotations

from coqa.querygen.candidate import CapCut
from enum import Enum
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


class FailureKind(Enum):
    """Why a question has no answer."""

    EMPTY_QUESTION = "empty question"
    TOO_LONG = "question too long"
    NO_MENTION = "no mention of a known entity or value"
    NO_CANDIDATE = "no candidate query"
    NO_ANSWER = "the chosen query has no answer"
    LOW_CONFIDENCE = "confidence below min_confidence"
    KB_ERROR = "knowledge base error"
    KB_UNREACHABLE = "knowledge base unreachable"
    INTERNAL = "internal error"


KB_FAILURES = frozenset({FailureKind.KB_ERROR, FailureKind.KB_UNREACHABLE})


@dataclass(frozen=True)
class Failure:
    """Why a question has no answer: its kind, and what the kind alone does not say."""

    kind: FailureKind
    detail: str = ""

    @property
    def message(self) -> str:
        """One line for a person: the kind, then the detail."""
        return f"{self.kind.value}: {self.detail}" if self.detail else self.kind.value

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> dict[str, str]:
        """The record of the API and of `--details`: the kind's name and the message."""
        return {"kind": self.kind.name.lower(), "message": self.message}


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
    failure: Failure | None = None
    confidence: float = 0.0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["failure"] = self.failure.to_dict() if self.failure else None
        return record


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
            "failure": self.explanation.failure.to_dict() if self.explanation.failure else None,
        }

    def line(self) -> str:
        """The result.txt line: answers tab-separated, empty when there is none
        (`coqa.dataset.format_result_line`)."""
        return format_result_line(self.answers)
