"""The store pass of a load: triple files into a pyoxigraph store through one
streaming bulk load."""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import pyoxigraph as ox
from tqdm import tqdm

from coqa.kb.base import KBError
from coqa.kb.loading.formats import Triple
from coqa.kb.loading.ntriples import regular_lines_to_ntriples, triple_to_ntriples
from coqa.kb.loading.rejects import RejectsCounter
from coqa.kb.loading.nlpcc_reading import triple_file_reader

PIPE_BYTES = 1 << 20
BULK_LOAD_NICENESS = 4


def _yield_to_indexing() -> None:
    """Raise the nice value of the calling thread, and so of the threads it
    starts (pyoxigraph's bulk loader starts one per core), by
    BULK_LOAD_NICENESS. At full priority they take both cores from the
    mention-index process, whose trie save then runs alone at the end;
    yielding lets the two overlap (125 s end to end at 10M triples at
    niceness 0, 112-118 s at 10, 109 s at 4, where both end about
    together). Per-thread priorities are a Linux feature."""
    if sys.platform == "linux":
        try:
            thread = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + BULK_LOAD_NICENESS))
        except OSError:  # not allowed here: the load runs as it would have
            pass


def _widen_pipe(fd: int) -> None:
    """Give the pipe a 1 MB buffer where the system allows (Linux), so the
    loader reads in large pieces."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class BulkSink:
    """N-Triples bytes into a pyoxigraph store through one streaming bulk
    load: a background thread runs `Store.bulk_load` reading from a pipe
    (pyoxigraph releases the GIL) while the caller parses and writes.

    One call for the whole load matters: every bulk_load call adds sorted
    files that RocksDB then compacts with those of the earlier calls (ten
    calls at 10M triples: 30% more CPU than one). The pipe keeps memory
    bounded: a write waits while the loader is busy."""

    def __init__(self, store: ox.Store) -> None:
        read_end, write_end = os.pipe()
        _widen_pipe(write_end)
        self._reader = os.fdopen(read_end, "rb")
        self._writer = os.fdopen(write_end, "wb", buffering=0)
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="coqa-bulk-load", initializer=_yield_to_indexing
        )
        self._loading = self._executor.submit(self._bulk_load, store)

    def _bulk_load(self, store: ox.Store) -> None:
        # lenient: the parser skips IRI validation (10% of the load's CPU);
        # every IRI here comes from the codec or the fast path's checked names.
        try:
            store.bulk_load(self._reader, ox.RdfFormat.N_TRIPLES, lenient=True)
        finally:
            self._reader.close()  # a write still waiting fails instead of hanging

    def add(self, ntriples: bytes) -> None:
        try:
            self._writer.write(ntriples)
        except BrokenPipeError:  # the bulk load stopped: say why
            self.finish()
            raise KBError("bulk load stopped before the end of its input") from None

    def take(self, regular: str, triples: Sequence[Triple]) -> None:
        """Write one block's facts (see coqa.kb.loading.triple_reading.TripleConsumer)."""
        ntriples = regular_lines_to_ntriples(regular) + "".join(map(triple_to_ntriples, triples))
        self.add(ntriples.encode("utf-8"))

    def abandon(self) -> None:
        """End the input after a failure elsewhere (whose error matters more
        than any of the bulk load's)."""
        try:
            self.finish()
        except KBError:
            pass

    def finish(self) -> None:
        """End the input and wait until the bulk load has stored all of it."""
        if not self._writer.closed:
            self._writer.close()
        try:
            self._loading.result()
        except (SyntaxError, OSError) as error:
            raise KBError(f"bulk load failed: {error}") from None
        finally:
            self._executor.shutdown()


def open_store(path: Path) -> ox.Store:
    """The store at `path`, opened for writing."""
    try:
        return ox.Store(str(path))
    except OSError as error:
        raise KBError(f"cannot open the store at {path} for writing (is it in use?): {error}") from None


@dataclass
class StorePass:
    """What the store pass did: triples the store gained, its final size,
    and the seconds spent compacting it (None when it was not compacted)."""

    added: int
    triples: int
    compaction_seconds: float | None


def store_pass(
    files: Sequence[tuple[Path, str]], store_path: Path, progress: tqdm, known_size: int | None = None, compact: bool = False
) -> StorePass:
    """Bulk load the triple files into the store at `store_path`. `known_size`:
    the number of triples the store holds (from its manifest), which spares
    counting them (a scan of the whole store: 4-5 s at 12M triples).
    `compact`: merge the store's files once loaded (see `compact_store`).
    Rejected lines are only counted: the counting pass (coqa.kb.loading.index_job)
    writes them."""
    store = open_store(store_path)
    before = len(store) if known_size is None else known_size
    sink = BulkSink(store)
    try:
        for path, kind in files:
            triple_file_reader(path, kind, RejectsCounter(), sink).run(progress)
    except BaseException:
        sink.abandon()
        raise
    sink.finish()
    stored = len(store)
    return StorePass(stored - before, stored, compact_store(store, progress) if compact else None)


def compact_store(store: ox.Store, progress: tqdm) -> float:
    """Merge the sorted files a bulk load leaves into RocksDB's levels, once,
    at the end of a new store's load; return the seconds it took. Left as
    they are, the files make every lookup consult many of them (10M triples:
    CPU per question 111 ms, 81 ms compacted), and the first checkpoint of
    the store, the start of every append, compacts them anyway (30M: 99 s of
    the first append, 4.7 GB written). An append does not compact: that
    would rewrite the whole store, not what was appended."""
    progress.set_postfix_str("compacting the store")
    started = time.perf_counter()
    try:
        store.optimize()
    except OSError as error:
        raise KBError(f"compacting the store failed: {error}") from None
    return time.perf_counter() - started
