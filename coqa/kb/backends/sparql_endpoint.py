"""Remote backend: any SPARQL 1.1 protocol endpoint, over a kept-alive HTTP session.

The endpoint holds the triples with absolute IRIs made by the name codec
(what `coqa load` writes and `coqa export --to ntriples` exports, so an
`oxigraph serve` over a coqa store, or Virtuoso loaded with the export,
answers the same as the embedded store). Queries in PKU BASE style are
admitted (`coqa.kb.backends.admission`) and sent in standard form; result IRIs under
NAME_BASE come back as PKU BASE names.

Requests are URL-encoded POSTs (every SPARQL 1.1 endpoint accepts them, and
they have no URL length limit) through `HTTPClient`, which keeps the
connection alive and bounds each request by a total deadline. SPARQLWrapper,
used before, opens a connection per query and has only a per-read timeout.
Replies are asked for in the SPARQL XML results format, JSON accepted too:
Virtuoso 7.2 writes a reply of a few hundred rows as XML sooner than as JSON
(docs/backends-tuning.md), and pyoxigraph reads it, as it reads the embedded
store's results.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

import pyoxigraph as ox

from coqa.kb.backends.admission import ASK, AdmittedQuery, admit
from coqa.kb.base import KBError, QueryResult
from coqa.kb.backends.http_client import PARALLEL_QUERIES, HTTPClient, HTTPReply
from coqa.kb.backends.oxigraph_store import term_from_oxigraph
from coqa.kb.backends.http_retry import RetryPolicy, call_with_retries, check_http_url, first_line, http_failure
from coqa.kb.names import Term, iri_to_name

SERVICE = "SPARQL endpoint"
XML_RESULTS = "application/sparql-results+xml"
JSON_RESULTS = "application/sparql-results+json"
ACCEPT = f"{XML_RESULTS}, {JSON_RESULTS};q=0.9"


def standard_iri_name(iri: str) -> str:
    """PKU BASE name of an IRI from a standard engine (other IRIs as they are);
    ValueError for a NAME_BASE IRI whose escapes are not UTF-8."""
    name = iri_to_name(iri)
    return iri if name is None else name


def term_from_json(binding: Any, iri_name: Callable[[str], str]) -> Term | None:
    """PKU BASE term of one value in the SPARQL JSON results layout (None when
    unbound); `iri_name` turns the engine's IRI into a PKU BASE name.
    ValueError when the value is malformed."""
    if binding is None:
        return None
    if not isinstance(binding, dict) or not isinstance(binding.get("value"), str):
        raise ValueError(f"a value is not a SPARQL JSON term: {first_line(json.dumps(binding))}")
    kind, value = binding.get("type"), binding["value"]
    if kind == "uri":
        return _entity(value, iri_name)
    if kind == "bnode":
        return Term.entity("_:" + value)
    if kind in ("literal", "typed-literal"):
        return Term.literal(value)
    raise ValueError(f"unknown term type {first_line(str(kind))!r}")


@lru_cache(maxsize=1 << 17)
def _entity(iri: str, iri_name: Callable[[str], str]) -> Term:
    """The entity of an engine's IRI. Cached, as the embedded store's terms are
    (`term_from_oxigraph`): the same IRIs come back in reply after reply, and
    decoding one costs more than reading its JSON."""
    try:
        return Term.entity(iri_name(iri))
    except ValueError:
        raise ValueError(f"an IRI has a bad %-escape: {first_line(iri)}") from None


def results_from_json(
    data: Any, query: AdmittedQuery, source: str, iri_name: Callable[[str], str] = standard_iri_name
) -> QueryResult:
    """QueryResult of a reply in the SPARQL JSON results layout for `query`:
    a row per binding with the query's own variables, in its order. KBError
    naming `source` when the reply is malformed or lacks a variable the query
    projects (a reply of the wrong shape is an error, never a short row)."""
    try:
        if query.form == ASK:
            if not isinstance(data, dict) or not isinstance(data.get("boolean"), bool):
                raise ValueError("no boolean for an ASK query")
            return QueryResult([], [], boolean=data["boolean"])
        head_vars = data["head"]["vars"]
        bindings = data["results"]["bindings"]
        if not isinstance(head_vars, list) or not isinstance(bindings, list):
            raise ValueError("head.vars and results.bindings must be lists")
        _check_columns(head_vars, query)
        rows = [_row(solution, query.variables, iri_name) for solution in bindings]
    except (KeyError, TypeError, ValueError) as error:
        reason = str(error) if isinstance(error, ValueError) else "not the SPARQL JSON results layout"
        raise KBError(f"the {source} sent a malformed reply: {reason}") from None
    return QueryResult(list(query.variables), rows)


def _check_columns(answered: list[str], query: AdmittedQuery) -> None:
    """ValueError when a reply's columns lack a variable the query projects."""
    missing = [name for name in query.variables if name not in answered]
    if missing:
        raise ValueError(f"no column for ?{missing[0]} (answered {len(answered)} of {len(query.variables)} columns)")


def _row(solution: Any, variables: tuple[str, ...], iri_name: Callable[[str], str]) -> tuple[Term | None, ...]:
    if not isinstance(solution, dict):
        raise ValueError("a solution is not a JSON object")
    return tuple(term_from_json(solution.get(name), iri_name) for name in variables)


def results_from_xml(body: bytes, query: AdmittedQuery, source: str) -> QueryResult:
    """QueryResult of a reply in the SPARQL XML results format for `query`,
    parsed by pyoxigraph (its parser reads no DTD and expands no entity); the
    same contract as `results_from_json`."""
    try:
        return _read_xml(body, query)
    except (SyntaxError, ValueError) as error:
        reason = first_line(str(error))
    # Raised once the except block has dropped the parser's error: its traceback holds pyoxigraph's
    # results, which may only be freed on the thread that made them (a pool thread, for reads side by side).
    raise KBError(f"the {source} sent a malformed reply: {reason}")


def _read_xml(body: bytes, query: AdmittedQuery) -> QueryResult:
    """`results_from_xml`'s work; SyntaxError or ValueError for a malformed reply."""
    parsed = ox.parse_query_results(body, format=ox.QueryResultsFormat.XML)
    if isinstance(parsed, ox.QueryBoolean):
        if query.form != ASK:
            raise ValueError("a boolean for a SELECT query")
        return QueryResult([], [], boolean=bool(parsed))
    if query.form == ASK:
        raise ValueError("no boolean for an ASK query")
    columns = [variable.value for variable in parsed.variables]
    _check_columns(columns, query)
    if columns == list(query.variables):
        rows = [tuple(map(term_from_oxigraph, solution)) for solution in parsed]
    else:
        rows = [tuple(term_from_oxigraph(solution[name]) for name in query.variables) for solution in parsed]
    return QueryResult(list(query.variables), rows)


def results_from_reply(reply: HTTPReply, query: AdmittedQuery, source: str) -> QueryResult:
    """QueryResult of an endpoint's reply, read by its content type: SPARQL
    XML results, else SPARQL JSON results."""
    if reply.content_type.split(";")[0].strip().lower() == XML_RESULTS:
        return results_from_xml(reply.body, query, source)
    return results_from_json(decode_json(reply.body, source), query, source)


def decode_json(body: bytes, source: str) -> Any:
    """The JSON value of a reply body; KBError when it is not JSON (or nested
    too deeply for the decoder)."""
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise KBError(f"the {source} did not answer with JSON") from None


class SparqlEndpoint:
    """A SPARQL 1.1 query endpoint (`url` is the query URL, e.g.
    http://127.0.0.1:7878/query)."""

    # Queries sent at once from different threads (each thread has its own connection): on all 703 CCKS
    # dev questions, each order of the variants run once (benchmarks/bench_backends.py, virtuoso against
    # virtuoso/serial), Virtuoso 7.2 answered 10% sooner at p50 and 20% at p95, oxigraph serve 2% and 8%.
    parallel_queries = PARALLEL_QUERIES

    def __init__(self, url: str, timeout: float = 10.0, retries: int = 2, backoff: float = 0.5) -> None:
        self.url = check_http_url(url, SERVICE)
        self.policy = RetryPolicy(timeout, retries, backoff)
        self.description = f"{SERVICE} {url}"
        self.client = HTTPClient(timeout)

    def select(self, query: str) -> QueryResult:
        admitted = admit(query)
        reply = call_with_retries(
            lambda: self._fetch(admitted.standard_text), service=SERVICE, url=self.url, policy=self.policy
        )
        return results_from_reply(reply, admitted, self.description)

    def _fetch(self, query: str) -> HTTPReply:
        """One HTTP request; the reply (RemoteFailure for an HTTP error status)."""
        reply = self.client.post(self.url, {"query": query}, {"Accept": ACCEPT})
        if reply.status != 200:
            raise http_failure(reply.status, first_line(reply.body))
        return reply

    def close(self) -> None:
        self.client.close()

