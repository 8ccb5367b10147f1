"""The Virtuoso setting docs/backends-tuning.md recommends for coqa, on a real
Virtuoso: with its query cost estimation on (the packaged
MaxQueryCostEstimationTime = 400), Virtuoso refuses a query whose estimate it
cannot make; set to 0 in the running server's virtuoso.ini, the next query is
answered, so the setting takes effect without a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from coqa.kb.backends.sparql_endpoint import SparqlEndpoint
from coqa.kb.base import KBError
from coqa.kb.names import name_to_iri
from coqa.testing.virtuoso_server import DATABASE_SUBDIR, serve_virtuoso, set_sparql_settings, virtuoso_available

from conftest import VIRTUOSO_SCRIPT

# Five unrelated triple patterns: an estimate far over 400 s (their cross product), an instant first row.
CROSS_PRODUCT = "select ?a ?o where { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n ?o } limit 1"


@pytest.fixture
def tiny_virtuoso(tmp_path: Path) -> object:
    reason = virtuoso_available(VIRTUOSO_SCRIPT)
    if reason:
        pytest.skip(f"no real Virtuoso on this machine: {reason}")
    (tmp_path / "load").mkdir()
    triples = [(f"甲{i}", "关系", f"乙{i}") for i in range(2000)]  # enough that five patterns' estimate is out of bounds
    lines = [" ".join(f"<{name_to_iri(name)}>" for name in triple) + " ." for triple in triples]
    (tmp_path / "load" / "tiny.nt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with serve_virtuoso(VIRTUOSO_SCRIPT, tmp_path / "load", tmp_path) as url:
        yield url


def test_cost_estimation_off_answers_what_virtuoso_would_refuse(tiny_virtuoso: str, tmp_path: Path) -> None:
    endpoint = SparqlEndpoint(tiny_virtuoso, timeout=30, retries=0)
    with pytest.raises(KBError, match="estimated execution time"):
        endpoint.select(CROSS_PRODUCT)
    set_sparql_settings(tmp_path / DATABASE_SUBDIR, {"MaxQueryCostEstimationTime": "0"})
    assert len(endpoint.select(CROSS_PRODUCT).rows) == 1
    ini = (tmp_path / DATABASE_SUBDIR / "virtuoso.ini").read_text(encoding="utf-8").splitlines()
    assert ini.count("MaxQueryCostEstimationTime = 0") == 1 and ini.count("[SPARQL]") == 1
    endpoint.close()


def test_a_setting_the_section_lacks_is_added_to_it(tiny_virtuoso: str, tmp_path: Path) -> None:
    set_sparql_settings(tmp_path / DATABASE_SUBDIR, {"MaxQueryExecutionTime": "30", "ExternalQuerySource": "0"})
    ini = (tmp_path / DATABASE_SUBDIR / "virtuoso.ini").read_text(encoding="utf-8").splitlines()
    section = ini[ini.index("[SPARQL]") : ini.index("[SPARQL]") + 12]
    assert "MaxQueryExecutionTime = 30" in section and "ExternalQuerySource = 0" in section
    assert sum(line.split("=")[0].strip() == "MaxQueryExecutionTime" for line in ini) == 1
