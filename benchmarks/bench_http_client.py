"""CPU per request of the remote backends' HTTP client against a real
`oxigraph serve` on 127.0.0.1, side by side in one run:

- `requests + timer`: what coqa used before: a kept-alive requests.Session,
  the reply streamed and read in 64 KB chunks, a threading.Timer started and
  cancelled per request for the total deadline;
- `http_client`: coqa.kb.backends.http_client.HTTPClient (deadline checked
  between reads, TCP_QUICKACK, no thread);
- `bare http.client`: a kept-alive http.client connection with no deadline
  and no bounds (the floor);
- `select()`: the whole SparqlEndpoint.select over the new client (admission,
  request, the SPARQL XML reply read with its names back to PKU BASE), and
  its parts alone, with the same rows read from a SPARQL JSON reply beside.

Rounds alternate between the clients (the machine is shared and noisy); the
figure is the median over rounds of (process CPU time / requests).

    python benchmarks/bench_http_client.py [--rounds 15] [--requests 200]
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable
from urllib.parse import urlencode, urlsplit

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coqa.kb import STORE_SUBDIR  # noqa: E402
from coqa.kb.backends.admission import admit  # noqa: E402
from coqa.kb.backends.http_client import HTTPClient  # noqa: E402
from coqa.kb.backends.sparql_endpoint import ACCEPT, JSON_RESULTS, SparqlEndpoint, results_from_json, results_from_reply  # noqa: E402
from coqa.kb.demo import DEMO_DIR, DEMO_KB_FILES  # noqa: E402
from coqa.kb.loading.loader import load_kb  # noqa: E402
from coqa.testing.oxigraph_server import serve_store_copy  # noqa: E402

# A one-hop predicate discovery, the most common kind of query generation sends.
QUERY = "SELECT ?p (COUNT(?o) AS ?n) WHERE { <周星驰> ?p ?o } GROUP BY ?p"


def requests_with_timer(url: str, timeout: float) -> Callable[[str], bytes]:
    """The client coqa had: requests, streamed, a timer thread per request."""
    session = requests.Session()

    def post(query: str) -> bytes:
        timer = threading.Timer(timeout, lambda: None)
        timer.daemon = True
        timer.start()
        try:
            with session.post(url, data={"query": query}, headers={"Accept": ACCEPT}, timeout=timeout, stream=True) as reply:
                return b"".join(reply.iter_content(1 << 16))
        finally:
            timer.cancel()

    return post


def new_client(url: str, timeout: float) -> Callable[[str], bytes]:
    client = HTTPClient(timeout)
    return lambda query: client.post(url, {"query": query}, {"Accept": ACCEPT}).body


def bare_http_client(url: str, timeout: float) -> Callable[[str], bytes]:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    headers = {"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded"}

    def post(query: str) -> bytes:
        connection.request("POST", parts.path, urlencode({"query": query}), headers)
        return connection.getresponse().read()

    return post


def cpu_per_call(call: Callable[[], object], count: int) -> float:
    """Process CPU milliseconds per call of `call`, over `count` calls."""
    started = time.process_time()
    for _ in range(count):
        call()
    return (time.process_time() - started) * 1000 / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--requests", type=int, default=200, help="requests per client per round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-http-") as temp:
        work = Path(temp)
        load_kb([DEMO_DIR / name for name in DEMO_KB_FILES], work / "store", progress=False)
        with serve_store_copy(work / "store" / STORE_SUBDIR, work) as url:
            endpoint = SparqlEndpoint(url, timeout=10, retries=0)
            admitted = admit(QUERY)
            reply = endpoint.client.post(url, {"query": admitted.standard_text}, {"Accept": ACCEPT})
            json_body = endpoint.client.post(url, {"query": admitted.standard_text}, {"Accept": JSON_RESULTS}).body
            data = json.loads(json_body)
            rows = len(results_from_reply(reply, admitted, "x").rows)
            print(f"oxigraph serve {url}; query of {rows} rows, reply {len(reply.body)} bytes ({reply.content_type}), as JSON {len(json_body)}")
            clients = {
                "requests + timer (before)": requests_with_timer(url, 10),
                "http_client (after)": new_client(url, 10),
                "bare http.client (floor)": bare_http_client(url, 10),
            }
            calls: dict[str, Callable[[], object]] = {
                name: (lambda post=post: post(admitted.standard_text)) for name, post in clients.items()
            }
            calls["select(): whole, after"] = lambda: endpoint.select(QUERY)
            calls["  admission alone"] = lambda: admit(QUERY)
            calls["  XML reply read, names back"] = lambda: results_from_reply(reply, admitted, "x")
            calls["  as JSON: decoding alone"] = lambda: json.loads(json_body)
            calls["  as JSON: names back alone"] = lambda: results_from_json(data, admitted, "x")
            for call in calls.values():  # warm up: connections open, caches filled
                cpu_per_call(call, 20)
            figures: dict[str, list[float]] = {name: [] for name in calls}
            for _ in range(args.rounds):
                for name, call in calls.items():
                    figures[name].append(cpu_per_call(call, args.requests))
            print(f"{'':<30}{'CPU ms/request (median of ' + str(args.rounds) + ' rounds)':>44}")
            for name, values in figures.items():
                print(f"{name:<30}{statistics.median(values):>12.3f}")
            endpoint.close()


if __name__ == "__main__":
    main()
