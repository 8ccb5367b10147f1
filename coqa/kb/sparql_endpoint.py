"""Remote backend: any SPARQL 1.1 protocol endpoint, through SPARQLWrapper.

The endpoint holds the triples with absolute IRIs made by the name codec
(what `coqa load` writes, so an `oxigraph serve` over a coqa store or any
engine loaded with the same IRIs answers the same as the embedded store).
Queries in PKU BASE style are rewritten with `to_standard_sparql`; result
IRIs under NAME_BASE come back as PKU BASE names.
"""

from __future__ import annotations

import ast
import json
import urllib.error
import warnings
from typing import Any, Mapping

from SPARQLWrapper import JSON, POST, SELECT, SPARQLWrapper
from SPARQLWrapper.SPARQLExceptions import SPARQLWrapperException

from coqa.kb.base import KBError, QueryResult
from coqa.kb.http_retry import (
    RemoteFailure,
    RetryPolicy,
    call_with_retries,
    check_http_url,
    first_line,
    http_failure,
)
from coqa.kb.names import Term, iri_to_name, to_standard_sparql

SERVICE = "SPARQL endpoint"


def term_from_json(binding: Mapping[str, Any] | None) -> Term | None:
    """PKU BASE term of one value in the SPARQL JSON results layout (None when unbound)."""
    if binding is None:
        return None
    kind, value = binding.get("type"), str(binding.get("value", ""))
    if kind == "uri":
        name = iri_to_name(value)
        return Term.entity(value if name is None else name)
    if kind == "bnode":
        return Term.entity("_:" + value)
    return Term.literal(value)


def results_from_json(data: Any, source: str) -> QueryResult:
    """QueryResult of a reply in the SPARQL JSON results layout
    (``head.vars``, ``results.bindings``); KBError naming `source` otherwise."""
    if isinstance(data, dict) and "boolean" in data and "results" not in data:
        raise KBError("only SELECT queries are supported")
    try:
        variables = [str(name) for name in data["head"]["vars"]]
        bindings = data["results"]["bindings"]
        rows = [tuple(term_from_json(solution.get(name)) for name in variables) for solution in bindings]
    except (KeyError, TypeError, AttributeError):
        raise KBError(f"the {source} did not answer with SPARQL JSON results") from None
    return QueryResult(variables, rows)


def _wrapper_failure(error: SPARQLWrapperException) -> RemoteFailure:
    """The HTTP status and server message behind a SPARQLWrapper exception.

    SPARQLWrapper raises its exceptions while handling the urllib HTTPError
    (kept as `__context__`) and only keeps the reply body inside its message,
    as the repr of the bytes after "Response:".
    """
    status = error.__context__.code if isinstance(error.__context__, urllib.error.HTTPError) else 400
    message = str(error)
    detail = ""
    if "Response:\n" in message:
        body = message.split("Response:\n", 1)[1]
        try:
            detail = first_line(ast.literal_eval(body))
        except (ValueError, SyntaxError):
            detail = first_line(body)
    return http_failure(status, detail)


class SparqlEndpoint:
    """A SPARQL 1.1 query endpoint (`url` is the query URL, e.g.
    http://127.0.0.1:7878/query). Queries are sent by URL-encoded POST, which
    every SPARQL 1.1 endpoint accepts and which has no URL length limit."""

    def __init__(self, url: str, timeout: float = 10.0, retries: int = 2, backoff: float = 0.5) -> None:
        self.url = check_http_url(url, SERVICE)
        self.policy = RetryPolicy(timeout, retries, backoff)
        self.description = f"{SERVICE} {url}"

    def select(self, query: str) -> QueryResult:
        wrapper = self._wrapper(to_standard_sparql(query))
        data = call_with_retries(lambda: self._fetch(wrapper), service=SERVICE, url=self.url, policy=self.policy)
        return results_from_json(data, f"{SERVICE} {self.url}")

    def _wrapper(self, query: str) -> SPARQLWrapper:
        """A SPARQLWrapper set up for one SELECT query; KBError for other query forms."""
        wrapper = SPARQLWrapper(self.url)
        with warnings.catch_warnings():
            # SPARQLWrapper warns about text it cannot classify; the endpoint judges it.
            warnings.simplefilter("ignore", RuntimeWarning)
            wrapper.setQuery(query)
        if wrapper.queryType != SELECT:
            raise KBError("only SELECT queries are supported")
        wrapper.setMethod(POST)
        wrapper.setReturnFormat(JSON)
        wrapper.setOnlyConneg(True)
        # setTimeout() truncates to whole seconds (0.5 would mean no timeout);
        # urlopen takes the float as it is.
        wrapper.timeout = self.policy.timeout  # type: ignore[assignment]
        return wrapper

    def _fetch(self, wrapper: SPARQLWrapper) -> Any:
        """One HTTP request; the decoded JSON reply."""
        try:
            body = wrapper.query().response.read()
        except SPARQLWrapperException as error:
            raise _wrapper_failure(error) from None
        try:
            return json.loads(body)
        except ValueError:
            raise KBError(f"the {SERVICE} {self.url} did not answer with SPARQL JSON results") from None

    def close(self) -> None:
        """Nothing to release: every query is one HTTP request."""
