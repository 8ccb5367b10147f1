"""The NLPCC KBQA data set end to end (skipped without ../shared/data/nlpcc-kbqa)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.cli_run import SHARED_DATA, run_coqa

NLPCC = SHARED_DATA / "nlpcc-kbqa"
pytestmark = pytest.mark.skipif(not (NLPCC / "nlpcc-kbqa-kb.txt").is_file(), reason=f"no NLPCC KBQA data in {NLPCC}")


def test_export_of_the_nlpcc_knowledge_base_writes_every_fact(tmp_path: Path) -> None:
    done = run_coqa(["export", str(NLPCC), "--to", "ntriples", "-o", str(tmp_path / "nlpcc.nt")])
    assert done.returncode == 0, done.stderr
    with (tmp_path / "nlpcc.nt").open(encoding="utf-8") as written:
        assert sum(1 for _ in written) > 100_000
    assert "rejected lines: none" in done.stdout
