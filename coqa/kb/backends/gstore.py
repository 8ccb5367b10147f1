"""Remote backend: gStore's own HTTP API (ghttp, gStore 0.9.1 and later, tested on 1.2).

gStore holds PKU BASE names bare (`<莫妮卡·贝鲁奇>`) except for the few
characters it cannot hold, which the name codec percent-encodes
(`name_to_gstore`; `coqa export --to gstore` writes names the same way).
Queries are admitted (`coqa.kb.backends.admission`: SELECT or ASK only, since gStore
executes updates sent as queries), rewritten into gStore's name form and
sent as a POST with a JSON body over a kept-alive session:

    {"operation": "query", "username": U, "password": P, "db_name": DB,
     "format": "json", "sparql": "..."}

(the GET form is not used: gStore URL-decodes its query string twice, so
`&` cuts the SPARQL text and `+` becomes a space). Every reply is HTTP 200
with JSON: `StatusCode` 0 and the SPARQL JSON results layout, IRIs without
angle brackets, typed literals as "typed-literal", ASK as a `_askResult`
binding; otherwise a non-zero `StatusCode` whose `StatusMsg` is shown in one
line. `{"operation": "check"}` answers StatusCode 0 when the server runs.

gStore 1.2 hangs, then restarts, on a SELECT holding a triple pattern with no
variable (`<阳关三叠> <歌曲类型> <古琴曲>`, common in CCKS gold queries and in
coqa's "pinned by a stated fact" template), while the same pattern with its
object as a variable and a FILTER answers in milliseconds. So such patterns
are sent in that form (`unbind_constant_patterns`); the answers are the same.

gStore 1.2 also ignores a VALUES block: `VALUES ?e { <A> <B> } ?e ?p ?o`
answers for every entity of the store (slowly, and wrongly). So a group that
starts with a one-variable VALUES block is sent as a UNION with one branch
per value, the value written in place of the variable and bound to it
(`expand_values`); the answers are those the VALUES block means.

gStore 1.2 refuses FILTER EXISTS (StatusCode 1005 `Unary operator not
supported`), which coqa's typed-discovery templates use (`FILTER EXISTS {
?x <类型> <汽车> }`). When the group holds one triple pattern whose variables
all occur elsewhere in the query, it is sent as that pattern joined in
(`join_exists`): a triple matches a binding at most once, so the rows are
the same.
"""

from __future__ import annotations

import json
from typing import Any

from coqa.kb import sparql_text
from coqa.kb.backends.admission import ASK, AdmittedQuery, admit, check_rewritten
from coqa.kb.base import KBError, QueryResult
from coqa.kb.backends.http_client import PARALLEL_QUERIES, HTTPClient
from coqa.kb.backends.http_retry import RetryPolicy, call_with_retries, check_http_url, first_line, http_failure
from coqa.kb.names import gstore_to_name, to_gstore_sparql
from coqa.kb.backends.sparql_endpoint import decode_json, results_from_json

SERVICE = "gStore server"
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
ASK_VARIABLE = "_askResult"
BOUND_VARIABLE = "?_coqa_bound"


def _tokens(query: str) -> list[tuple[str, str]]:
    """(kind, text) of each token of `query` (`coqa.kb.sparql_text`'s, in the
    kinds the rewrites below look at: string, iri, punct for `{}.;,`, space, other)."""
    kinds = []
    for token in sparql_text.tokens(query):
        if sparql_text.is_reference(token):
            kind = "iri"
        elif token.kind in (sparql_text.STRING, sparql_text.SPACE):
            kind = token.kind
        elif token.text in ("{", "}", ".", ";", ","):
            kind = "punct"
        else:
            kind = "other"
        kinds.append((kind, token.text))
    return kinds


class GStore:
    """Database `db` on the gStore ghttp server at `url` (e.g. http://127.0.0.1:9000)."""

    # Queries sent at once from different threads (each thread has its own connection): gStore answers
    # them on its own threads, and questions came 5-14% sooner for it (p50; benchmarks/bench_backends.py,
    # gstore-quiet against gstore-quiet/serial).
    parallel_queries = PARALLEL_QUERIES

    def __init__(
        self,
        url: str,
        db: str,
        user: str = "root",
        password: str = "123456",
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = 0.5,
    ) -> None:
        self.url = check_http_url(url, SERVICE)
        self.db = db
        self.user = user
        self.password = password
        self.policy = RetryPolicy(timeout, retries, backoff)
        self.description = f"{SERVICE} {url} database {db}"
        self.client = HTTPClient(timeout)

    def select(self, query: str) -> QueryResult:
        admitted = admit(query)
        sparql = unbind_constant_patterns(expand_values(join_exists(to_gstore_sparql(query))))
        check_rewritten(sparql)
        request = {
            "operation": "query",
            "username": self.user,
            "password": self.password,
            "db_name": self.db,
            "format": "json",
            "sparql": sparql,
        }
        data = self._call(request)
        return results_from_json(_as_sparql_json(data, admitted), admitted, self.description, gstore_to_name)

    def check(self) -> None:
        """Return when the server answers the `check` operation; KBError otherwise."""
        self._call({"operation": "check"})

    def _call(self, request: dict[str, str]) -> dict[str, Any]:
        """One operation, with retries; its reply when StatusCode is 0, else KBError with StatusMsg."""
        body = json.dumps(request, ensure_ascii=False).encode("utf-8")
        reply = call_with_retries(lambda: self._post(body), service=SERVICE, url=self.url, policy=self.policy)
        data = decode_json(reply, self.description)
        if not isinstance(data, dict) or "StatusCode" not in data:
            raise KBError(f"the {self.description} did not answer with a gStore JSON reply (no StatusCode)")
        status = data["StatusCode"]
        if str(status) != "0":
            message = first_line(str(data.get("StatusMsg") or "no StatusMsg"))
            raise KBError(f"the {self.description} answered StatusCode {first_line(str(status))}: {message}")
        return data

    def _post(self, body: bytes) -> bytes:
        reply = self.client.post(self.url, body, JSON_HEADERS)
        if reply.status != 200:
            raise http_failure(reply.status, _detail(reply.body))
        return reply.body

    def close(self) -> None:
        self.client.close()


def join_exists(query: str) -> str:
    """`query` with each `FILTER EXISTS { s p o }` (one triple pattern, an
    optional final '.', every variable of it also outside the group) written
    as `s p o .`; other FILTER EXISTS are left as they are."""
    tokens = _tokens(query)
    significant = [i for i, (kind, _) in enumerate(tokens) if kind != "space"]
    texts = [tokens[i][1] for i in significant]
    for position in reversed(range(len(texts) - 5)):
        if texts[position].upper() != "FILTER" or texts[position + 1].upper() != "EXISTS" or texts[position + 2] != "{":
            continue
        end = position + 6 + (texts[position + 6 : position + 7] == ["."])
        pattern = texts[position + 3 : position + 6]
        if end >= len(texts) or texts[end] != "}" or any(text in "{}.;," for text in pattern):
            continue
        outside = texts[:position] + texts[end + 1 :]
        if all(text in outside for text in pattern if text.startswith(("?", "$"))):
            tokens[significant[position] : significant[end] + 1] = [("other", " ".join(pattern) + " .")]
    return "".join(text for _, text in tokens)


def expand_values(query: str) -> str:
    """`query` with each group `{ VALUES ?v { t1 t2 ... } REST }` written as
    `{ { REST[?v:=t1] BIND(t1 AS ?v) } UNION { REST[?v:=t2] BIND(t2 AS ?v) } ... }`."""
    tokens = _tokens(query)
    while True:
        found = _first_values_group(tokens)
        if found is None:
            return "".join(text for _, text in tokens)
        open_brace, values_end, close_brace, variable, values = found
        rest = tokens[values_end:close_brace]
        branches = []
        for value in values:
            body = "".join(value if kind == "other" and text == variable else text for kind, text in rest)
            branches.append(f"{{ {body} BIND({value} AS {variable}) }}")
        tokens[open_brace + 1 : close_brace] = [("other", " " + " UNION ".join(branches) + " ")]


def _first_values_group(tokens: list[tuple[str, str]]) -> tuple[int, int, int, str, list[str]] | None:
    """Where the first `{ VALUES ?v { ... } ... }` is: the group's braces, the
    end of the VALUES block, its variable and its values; None if there is none."""
    significant = [i for i, (kind, _) in enumerate(tokens) if kind != "space"]
    for position, index in enumerate(significant[:-3]):
        if tokens[index][1].upper() != "VALUES" or position == 0 or tokens[significant[position - 1]][1] != "{":
            continue
        variable, brace = tokens[significant[position + 1]][1], tokens[significant[position + 2]][1]
        if not variable.startswith("?") or brace != "{":
            continue
        values, cursor = [], position + 3
        while cursor < len(significant) and tokens[significant[cursor]][1] != "}":
            values.append(tokens[significant[cursor]][1])
            cursor += 1
        if cursor >= len(significant) or not values:
            return None
        depth, end = 1, cursor + 1
        while end < len(significant) and depth:
            text = tokens[significant[end]][1]
            depth += {"{": 1, "}": -1}.get(text, 0)
            end += 1
        if depth:
            return None
        return significant[position - 1], significant[cursor] + 1, significant[end - 1], variable, values
    return None


def unbind_constant_patterns(query: str) -> str:
    """`query` with each triple pattern made only of constants
    (`<s> <p> <o>` or `<s> <p> "literal"`, ending with '.' or '}') written as
    `<s> <p> ?_coqa_boundN FILTER(?_coqa_boundN = <o>)`."""
    tokens = _tokens(query)
    significant = [i for i, (kind, _) in enumerate(tokens) if kind != "space"]
    replaced = 0
    for position in range(len(significant) - 3):
        before = tokens[significant[position - 1]][1] if position else "{"
        subject, predicate, obj, after = (tokens[significant[position + k]] for k in range(4))
        if (
            before in ("{", ".")
            and subject[0] == predicate[0] == "iri"
            and obj[0] in ("iri", "string")
            and after[1] in (".", "}")
        ):
            variable = f"{BOUND_VARIABLE}{replaced}"
            tokens[significant[position + 2]] = ("other", f"{variable} FILTER({variable} = {obj[1]})")
            replaced += 1
    return "".join(text for _, text in tokens)


def _as_sparql_json(data: dict[str, Any], query: AdmittedQuery) -> Any:
    """gStore's reply in the standard layout: its ASK answer (a `_askResult`
    binding) becomes the standard `boolean`; SELECT replies are standard."""
    if query.form != ASK:
        return data
    try:
        value = data["results"]["bindings"][0][ASK_VARIABLE]["value"]
    except (KeyError, IndexError, TypeError):
        return {}
    return {"boolean": value == "true"} if value in ("true", "false") else {}


def _detail(body: bytes) -> str:
    """The server's own words for an HTTP error: StatusMsg when there is one, else the body."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict) and data.get("StatusMsg"):
        return first_line(str(data["StatusMsg"]))
    return first_line(body)
