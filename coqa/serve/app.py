"""The FastAPI application: JSON API, the web page at `/`, and the API docs.

Every error reaches the client as JSON `{"error": "one line"}`: 400 for a
body that is not JSON, 422 for a body that is JSON but not a valid request
(and for a query the knowledge base refuses or that runs too long), 413 for
a body over the size limit, 503 when the knowledge base fails, 500 for
anything unforeseen; the server goes on, and tracebacks stay in its log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Sequence, TypeVar
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from coqa.config import Settings
from coqa.explanation import Answer
from coqa.kb.base import KBError
from coqa.kb import uses_demo_kb
from coqa.kb.demo import DEMO_QUESTIONS
from coqa.serve.dbqa import add_dbqa_routes
from coqa.serve.query_graph import query_graph
from coqa.serve.schemas import (
    AnswerResult,
    BatchRequest,
    BatchResult,
    ErrorReply,
    Health,
    QuestionRequest,
    SparqlRequest,
    SparqlResult,
)
from coqa.serve.service import KBUnavailable, QuestionService, WorkerFailed
from coqa.serve.sparql import DEFAULT_MEMORY_MB, QueryRejected, QueryTimeout, QueryTooLarge, RunnerUnavailable, SparqlRunner

log = logging.getLogger("coqa")
T = TypeVar("T")
STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY_BYTES = 1 << 20
# Seconds a client refused because a SPARQL query was running is told to wait.
SPARQL_RETRY_AFTER = 1
# /health answers within this, whatever the knowledge base does.
HEALTH_PROBE_SECONDS = 1.5
# How often a waiting /answer checks that its client is still there.
DISCONNECT_POLL_SECONDS = 0.2

DESCRIPTION = """Answer Chinese questions over PKU BASE and see why.

Answers are PKU BASE terms: `<entity>` or `"literal"`. The explanation holds
the mentions found in the normalized question, the linked entities with
their scores, the top candidate queries (shape, score, answers) and the
chosen SPARQL. Errors are `{"error": "one line"}`."""


@dataclass(frozen=True)
class ServeOptions:
    """How many pipeline processes answer questions, and the limits of the raw SPARQL endpoint."""

    workers: int = 1
    sparql_rows: int = 1000
    sparql_seconds: float = 10.0
    sparql_memory_mb: int = DEFAULT_MEMORY_MB


ERROR_REPLIES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorReply, "description": "the body is not JSON"},
    422: {"model": ErrorReply, "description": "the body is not a valid request"},
    503: {"model": ErrorReply, "description": "the knowledge base failed"},
}


def create_app(
    settings: Settings,
    options: ServeOptions = ServeOptions(),
    service: QuestionService | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> FastAPI:
    """The application over the settings' knowledge base and model. The
    pipeline processes start at startup unless `service` is given (then the
    app owns it). With `allowed_hosts`, a request whose Host header names
    another host is refused (400): a server on loopback is then out of
    reach of DNS rebinding (a page elsewhere whose name resolves to 127.0.0.1)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.service = service or QuestionService.open(settings, options.workers)
        app.state.runner = SparqlRunner(settings, options.sparql_rows, options.sparql_seconds, options.sparql_memory_mb)
        try:
            yield
        finally:
            app.state.runner.close()
            app.state.service.close()

    app = FastAPIOffline(title="coqa", description=DESCRIPTION, version="1", lifespan=lifespan)
    app.add_middleware(BodySizeLimit, max_bytes=MAX_BODY_BYTES)
    if allowed_hosts is not None:
        app.add_middleware(HostCheck, allowed=tuple(allowed_hosts))
    _add_error_handlers(app)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")

    @app.post("/answer", response_model=AnswerResult, responses=ERROR_REPLIES, summary="Answer one question")
    async def answer(body: QuestionRequest, request: Request) -> AnswerResult:
        """The answers and the explanation, as `coqa ask --json` prints them."""
        return answer_result(*await while_connected(request, _service(request).answer(body.question, body.top)))

    @app.post("/answer/batch", response_model=BatchResult, responses=ERROR_REPLIES, summary="Answer several questions")
    async def answer_batch(body: BatchRequest, request: Request) -> BatchResult:
        """One result per question, in order (answered by all pipeline processes
        at once). A knowledge-base failure on any of them fails the whole batch with 503."""
        service = _service(request)
        answers = await while_connected(
            request, asyncio.gather(*(service.answer(question, body.top) for question in body.questions))
        )
        return BatchResult(results=[answer_result(answer, total) for answer, total in answers])

    @app.post("/sparql", response_model=SparqlResult, responses=ERROR_REPLIES, summary="Run a SPARQL SELECT query")
    def sparql(body: SparqlRequest, request: Request) -> Any:
        """Rows as PKU BASE terms; SELECT only, at most the row limit, within the time limit."""
        started = time.perf_counter()
        runner: SparqlRunner = request.app.state.runner
        try:
            limited = runner.select(body.query, body.limit)
        except QueryRejected as error:
            return error_reply(422, str(error))
        except (QueryTimeout, QueryTooLarge) as error:
            return error_reply(422, f"{error}: make the query more selective")
        except RunnerUnavailable as error:
            return error_reply(503, str(error), {"Retry-After": str(SPARQL_RETRY_AFTER)})
        except KBError as error:
            _service(request).check_kb()  # KBUnavailable (503) when the knowledge base itself is down
            return error_reply(422, f"the knowledge base refused the query: {error}")
        _service(request).count("sparql")
        rows = [[None if term is None else str(term) for term in row] for row in limited.result.rows]
        return SparqlResult(
            variables=limited.result.variables,
            rows=rows,
            truncated=limited.truncated,
            seconds=round(time.perf_counter() - started, 4),
        )

    @app.get("/health", response_model=Health, responses={503: ERROR_REPLIES[503]}, summary="Is the service up?")
    async def health(request: Request) -> Health:
        """Backend, knowledge base, model and counts; 503 when a probe query
        fails or takes longer than HEALTH_PROBE_SECONDS."""
        service = _service(request)
        probe = await service.probe_kb(HEALTH_PROBE_SECONDS)
        return Health(
            status="ok",
            **service.describe(),
            kb_probe_ms=round(probe * 1000, 3),
            counts=service.counts(),
        )

    @app.get("/examples", response_model=list[str], summary="Example questions of the loaded knowledge base")
    async def examples() -> list[str]:
        """The demo questions when the demo knowledge base is loaded; none for
        another one (the demo's questions would get absurd answers there)."""
        if not uses_demo_kb(settings.kb_config()):
            return []
        return [line.strip() for line in DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]

    add_dbqa_routes(app, ERROR_REPLIES)
    return app


class ClientGone(Exception):
    """The client closed its connection before its answer was ready."""


async def while_connected(request: Request, work: Awaitable[T]) -> T:
    """The result of `work`, cancelled (its questions not yet handed to a
    pipeline process dropped) and ClientGone raised when the client hangs
    up first: abandoned batches must not hold up the next client's question."""
    task = asyncio.ensure_future(work)
    while True:
        done, _ = await asyncio.wait({task}, timeout=DISCONNECT_POLL_SECONDS)
        if done:
            return task.result()
        if await request.is_disconnected():
            task.cancel()
            raise ClientGone()


def _service(request: Request) -> QuestionService:
    return request.app.state.service


def answer_result(answer: Answer, candidates_total: int) -> AnswerResult:
    """The API record of an answer (whose explanation holds the top candidates)."""
    explanation = answer.explanation
    return AnswerResult(
        question=explanation.question,
        answers=answer.answers,
        confidence=explanation.confidence,
        explanation=explanation,
        candidates_total=candidates_total,
        query_graph=query_graph(explanation.chosen.sparql) if explanation.chosen else None,
    )


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": " ".join(message.split())}, status_code=status, headers=headers)


def validation_message(error: RequestValidationError) -> str:
    """The first problem of a request body as one line, e.g. `question: must not be blank`."""
    problems = error.errors()
    first = problems[0]
    where = ".".join(str(part) if isinstance(part, str) else f"[{part}]" for part in first["loc"] if part != "body")
    message = first["msg"].removeprefix("Value error, ")
    more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
    return f"{where.replace('.[', '[')}: {message}{more}" if where else f"{message}{more}"


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        problems = error.errors()
        if problems and problems[0]["type"] == "json_invalid":
            return error_reply(400, f"the body is not valid JSON: {problems[0]['ctx'].get('error', 'malformed')}")
        return error_reply(422, validation_message(error))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        return error_reply(error.status_code, str(error.detail))

    @app.exception_handler(ClientGone)
    async def client_gone(request: Request, error: Exception) -> JSONResponse:
        return error_reply(499, "the client closed the connection; its questions were dropped")

    @app.exception_handler(KBUnavailable)
    @app.exception_handler(WorkerFailed)
    async def unavailable(request: Request, error: Exception) -> JSONResponse:
        return error_reply(503, str(error))

    @app.exception_handler(Exception)
    async def unforeseen(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_reply(500, f"internal error ({type(error).__name__}); the server log has the details")


class BodySizeLimit:
    """Refuse request bodies over `max_bytes` (413), and POST bodies of
    unknown length (411), before anything reads them."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in ("POST", "PUT", "PATCH"):
            headers = dict(scope["headers"])
            length = headers.get(b"content-length")
            if length is None or not length.isdigit():
                await _send_error(send, 411, "the request needs a Content-Length header")
                return
            if int(length) > self.max_bytes:
                await _send_error(send, 413, f"the body is larger than {self.max_bytes} bytes")
                return
        await self.app(scope, receive, send)


class HostCheck:
    """Refuse (400) a request whose Host header names none of `allowed`
    (host names or addresses, any port). Starlette's TrustedHostMiddleware
    is not used: it cuts a Host header at its first ':', so it cannot allow `[::1]:8000`."""

    def __init__(self, app: ASGIApp, allowed: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = {name.lower() for name in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
            try:
                name = urlsplit("//" + header).hostname or ""
            except ValueError:
                name = ""
            if name.lower() not in self.allowed:
                await _send_error(send, 400, f"this server answers requests for {', '.join(sorted(self.allowed))} only")
                return
        await self.app(scope, receive, send)


async def _send_error(send: Send, status: int, message: str) -> None:
    body = JSONResponse(jsonable_encoder({"error": message})).body
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})
