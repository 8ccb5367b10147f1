"""`coqa load`: PKU BASE files into an embedded store and a mention index.

A store directory holds `oxigraph/` (pyoxigraph store), `mentions/` (the
mention index), `manifest.json` (what was loaded, when, with which counts)
and, when lines were rejected, `rejects.tsv`.

Files are streamed in blocks of whole lines, so memory stays bounded on the
triple path whatever the file size (the mention index builder holds its
entries until it saves them). Most lines take a fast path: a block's regular
lines (names that are their own IRI encoding but for inner spaces, plain
literals) are turned into N-Triples by a few string replacements and
streamed into one pyoxigraph bulk load, which runs in a background thread
while the next block is read;
regular mention2ent lines are split into fields by one regex pass and go to
the index builder as one batch; every other line goes through
`coqa.kb.formats`, which repairs it or says why it cannot.

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

import datetime
import gc
import json
import multiprocessing
import os
import re
import shutil
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from itertools import compress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Callable, Iterable, Iterator, Sequence

import pyoxigraph as ox
from tqdm import tqdm

from coqa.kb import INDEX_SUBDIR, MANIFEST, STORE_SUBDIR
from coqa.kb.base import KBError
from coqa.kb.formats import (
    FILE_PREFIXES,
    MENTIONS,
    TRIPLES,
    TYPES,
    LineError,
    Triple,
    decode_line,
    is_blank,
    kind_of_file,
    parse_mention_line,
    parse_triple_line,
)
from coqa.kb.names import IRI_SAFE_CHARS, NAME_BASE, canonical_name, name_to_iri
from coqa.mention_index import MentionIndex, MentionIndexBuilder

MODES = ("new", "replace", "append")
REJECTS_FILE = "rejects.tsv"
BLOCK_BYTES = 8 << 20
PIPE_BYTES = 1 << 20
BULK_LOAD_NICENESS = 4
SEEN_LIMIT = 1 << 22  # names remembered by _IndexFeeder: about 500 MB
# Inputs this large build the mention index in a second process (spawning costs ~1 s).
PARALLEL_BYTES = 64 << 20

# A name the codec keeps as it is but for inner spaces (escaped as %20):
# IRI-safe characters and spaces, no white space at either end (the codec
# trims it, see coqa.kb.names.canonical_name).
_NAME = rf"<(?!\s)[{IRI_SAFE_CHARS} ]+(?<!\s)>"
_REGULAR_LINE = rf'{_NAME}\t{_NAME}\t(?:{_NAME}|"[^"\\\t\r\n<>]*") \.'
# A run of regular lines: one match takes it whole, so the regex engine
# looks at each character once (a search for the other lines tries every
# position, which costs half as much again).
_REGULAR_RUN = re.compile(rf"(?:{_REGULAR_LINE}\n)*+")
_SPACED_NAME = re.compile(r"<[^>\n ]* [^>\n]*>")
# A mention2ent line the fast path takes: a mention that is not all white
# space, a canonical entity name without angle brackets, a plain rank.
# Possessive quantifiers keep the match linear in the line's length.
_REGULAR_MENTION = r"(?!\ufeff)([^\S\t\n]*+\S[^\t\n]*+)\t([^<\s](?:[^\t\n]*+(?<=\S))?)\t(0|[1-9][0-9]*+)"
# One row per line: the three fields of a regular line, or the whole line.
_MENTION_ROWS = re.compile(rf"^(?:{_REGULAR_MENTION}|(.*))$", re.M)
_SUBJECTS = re.compile(r"^<([^\t]*)>\t", re.M)
_ENTITY_OBJECTS = re.compile(r"\t<([^\t\n]*)> \.$", re.M)
_LITERAL_OBJECTS = re.compile(r'\t"([^\t\n]*)" \.$', re.M)
_KIND_ORDER = {TRIPLES: 0, TYPES: 1, MENTIONS: 2}


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
    """The outcome of `load_kb`: per-file counts, where things went, the time."""

    store_dir: Path
    mode: str
    index_only: bool
    files: list[FileReport]
    rejects_path: Path | None
    triples: int | None
    index_entries: int
    seconds: float
    facts_added: int | None = None

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


def find_sources(sources: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """The PKU BASE files named by `sources` (directories or files) with their
    kinds, triples and types before mention files; KBError when there are none
    or a file name does not say its kind."""
    found: dict[Path, str] = {}
    expected = ", ".join(f"{prefix}*" for prefix in FILE_PREFIXES)
    for source in sources:
        path = Path(source).expanduser()
        if path.is_dir():
            matched = [(f, kind_of_file(f.name)) for f in sorted(path.iterdir()) if f.is_file()]
            matched = [(f, kind) for f, kind in matched if kind]
            if not matched:
                raise KBError(f"no PKU BASE files in {path} (expected {expected})")
            for file, kind in matched:
                found.setdefault(file, kind)
        elif path.is_file():
            kind = kind_of_file(path.name)
            if kind is None:
                raise KBError(f"cannot tell what {path} holds from its name: PKU BASE files are named {expected}")
            found.setdefault(path, kind)
        else:
            raise KBError(f"no such file or directory: {path}")
    if not found:
        raise KBError("nothing to load: name a PKU BASE directory or files")
    return sorted(found.items(), key=lambda item: (_KIND_ORDER[item[1]], str(item[0])))


class RejectsWriter:
    """Writes rejected lines as TSV (`file, line, reason, raw`); the raw line is
    the last column and may itself hold tabs. The file is created on the first
    reject, so a load without rejects leaves none."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self._out: IO[str] | None = None

    def write(self, file: Path, line_number: int, reason: str, raw: str) -> None:
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = open(self.path, "w", encoding="utf-8", newline="\n")
            self._out.write("file\tline\treason\traw\n")
        self._out.write(f"{file}\t{line_number}\t{reason}\t{raw}\n")
        self.count += 1

    def close(self) -> None:
        if self._out is not None:
            self._out.close()


class _NoRejects(RejectsWriter):
    """For the store pass: the counting pass reports the same lines."""

    def __init__(self) -> None:
        super().__init__(Path(os.devnull))

    def write(self, file: Path, line_number: int, reason: str, raw: str) -> None:
        self.count += 1


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


class _BulkSink:
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


def _widen_pipe(fd: int) -> None:
    """Give the pipe a 1 MB buffer where the system allows (Linux), so the
    loader reads in large pieces."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass


class _IndexFeeder:
    """Feeds entity names and literal values to the mention index builder,
    skipping those seen recently (the builder de-duplicates anyway; this
    only saves work, within a bounded memory)."""

    def __init__(self, builder: MentionIndexBuilder) -> None:
        self.builder = builder
        self._entities: set[str] = set()
        self._literals: set[str] = set()

    def entities(self, names: Iterable[str]) -> None:
        """Feed canonical entity names (see `canonical_name`)."""
        self._entities = self._feed(names, self._entities, self.builder.add_entities)

    def literals(self, values: Iterable[str]) -> None:
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


def _escape_literal(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")


def triple_to_ntriples(triple: Triple) -> str:
    """One N-Triples line (with "\\n") for a triple, names through the codec,
    terms separated by tabs as in PKU BASE (N-Triples allows tabs)."""
    obj = triple.object
    rendered = f'"{_escape_literal(obj.value)}"' if obj.is_literal else f"<{name_to_iri(obj.value)}>"
    return f"<{name_to_iri(triple.subject)}>\t<{name_to_iri(triple.predicate)}>\t{rendered} .\n"


def _escape_spaces(name: re.Match[str]) -> str:
    return name.group(0).replace(" ", "%20")


def regular_lines_to_ntriples(text: str) -> str:
    """N-Triples for lines that all match the fast path's regular form: their
    names are their own IRI encoding but for inner spaces, so escaping those
    and adding the IRI base is the whole conversion."""
    return _SPACED_NAME.sub(_escape_spaces, text).replace("<", "<" + NAME_BASE)


def _read_blocks(path: Path) -> Iterator[bytes]:
    """The file as blocks of whole lines (the last one may lack its "\\n")."""
    try:
        stream = open(path, "rb")
    except OSError as error:
        raise KBError(f"cannot read {path}: {error.strerror or error}") from None
    with stream:
        rest = b""
        while chunk := _read(stream, path):
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                yield data[:cut]
        if rest:
            yield rest


def _read(stream: IO[bytes], path: Path) -> bytes:
    try:
        return stream.read(BLOCK_BYTES)
    except OSError as error:
        raise KBError(f"cannot read {path}: {error.strerror or error}") from None


def _split_lines(block: bytes) -> list[bytes]:
    lines = block.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


class _FileLoader:
    """Loads one file block by block and counts every line; subclasses parse."""

    def __init__(self, path: Path, kind: str, rejects: RejectsWriter) -> None:
        self.path = path
        self.report = FileReport(str(path), kind)
        self.rejects = rejects
        self.next_line = 1

    def run(self, progress: tqdm) -> FileReport:
        started = time.perf_counter()
        for block in _read_blocks(self.path):
            self.block(block)
            progress.update(len(block))
        self.finish()
        self.report.seconds = time.perf_counter() - started
        return self.report

    def block(self, block: bytes) -> None:
        try:
            text = block.decode("utf-8")
        except UnicodeDecodeError:
            for raw in _split_lines(block):
                try:
                    line, repairs = decode_line(raw)
                except LineError as error:
                    self.line(raw.decode("utf-8", errors="backslashreplace"), [], str(error))
                else:
                    self.line(line, repairs)
        else:
            self.text_block(text)

    def text_block(self, text: str) -> None:
        """Load a block of whole lines decoded as UTF-8."""
        raise NotImplementedError

    def line(self, text: str, repairs: list[str], error: str | None = None) -> None:
        """Count and load one line (decoded, without its "\\n"); `error`
        rejects it outright (bytes that could not be decoded)."""
        report = self.report
        report.lines += 1
        try:
            if error:
                raise LineError(error)
            if is_blank(text):
                report.blank += 1
            else:
                repairs = repairs + self.parse(text)
                if repairs:
                    report.repaired += 1
                    report.repairs.update(repairs)
                else:
                    report.loaded += 1
        except LineError as reason:
            report.rejected += 1
            report.rejects[str(reason)] += 1
            self.rejects.write(self.path, self.next_line, str(reason), text)
        self.next_line += 1

    def parse(self, text: str) -> list[str]:
        """Load one non-blank line; return its repairs or raise LineError."""
        raise NotImplementedError

    def count_loaded(self, count: int) -> None:
        """Count `count` lines that a fast path loaded as they were."""
        self.report.lines += count
        self.report.loaded += count

    def finish(self) -> None:
        """Called after the last block."""


class _TripleFileLoader(_FileLoader):
    """A triples or types file: facts into the store (with a sink), subjects,
    entity objects and literals into the mention index (with an index)."""

    def __init__(
        self, path: Path, kind: str, rejects: RejectsWriter, sink: _BulkSink | None, index: _IndexFeeder | None
    ) -> None:
        super().__init__(path, kind, rejects)
        self.sink = sink
        self.index = index
        self._regular: list[str] = []
        # From the block's other lines: N-Triples, entity names, literal values.
        self._parsed: list[str] = []
        self._names: list[str] = []
        self._values: list[str] = []

    def block(self, block: bytes) -> None:
        super().block(block)
        regular = "".join(self._regular)
        if self.index is not None:
            self.index.entities(_SUBJECTS.findall(regular) + _ENTITY_OBJECTS.findall(regular) + self._names)
            self.index.literals(_LITERAL_OBJECTS.findall(regular) + self._values)
        if self.sink is not None:
            ntriples = regular_lines_to_ntriples(regular) + "".join(self._parsed)
            self.sink.add(ntriples.encode("utf-8"))
        for pieces in (self._regular, self._parsed, self._names, self._values):
            pieces.clear()

    def text_block(self, text: str) -> None:
        """Regular lines are collected in runs for `block`, the others go one
        by one through `line`."""
        if not text.endswith("\n"):
            text += "\n"  # the file's last line
        position = 0
        while (start := _REGULAR_RUN.match(text, position).end()) < len(text):  # type: ignore[union-attr]
            self._take_regular(text[position:start])
            end = text.index("\n", start)
            self.line(text[start:end], [])
            position = end + 1
        self._take_regular(text[position:])

    def _take_regular(self, lines: str) -> None:
        if not lines:
            return
        count = lines.count("\n")
        self.count_loaded(count)
        self.next_line += count
        self._regular.append(lines)

    def parse(self, text: str) -> list[str]:
        triple, repairs = parse_triple_line(text)
        if self.sink is not None:
            self._parsed.append(triple_to_ntriples(triple))
        if self.index is not None:
            self._names.append(canonical_name(triple.subject))
            if triple.object.is_literal:
                self._values.append(triple.object.value)
            else:
                self._names.append(canonical_name(triple.object.value))
        return repairs


class _MentionFileLoader(_FileLoader):
    """A mention2ent file: every line into the mention index."""

    def __init__(self, path: Path, rejects: RejectsWriter, builder: MentionIndexBuilder) -> None:
        super().__init__(path, MENTIONS, rejects)
        self.builder = builder
        self._entries_before = len(builder)

    def text_block(self, text: str) -> None:
        """Regular lines go to the builder in one batch, the others (rare) one
        by one through `line`; one regex pass splits the block into fields."""
        rows = _MENTION_ROWS.findall(text)
        if text.endswith("\n"):
            rows.pop()  # the empty match after the final "\n"
        if not rows:
            return
        mentions, entities, ranks, others = zip(*rows)
        irregular = [number for number, mention in enumerate(mentions) if not mention]
        if irregular:
            entities, ranks = list(compress(entities, mentions)), list(compress(ranks, mentions))
            mentions = list(compress(mentions, mentions))
        self.builder.add_mentions(mentions, entities, ranks)
        first = self.next_line
        for number in irregular:
            self.next_line = first + number
            self.line(others[number], [])
        self.count_loaded(len(mentions))
        self.next_line = first + len(rows)

    def parse(self, text: str) -> list[str]:
        mention, repairs = parse_mention_line(text)
        self.builder.add_mentions([mention.mention], [canonical_name(mention.entity)], [mention.rank])
        return repairs

    def finish(self) -> None:
        added = len(self.builder) - self._entries_before
        self.report.duplicates = self.report.loaded + self.report.repaired - added


def _store_pieces(store_dir: Path) -> list[Path]:
    """The parts of a coqa store present in `store_dir`."""
    names = (STORE_SUBDIR, INDEX_SUBDIR, MANIFEST)
    return [store_dir / name for name in names if (store_dir / name).exists()]


def read_manifest(store_dir: Path) -> dict:
    """The manifest of a store directory ({} when there is none)."""
    path = store_dir / MANIFEST
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise KBError(f"cannot read {path}: {error}") from None


def _check_mode(store_dir: Path, mode: str, index_only: bool) -> bool:
    """Whether the load appends to an existing store; KBError when the mode
    does not fit what is in `store_dir`."""
    if mode not in MODES:
        raise KBError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if store_dir.exists() and not store_dir.is_dir():
        raise KBError(f"{store_dir} is a file, not a store directory")
    if not _store_pieces(store_dir):
        return False
    if mode == "new":
        raise KBError(f"{store_dir} already holds a store: add --replace to rebuild it or --append to add to it")
    if mode == "replace":
        return False
    has_oxigraph = (store_dir / STORE_SUBDIR).exists()
    if index_only and has_oxigraph:
        raise KBError(f"{store_dir} holds an embedded store: --index-only --append would leave it behind the index")
    if not index_only and not has_oxigraph:
        raise KBError(f"{store_dir} holds only a mention index: append to it with --index-only, or --replace it")
    return True


def _open_store(path: Path) -> ox.Store:
    try:
        return ox.Store(str(path))
    except OSError as error:
        raise KBError(f"cannot open the store at {path} for writing (is it in use?): {error}") from None


@dataclass
class _IndexJob:
    """The counting pass of a load: reads every file, counts and rejects its
    lines, and builds the mention index (starting from `existing`, an index
    directory, when appending). It runs in a separate process next to the
    store pass when the input is large, so both use a core."""

    files: list[tuple[Path, str]]
    index_dir: Path
    rejects_path: Path
    existing: Path | None = None

    def run(self, progress: tqdm) -> tuple[list[FileReport], int, int]:
        """The file reports, the number of index entries and of rejected lines."""
        with _garbage_collection_paused():
            return self._run(progress)

    def _run(self, progress: tqdm) -> tuple[list[FileReport], int, int]:
        builder = MentionIndexBuilder()
        if self.existing is not None:
            builder.add_index(MentionIndex.open(self.existing))
        rejects = RejectsWriter(self.rejects_path)
        index = _IndexFeeder(builder)
        reports = []
        try:
            for path, kind in self.files:
                progress.set_postfix_str(path.name)
                if kind == MENTIONS:
                    loader: _FileLoader = _MentionFileLoader(path, rejects, builder)
                else:
                    loader = _TripleFileLoader(path, kind, rejects, None, index)
                reports.append(loader.run(progress))
        finally:
            rejects.close()
        builder.save(self.index_dir)
        return reports, len(builder), rejects.count


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


def _run_in_child(job: _IndexJob, send: Connection) -> None:
    try:
        with tqdm(disable=True) as no_progress:
            outcome: object = job.run(no_progress)
    except KeyboardInterrupt:
        return
    except Exception as error:  # handed to the parent, which raises it
        outcome = error
    send.send(outcome)
    send.close()


class _ChildJob:
    """An _IndexJob running in a spawned process (a clean interpreter: the
    parent may hold threads and an open store)."""

    def __init__(self, job: _IndexJob) -> None:
        context = multiprocessing.get_context("spawn")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(target=_run_in_child, args=(job, send), daemon=True)
        self._process.start()
        send.close()

    def result(self) -> tuple[list[FileReport], int, int]:
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


def load_kb(
    sources: Sequence[str | Path],
    store_dir: str | Path,
    mode: str = "new",
    index_only: bool = False,
    progress: bool | None = None,
    rejects_path: str | Path | None = None,
) -> LoadReport:
    """Load PKU BASE files (directories or files, see `find_sources`) into the
    store directory `store_dir` and report the counts.

    `mode`: "new" refuses a directory that already holds a store, "replace"
    rebuilds it, "append" adds to it (keeping its facts and mention index).
    `index_only` builds the mention index without the embedded store (for
    remote backends). `progress`: show a progress bar (None: when stderr is
    a terminal). Rejected lines go to `rejects_path` (default
    STORE_DIR/rejects.tsv, overwritten by each load). New and replaced stores
    are built in a temporary directory and moved into place at the end, so a
    failed load leaves the old store as it was (a failed append keeps what it
    had added). Raises KBError for bad input.

    Inputs of PARALLEL_BYTES or more build the mention index in a spawned
    process, so a script calling this must guard its entry point with
    `if __name__ == "__main__":` (the multiprocessing rule).
    """
    started = time.perf_counter()
    store_dir = Path(store_dir).expanduser()
    files = find_sources(sources)
    appending = _check_mode(store_dir, mode, index_only)
    rejects_file = Path(rejects_path).expanduser() if rejects_path else store_dir / REJECTS_FILE
    if rejects_file.is_file():
        rejects_file.unlink()
    work_dir = store_dir if appending else store_dir / f".loading-{os.getpid()}"
    try:
        work_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise KBError(f"cannot create {work_dir}: {error.strerror}") from None
    existing = store_dir / INDEX_SUBDIR if appending else None
    job = _IndexJob(files, work_dir / INDEX_SUBDIR, rejects_file, existing)
    try:
        passes = _run_passes(job, work_dir, index_only, _show_progress(progress))
        seconds = time.perf_counter() - started
        report = LoadReport(
            store_dir,
            mode,
            index_only,
            passes.reports,
            None,
            passes.triples,
            passes.index_entries,
            seconds,
            passes.facts_added,
        )
        _write_manifest(work_dir, store_dir, report)
    except OSError as error:
        _abandon(work_dir, appending)
        raise KBError(f"cannot write the store in {store_dir}: {error}") from None
    except BaseException:
        _abandon(work_dir, appending)
        raise
    if not appending:
        _move_into_place(work_dir, store_dir)
    report.rejects_path = rejects_file if passes.rejected else None
    return report


def _abandon(work_dir: Path, appending: bool) -> None:
    """After a failure, a new or replacing load leaves no trace."""
    if not appending:
        shutil.rmtree(work_dir, ignore_errors=True)


def _show_progress(progress: bool | None) -> bool:
    return sys.stderr.isatty() if progress is None else progress


@dataclass
class _Passes:
    reports: list[FileReport]
    index_entries: int
    rejected: int
    triples: int | None = None
    facts_added: int | None = None


def _run_passes(job: _IndexJob, work_dir: Path, index_only: bool, show_progress: bool) -> _Passes:
    """Run the counting pass and, unless `index_only`, the store pass; fill
    in the duplicates of the triple files from what the store gained (per
    file when there is one triple file, else only in the total)."""
    triple_files = [(path, kind) for path, kind in job.files if kind != MENTIONS]
    input_bytes = sum(path.stat().st_size for path, _ in job.files)
    triple_bytes = sum(path.stat().st_size for path, _ in triple_files)
    in_child = not index_only and input_bytes >= PARALLEL_BYTES
    # The bar counts the bytes read by the passes of this process.
    shown = input_bytes if index_only else triple_bytes if in_child else triple_bytes + input_bytes
    with tqdm(total=shown, unit="B", unit_scale=True, disable=not show_progress, desc="coqa load") as bar:
        if index_only:
            passes = _Passes(*job.run(bar))
            for report in passes.reports:
                if report.kind != MENTIONS:
                    report.duplicates = None
            return passes
        child = _ChildJob(job) if in_child else None
        try:
            added, triples = _store_pass(triple_files, work_dir / STORE_SUBDIR, bar)
            bar.set_postfix_str("mention index")
            passes = _Passes(*(child.result() if child else job.run(bar)), triples=triples, facts_added=added)
        except BaseException:
            if child:
                child.kill()
            raise
    for report in passes.reports:
        if report.kind != MENTIONS:
            report.duplicates = report.loaded + report.repaired - added if len(triple_files) == 1 else None
    return passes


def _store_pass(files: list[tuple[Path, str]], store_path: Path, progress: tqdm) -> tuple[int, int]:
    """Bulk load the triple files into the store at `store_path`; return how
    many triples the store gained and its final size."""
    store = _open_store(store_path)
    before = len(store)
    sink = _BulkSink(store)
    try:
        for path, kind in files:
            _TripleFileLoader(path, kind, _NoRejects(), sink, None).run(progress)
    except BaseException:
        sink.abandon()
        raise
    sink.finish()
    stored = len(store)
    return stored - before, stored


def _write_manifest(work_dir: Path, store_dir: Path, report: LoadReport) -> None:
    """Record the load in the manifest, after the loads recorded before (append)."""
    manifest = read_manifest(work_dir) if work_dir == store_dir else {}
    loads = manifest.get("loads", [])
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
    path = work_dir / MANIFEST
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    temporary.replace(path)


def _move_into_place(work_dir: Path, store_dir: Path) -> None:
    """Replace the store pieces in `store_dir` by those built in `work_dir`."""
    retired = work_dir / "replaced"
    try:
        retired.mkdir()
        for piece in _store_pieces(store_dir):
            piece.rename(retired / piece.name)
        for piece in _store_pieces(work_dir):
            piece.rename(store_dir / piece.name)
    except OSError as error:
        raise KBError(f"cannot move the new store from {work_dir} into {store_dir}: {error}") from None
    shutil.rmtree(work_dir, ignore_errors=True)
