"""What a load did: per-file line accounting and the load's outcome."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from coqa.kb.loading.formats import MENTIONS


@dataclass
class FileReport:
    """What happened to the lines of one file: lines == loaded + repaired +
    rejected + blank. `duplicates` is counted within loaded + repaired: lines
    whose fact was already in the store (mention files: whose entry was
    already in the index); None when not known (an index-only load, or one
    of several triple files: see `LoadReport.total`)."""

    path: str
    kind: str
    lines: int = 0
    loaded: int = 0
    repaired: int = 0
    rejected: int = 0
    blank: int = 0
    duplicates: int | None = 0
    repairs: Counter = field(default_factory=Counter)
    rejects: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def add(self, other: "FileReport") -> None:
        for name in ("lines", "loaded", "repaired", "rejected", "blank"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if self.duplicates is not None and other.duplicates is not None:
            self.duplicates += other.duplicates
        else:
            self.duplicates = None
        self.repairs.update(other.repairs)
        self.rejects.update(other.rejects)
        self.seconds += other.seconds


@dataclass
class LoadReport:
    """The outcome of `load_kb`: per-file counts, where things went, the time,
    and `notes` on what the load found and did besides (work folders of
    interrupted loads it cleaned up, an interrupt that came after the load
    was complete)."""

    store_dir: Path
    mode: str
    index_only: bool
    files: list[FileReport]
    rejects_path: Path | None
    triples: int | None
    index_entries: int
    seconds: float
    facts_added: int | None = None
    compaction_seconds: float | None = None  # None: the store was not compacted (appends, index-only loads)
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> FileReport:
        """The sum of the file reports. Its duplicates are known even when
        those of each triple file are not (several triple files go into the
        store in one bulk load): they are what the store did not gain."""
        total = FileReport("total", "")
        for report in self.files:
            total.add(report)
        if total.duplicates is None and self.facts_added is not None:
            facts = [r for r in self.files if r.kind != MENTIONS]
            mention_duplicates = [r.duplicates for r in self.files if r.kind == MENTIONS]
            if None not in mention_duplicates:
                stored = sum(r.loaded + r.repaired for r in facts) - self.facts_added
                total.duplicates = stored + sum(mention_duplicates)  # type: ignore[arg-type]
        return total
