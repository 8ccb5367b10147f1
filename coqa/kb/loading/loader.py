"""`coqa load`: PKU BASE files into an embedded store and a mention index.

A store directory holds `oxigraph/` (pyoxigraph store), `mentions/` (the
mention index), `manifest.json` (what was loaded, when, with which counts)
and, when lines were rejected, `rejects.tsv`.

A load runs two passes over the files (each streams them in blocks of whole
lines, coqa.kb.loading.line_reading): the store pass bulk loads the triple files
(coqa.kb.loading.bulk_load); the counting pass counts and rejects every line and
builds the mention index (coqa.kb.loading.index_job), in a second process when the
input is large, so that both use a core. This module runs them and records
the outcome (coqa.kb.loading.manifest) in the store directory (coqa.kb.loading.store_dir).

Counting: every input line is exactly one of *loaded* (as it was),
*repaired* (loaded after a documented repair), *rejected* (written to the
rejects file with file, line number, reason and the raw line) or *blank*.
*Duplicates* are counted among the loaded and repaired lines: lines whose
fact was already stored (earlier in the load or, with `append`, before it).
The store keeps one copy; nothing is lost. They are counted from what the
store gained, so per file only for a lone triple file; several triple files
share the bulk load and their duplicates are known only in the total.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence


from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.base import KBError
from coqa.kb.loading.bulk_load import StorePass, store_pass
from coqa.kb.loading.formats import MENTIONS
from coqa.kb.loading.index_job import ChildJob, IndexJob
from coqa.kb.loading.manifest import read_manifest, write_manifest
from coqa.kb.loading.rejects import REJECTS_FILE
from coqa.kb.loading.report import FileReport, LoadReport
from coqa.kb.loading.sources import find_sources
from coqa.kb.loading.store_dir import MODES, check_mode, commit, copy_store, new_work_dir, recover_interrupted_loads, writer_lock
from coqa.kb.loading.progress_bar import progress_bar

# Inputs this large build the mention index in a second process (spawning costs ~1 s).
PARALLEL_BYTES = 64 << 20


def load_kb(
    sources: Sequence[str | Path],
    store_dir: str | Path,
    mode: str = "new",
    index_only: bool = False,
    progress: bool | None = None,
    rejects_path: str | Path | None = None,
    kb_format: str | None = None,
) -> LoadReport:
    """Load PKU BASE or NLPCC KB files (directories or files, see
    `find_sources`, which also says what `kb_format` does) into the store
    directory `store_dir` and report the counts.

    `mode`: "new" refuses a directory that already holds a store, "replace"
    rebuilds it, "append" adds to it (keeping its facts and mention index).
    `index_only` builds the mention index without the embedded store (for
    remote backends). `progress`: show a progress bar (None: a bar when stderr is
    a terminal, lines every 10 s otherwise; coqa.kb.loading.progress_bar). Rejected lines go to `rejects_path` (default
    STORE_DIR/rejects.tsv), replaced when the load completes.

    A load is all or nothing: the new state of the store is built in a work
    folder and committed at the end (see coqa.kb.loading.store_dir), so a failed or
    interrupted load leaves the store, its index, its manifest and the
    rejects file as they were. One load at a time per store directory: a
    second one raises KBError at once. Raises KBError for bad input.

    Inputs of PARALLEL_BYTES or more build the mention index in a spawned
    process, so a script calling this must guard its entry point with
    `if __name__ == "__main__":` (the multiprocessing rule).
    """
    started = time.perf_counter()
    store_dir = Path(store_dir).expanduser()
    files = find_sources(sources, kb_format)
    if mode not in MODES:
        raise KBError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    rejects_target = Path(rejects_path).expanduser() if rejects_path else store_dir / REJECTS_FILE
    with writer_lock(store_dir):
        _check_writable(rejects_target)
        notes = recover_interrupted_loads(store_dir)
        appending = check_mode(store_dir, mode, index_only)
        work_dir = new_work_dir(store_dir)
        try:
            report = _build(files, store_dir, work_dir, mode, index_only, appending, progress, started)
        except OSError as error:
            shutil.rmtree(work_dir, ignore_errors=True)
            raise KBError(f"cannot write the store in {store_dir}: {error}") from None
        except BaseException:
            shutil.rmtree(work_dir, ignore_errors=True)
            raise
        with _interrupts_deferred() as interrupted:
            commit(work_dir, store_dir, rejects_target)
    report.notes = notes
    if interrupted:
        report.notes.append("interrupted after the load was complete: the store holds all of it")
    report.rejects_path = rejects_target if report.total.rejected else None
    return report


def _check_writable(rejects_target: Path) -> None:
    """KBError now rather than at the commit if the rejects file cannot be written."""
    try:
        rejects_target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KBError(f"cannot write the rejects file {rejects_target}: {error.strerror}") from None
    if rejects_target.is_dir() or not os.access(rejects_target.parent, os.W_OK):
        raise KBError(f"cannot write the rejects file {rejects_target}: choose another --rejects FILE")


def _build(
    files: list[tuple[Path, str]],
    store_dir: Path,
    work_dir: Path,
    mode: str,
    index_only: bool,
    appending: bool,
    show_progress: bool | None,
    started: float,
) -> LoadReport:
    """Build the new state of the store in `work_dir`: the pyoxigraph store
    (when appending, from a copy of the live one), the mention index, the
    rejects and the manifest."""
    existing_index = store_dir / INDEX_SUBDIR if appending and (store_dir / INDEX_SUBDIR).exists() else None
    if appending and not index_only:
        copy_store(store_dir, work_dir)
    job = IndexJob(files, work_dir / INDEX_SUBDIR, work_dir / REJECTS_FILE, existing_index)
    previous = read_manifest(store_dir) if appending else {}
    passes = _run_passes(job, work_dir, index_only, show_progress, previous.get("triples"), compact=not appending)
    report = LoadReport(
        store_dir,
        mode,
        index_only,
        passes.reports,
        None,
        passes.stored.triples if passes.stored else None,
        passes.index_entries,
        time.perf_counter() - started,
        passes.stored.added if passes.stored else None,
        compaction_seconds=passes.stored.compaction_seconds if passes.stored else None,
    )
    write_manifest(work_dir, report, previous)
    return report


@contextmanager
def _interrupts_deferred() -> Iterator[list[int]]:
    """While inside, Ctrl-C (SIGINT) is recorded in the yielded list instead
    of raising KeyboardInterrupt, so that a load that is being committed ends
    committed and says so. (SIGINT raises only in the main thread; elsewhere
    there is nothing to defer.)"""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield received
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass
class _Passes:
    """What the counting pass found, and what the store pass did (None
    when only the index was built)."""

    reports: list[FileReport]
    index_entries: int
    rejected: int
    stored: StorePass | None = None


def _run_passes(
    job: IndexJob,
    work_dir: Path,
    index_only: bool,
    show_progress: bool | None,
    known_triples: int | None = None,
    compact: bool = False,
) -> _Passes:
    """Run the counting pass and, unless `index_only`, the store pass
    (`known_triples`: what the store held before, from its manifest;
    `compact`: compact the store once loaded); fill
    in the duplicates of the triple files from what the store gained (per
    file when there is one triple file, else only in the total)."""
    triple_files = [(path, kind) for path, kind in job.files if kind != MENTIONS]
    input_bytes = sum(path.stat().st_size for path, _ in job.files)
    triple_bytes = sum(path.stat().st_size for path, _ in triple_files)
    in_child = not index_only and input_bytes >= PARALLEL_BYTES
    # The bar counts the bytes read by the passes of this process.
    shown = input_bytes if index_only else triple_bytes if in_child else triple_bytes + input_bytes
    with progress_bar(shown, "load", show_progress) as bar:
        if index_only:
            passes = _Passes(*job.run(bar))
            for report in passes.reports:
                if report.kind != MENTIONS:
                    report.duplicates = None
            return passes
        child = ChildJob(job) if in_child else None
        try:
            stored = store_pass(triple_files, work_dir / STORE_SUBDIR, bar, known_triples, compact)
            bar.set_postfix_str("mention index")
            passes = _Passes(*(child.result() if child else job.run(bar)), stored=stored)
        except BaseException:
            if child:
                child.kill()
            raise
    for report in passes.reports:
        if report.kind != MENTIONS:
            report.duplicates = report.loaded + report.repaired - stored.added if len(triple_files) == 1 else None
    return passes
