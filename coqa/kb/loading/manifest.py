"""The manifest of a store directory: what was loaded, when, with which counts."""

from __future__ import annotations

import datetime
import json
from dataclasses import asdict
from pathlib import Path

from coqa.kb import MANIFEST
from coqa.kb.base import KBError
from coqa.kb.loading.report import LoadReport


def read_manifest(store_dir: Path) -> dict:
    """The manifest of a store directory ({} when there is none)."""
    path = store_dir / MANIFEST
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise KBError(f"cannot read {path}: {error}") from None


def write_manifest(directory: Path, report: LoadReport, previous: dict) -> None:
    """Write into `directory` the manifest recording `report` after the loads
    recorded in `previous` (the manifest of the store appended to, or {})."""
    loads = list(previous.get("loads", []))
    files = []
    for file_report in report.files:
        entry = asdict(file_report)
        entry["repairs"] = dict(file_report.repairs)
        entry["rejects"] = dict(file_report.rejects)
        files.append(entry)
    loads.append(
        {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "mode": report.mode,
            "seconds": round(report.seconds, 3),
            "facts_added": report.facts_added,
            "duplicates": report.total.duplicates,
            "files": files,
        }
    )
    manifest = {
        "coqa_store": 1,
        "index_only": report.index_only,
        "triples": report.triples,
        "index_entries": report.index_entries,
        "loads": loads,
    }
    path = directory / MANIFEST
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)
