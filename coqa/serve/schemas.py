"""Request and response bodies of the HTTP API (they make the OpenAPI page).

The explanation records are the pipeline's own dataclasses
(coqa/explanation.py), so the API says exactly what `coqa ask --json` says.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from coqa.explanation import Explanation
from coqa.pipeline import MAX_QUESTION_LENGTH
from coqa.serve.query_graph import QueryGraph

MAX_BATCH = 64
MAX_TOP = 50
DEFAULT_TOP = 5
MAX_QUERY_LENGTH = 20_000


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


def _no_control_characters(text: str) -> str:
    """A question is one line of text: NUL, line breaks, tabs and other
    control characters (Unicode category Cc) are refused, saying where."""
    for position, char in enumerate(text):
        if unicodedata.category(char) == "Cc":
            raise ValueError(f"must not hold control characters (U+{ord(char):04X} at position {position})")
    return text


QuestionText = Annotated[
    StrictStr,
    Field(min_length=1, max_length=MAX_QUESTION_LENGTH, examples=["周星驰的身高是多少？"]),
    AfterValidator(_not_blank),
    AfterValidator(_no_control_characters),
]
Top = Annotated[StrictInt, Field(ge=0, le=MAX_TOP, description="candidate queries to return, best first")]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QuestionRequest(_Request):
    question: QuestionText
    top: Top = DEFAULT_TOP


class BatchRequest(_Request):
    questions: list[QuestionText] = Field(min_length=1, max_length=MAX_BATCH)
    top: Top = DEFAULT_TOP


class SparqlRequest(_Request):
    query: Annotated[
        StrictStr,
        Field(
            min_length=1,
            max_length=MAX_QUERY_LENGTH,
            description="a SELECT query in PKU BASE style (bare <name>s)",
            examples=["SELECT ?x WHERE { <周星驰> <身高> ?x . }"],
        ),
        AfterValidator(_not_blank),
    ]
    limit: Optional[Annotated[StrictInt, Field(ge=1)]] = Field(
        None, description="at most this many rows (never more than the server's row limit)"
    )


class AnswerResult(BaseModel):
    question: str
    answers: list[str] = Field(description="PKU BASE terms: <entity> or \"literal\"; empty when there is no answer")
    confidence: float = Field(description="the calibrated probability in [0, 1] that the answers are right (0 without answers)")
    explanation: Explanation = Field(description="what every stage did; `candidates` holds the top ones")
    candidates_total: int = Field(description="how many candidate queries were ranked")
    query_graph: Optional[QueryGraph] = Field(description="the chosen query's triple patterns as a graph")


class BatchResult(BaseModel):
    results: list[AnswerResult]


class SparqlResult(BaseModel):
    variables: list[str]
    rows: list[list[Optional[str]]] = Field(description="PKU BASE terms; null where a variable is unbound")
    truncated: bool = Field(description="the query had more rows than the limit")
    seconds: float


class Health(BaseModel):
    status: str
    backend: str
    kb: str
    model: str
    mention_index_entries: int
    triples: Optional[int] = None
    workers: int = Field(description="pipeline processes answering questions")
    kb_probe_ms: float
    counts: dict[str, int] = Field(description="what the server has served since it started")


class ErrorReply(BaseModel):
    error: str = Field(description="one line: what failed and what to do")
