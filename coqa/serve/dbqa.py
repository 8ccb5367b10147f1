"""`POST /dbqa/rank`: rank the sentences of a passage for a question (NLPCC DBQA).

The passage is split into sentences (coqa.dbqa.text.split_sentences), or the
sentences are given as a list; each is scored by the shipped DBQA model (loaded
on the first request) and the reply lists them best first. The work is bounded
by the request: at most MAX_PASSAGE characters, MAX_SENTENCES sentences, and
each sentence is cut to coqa.dbqa.text.MAX_CHARS characters for its features.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Annotated, Optional

from fastapi import FastAPI, HTTPException
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
    model_validator,
)

from coqa.dbqa.model import DbqaModel
from coqa.dbqa.scoring import score_question
from coqa.dbqa.text import split_sentences

MAX_QUESTION = 200
MAX_PASSAGE = 20_000
MAX_SENTENCES = 200

_model_lock = threading.Lock()


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be blank")
    return text


class RankRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: Annotated[StrictStr, Field(min_length=1, max_length=MAX_QUESTION, examples=["长江有多长？"]), AfterValidator(_not_blank)]
    passage: Optional[Annotated[StrictStr, Field(max_length=MAX_PASSAGE, examples=["长江是中国第一大河。长江全长约6300公里。"])]] = None
    sentences: Optional[list[Annotated[StrictStr, Field(max_length=MAX_PASSAGE)]]] = Field(None, max_length=MAX_SENTENCES)

    @model_validator(mode="after")
    def one_source(self) -> "RankRequest":
        if (self.passage is None) == (self.sentences is None):
            raise ValueError("give either passage (split into sentences) or sentences, not both")
        if self.sentences is not None and sum(len(s) for s in self.sentences) > MAX_PASSAGE:
            raise ValueError(f"the sentences hold more than {MAX_PASSAGE} characters")
        return self


class RankedSentence(BaseModel):
    index: int = Field(description="position of the sentence in the passage (from 0)")
    sentence: str
    score: float = Field(description="higher: more likely to answer the question")


class RankResult(BaseModel):
    question: str
    ranked: list[RankedSentence] = Field(description="the sentences, best first")


@lru_cache(maxsize=1)
def _model() -> DbqaModel:
    with _model_lock:
        return DbqaModel.load(None)


def rank(question: str, sentences: list[str]) -> RankResult:
    """The sentences ranked for the question (equal scores keep passage order)."""
    scores = score_question(_model(), question, sentences)
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
    return RankResult(question=question, ranked=[RankedSentence(index=i, sentence=sentences[i], score=scores[i]) for i in order])


def add_dbqa_routes(app: FastAPI, error_replies: dict) -> None:
    """Add `POST /dbqa/rank` to the application."""

    @app.post("/dbqa/rank", response_model=RankResult, responses=error_replies, summary="Rank a passage's sentences for a question")
    def rank_sentences(body: RankRequest) -> RankResult:
        """NLPCC DBQA: the passage's sentences (or the given ones) scored by the shipped model, best first
        (422 when there is no sentence to rank)."""
        sentences = split_sentences(body.passage) if body.passage is not None else list(body.sentences or [])
        if not sentences:
            source = "passage: empty or blank" if body.passage is not None else "sentences: empty list"
            raise HTTPException(422, f"{source}, no sentence to rank")
        if len(sentences) > MAX_SENTENCES:
            raise HTTPException(422, f"passage: {len(sentences)} sentences, more than the {MAX_SENTENCES} ranked at once")
        return rank(body.question, sentences)
