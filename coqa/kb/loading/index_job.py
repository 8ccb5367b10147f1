"""The counting pass of a load: every line counted, rejects written, the
mention index built; in this process or in a spawned one."""

from __future__ import annotations

import gc
import multiprocessing
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from tqdm import tqdm

from coqa.kb.base import KBError
from coqa.kb.loading.formats import MENTIONS, NLPCC_KB, Triple
from coqa.kb.loading.line_reading import LineReader
from coqa.kb.mention_index import MentionIndexBuilder
from coqa.kb.loading.mention_reading import MentionFileReader
from coqa.kb.names import canonical_name
from coqa.kb.loading.nlpcc_reading import SubjectFeeder, triple_file_reader
from coqa.kb.loading.rejects import RejectsWriter
from coqa.kb.loading.report import FileReport
from coqa.kb.loading.triple_reading import regular_names_and_literals

SEEN_LIMIT = 1 << 22  # names remembered by IndexFeeder: about 500 MB


class IndexFeeder:
    """Feeds the entity names and literal values of triple files to the
    mention index builder (a coqa.kb.loading.triple_reading.TripleConsumer),
    skipping those seen recently (the builder de-duplicates anyway; this
    only saves work, within a bounded memory)."""

    def __init__(self, builder: MentionIndexBuilder) -> None:
        self.builder = builder
        self._entities: set[str] = set()
        self._literals: set[str] = set()

    def take(self, regular: str, triples: Sequence[Triple]) -> None:
        names, values = regular_names_and_literals(regular)
        for triple in triples:
            names.append(canonical_name(triple.subject))
            if triple.object.is_literal:
                values.append(triple.object.value)
            else:
                names.append(canonical_name(triple.object.value))
        self._entities = self._feed(names, self._entities, self.builder.add_entities)
        self._literals = self._feed(values, self._literals, self.builder.add_literals)

    @staticmethod
    def _feed(items: Iterable[str], seen: set[str], add: Callable[[list[str]], None]) -> set[str]:
        new = set(items)
        new -= seen
        add(list(new))
        if len(seen) + len(new) > SEEN_LIMIT:
            return new
        seen |= new
        return seen


# (file reports, index entries, rejected lines)
IndexOutcome = tuple[list[FileReport], int, int]


@dataclass
class IndexJob:
    """The counting pass of a load: reads every file, counts and rejects its
    lines, and builds the mention index (adding a segment to `existing`, an
    index directory, when appending). It runs in a separate process next to the
    store pass when the input is large, so both use a core."""

    files: list[tuple[Path, str]]
    index_dir: Path
    rejects_path: Path
    existing: Path | None = None

    def run(self, progress: tqdm) -> IndexOutcome:
        """The file reports, the number of index entries and of rejected lines."""
        with _garbage_collection_paused():
            return self._run(progress)

    def _run(self, progress: tqdm) -> IndexOutcome:
        builder = MentionIndexBuilder(self.existing)
        rejects = RejectsWriter(self.rejects_path)
        feeder, subjects = IndexFeeder(builder), SubjectFeeder(builder)
        reports = []
        try:
            for path, kind in self.files:
                progress.set_postfix_str(path.name)
                entries_before = len(builder)
                reader: LineReader
                if kind == MENTIONS:
                    reader = MentionFileReader(path, rejects, builder)
                else:
                    reader = triple_file_reader(path, kind, rejects, subjects if kind == NLPCC_KB else feeder)
                report = reader.run(progress)
                if kind == MENTIONS:
                    report.duplicates = report.loaded + report.repaired - (len(builder) - entries_before)
                reports.append(report)
        finally:
            rejects.close()
        return reports, builder.save(self.index_dir), rejects.count


@contextmanager
def _garbage_collection_paused() -> Iterator[None]:
    """Python's cyclic garbage collector walks every entry of a set each time
    it collects the oldest generation, so while the index builder's set grows
    to millions of entries, collections cost more than the indexing (4x on
    the mention file at 10M triples). The index job makes no reference
    cycles, so pausing the collector loses nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _exit_with_parent() -> None:
    """End this (child) process as soon as its parent ends, however the
    parent ends: a killed load must not leave its index builder running."""
    parent = multiprocessing.parent_process()
    if parent is not None:

        def watch() -> None:
            parent.join()  # returns when the parent's end of a pipe closes
            os._exit(1)

        threading.Thread(target=watch, name="coqa-parent-watch", daemon=True).start()


def _run_in_child(job: IndexJob, send: Connection) -> None:
    _exit_with_parent()
    try:
        with tqdm(disable=True) as no_progress:
            outcome: object = job.run(no_progress)
    except KeyboardInterrupt:
        return
    except Exception as error:  # handed to the parent, which raises it
        outcome = error
    send.send(outcome)
    send.close()


class ChildJob:
    """An IndexJob running in a spawned process (a clean interpreter: the
    parent may hold threads and an open store)."""

    def __init__(self, job: IndexJob) -> None:
        context = multiprocessing.get_context("spawn")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_run_in_child, args=(job, send), daemon=True)
        self._process.start()
        send.close()

    def result(self) -> IndexOutcome:
        try:
            outcome = self._receive.recv()
        except EOFError:
            self._process.join()
            raise KBError(f"the mention index process died (exit code {self._process.exitcode})") from None
        self._process.join()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome  # type: ignore[return-value]

    def kill(self) -> None:
        self._process.terminate()
        self._process.join()
