"""Same answers everywhere: all pkubase-bench dev gold queries (read from
../shared at run time) on the embedded store, a real `oxigraph serve`, a real
gStore loaded with `coqa export --to gstore` and a real Virtuoso loaded with
`coqa export --to ntriples` give identical result sets, and the embedded
store's first column is the published gold answer set."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import BENCH_DIR
from coqa.dataset import read_ccks
from coqa.kb import STORE_SUBDIR
from coqa.kb.gstore import GStore
from coqa.kb.gstore_server import GStoreServer
from coqa.kb.oxigraph_store import OxigraphStore
from coqa.kb.sparql_endpoint import SparqlEndpoint


@pytest.mark.slow
def test_dev_gold_queries_give_identical_results_on_four_engines(
    bench_store_dir: Path, bench_server: str, bench_gstore: GStoreServer, bench_virtuoso: str
) -> None:
    embedded = OxigraphStore(bench_store_dir / STORE_SUBDIR)
    remotes = {
        "oxigraph serve": SparqlEndpoint(bench_server, timeout=30, retries=0),
        "gStore": GStore(bench_gstore.url, bench_gstore.db, timeout=30, retries=0),
        "Virtuoso": SparqlEndpoint(bench_virtuoso, timeout=30, retries=0),
    }
    questions = read_ccks(BENCH_DIR / "dev.txt")
    differ: dict[str, list[int]] = {name: [] for name in remotes}
    wrong = []
    for question in questions:
        local = embedded.select(question.sparql)
        expected = (local.variables, set(local.rows))
        for name, kb in remotes.items():
            result = kb.select(question.sparql)
            if (result.variables, set(result.rows)) != expected:
                differ[name].append(question.number)
        if sorted(str(term) for term in local.column(0)) != sorted(question.answers):
            wrong.append(question.number)
    for kb in (embedded, *remotes.values()):
        kb.close()
    assert len(questions) == 703
    assert (differ, wrong) == ({name: [] for name in remotes}, [])
