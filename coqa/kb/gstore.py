"""Remote backend: gStore's own HTTP API (ghttp), through requests.

gStore keeps PKU BASE names as bare IRIs (`<莫妮卡·贝鲁奇>`), so queries go to
it in PKU BASE style (`to_pkubase_sparql`) and bare names come back.

Request form: the documented GET query,
``GET URL?operation=query&username=U&password=P&db_name=DB&format=json&sparql=...``
(see docs GSTORE.md). It is the form every ghttp version answers (the POST
JSON body is gStore 1.x only), and coqa's queries are short enough for a URL.
The reply is JSON: ``StatusCode`` 0 with the SPARQL JSON results layout, or a
non-zero ``StatusCode`` whose ``StatusMsg`` is shown to the user.
"""

from __future__ import annotations

from typing import Any

import requests

from coqa.kb.base import KBError, QueryResult
from coqa.kb.http_retry import RetryPolicy, call_with_retries, check_http_url, first_line, http_failure
from coqa.kb.names import to_pkubase_sparql
from coqa.kb.sparql_endpoint import results_from_json

SERVICE = "gStore server"


class GStore:
    """Database `db` on the gStore ghttp server at `url` (e.g. http://127.0.0.1:9000)."""

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
        self.session = requests.Session()

    def select(self, query: str) -> QueryResult:
        data = call_with_retries(
            lambda: self._request(to_pkubase_sparql(query)), service=SERVICE, url=self.url, policy=self.policy
        )
        status = data["StatusCode"]
        if str(status) != "0":
            message = first_line(str(data.get("StatusMsg") or "no StatusMsg"))
            raise KBError(f"the {self.description} answered StatusCode {status}: {message}")
        return results_from_json(data, self.description)

    def _request(self, sparql: str) -> dict[str, Any]:
        """One query request; the decoded JSON reply (a dict)."""
        params = {
            "operation": "query",
            "username": self.user,
            "password": self.password,
            "db_name": self.db,
            "format": "json",
            "sparql": sparql,
        }
        response = self.session.get(self.url, params=params, timeout=self.policy.timeout)
        try:
            data = response.json()
        except ValueError:
            data = None
        has_status = isinstance(data, dict) and "StatusCode" in data
        if response.status_code >= 500 or (response.status_code != 200 and not has_status):
            raise http_failure(response.status_code, _detail(data, response.text))
        if not has_status:
            raise KBError(f"the {self.description} did not answer with a gStore JSON reply (no StatusCode)")
        return data

    def close(self) -> None:
        self.session.close()


def _detail(data: Any, text: str) -> str:
    """The server's own words for an error reply: StatusMsg when there is one, else the body."""
    if isinstance(data, dict) and data.get("StatusMsg"):
        return first_line(str(data["StatusMsg"]))
    return first_line(text)
