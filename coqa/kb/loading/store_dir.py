"""The store directory: its pieces, which load modes fit it, one writer at a
time, and putting a newly built store in place all at once.

A load builds the whole new state of the store (the pyoxigraph store, the
mention index, the manifest, the rejects) in a work folder
`STORE/.loading-*` and then commits it: it writes `commit.json` into the
work folder and moves the pieces into place by renames. Until `commit.json`
exists the live store is untouched; once it exists the commit is completed
by whoever finds it (the same load, or the next one after a crash). So a
load is all or nothing whatever ends it, and the next load on the directory
finds the work folders of interrupted loads, finishes the committed ones and
removes the others.

One writer at a time: a load holds an exclusive lock (flock) on
`STORE/.coqa-load.lock`; the kernel releases it when the process ends,
however it ends, so a killed load never leaves the store locked.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyoxigraph as ox

from coqa.kb import INDEX_SUBDIR, MANIFEST, STORE_SUBDIR
from coqa.kb.base import KBError
from coqa.kb.mention_segments import is_index_file
from coqa.kb.loading.rejects import REJECTS_FILE

MODES = ("new", "replace", "append")
PIECES = (STORE_SUBDIR, INDEX_SUBDIR, MANIFEST)
LOCK_FILE = ".coqa-load.lock"
WORK_PREFIX = ".loading-"
COMMIT_MARKER = "commit.json"
_RETIRED = "replaced"


def store_pieces(store_dir: Path) -> list[Path]:
    """The parts of a coqa store present in `store_dir`."""
    return [store_dir / name for name in PIECES if (store_dir / name).exists()]


@contextmanager
def writer_lock(store_dir: Path) -> Iterator[None]:
    """Hold the write lock of `store_dir` (created if needed) while inside;
    KBError at once when another load holds it."""
    import fcntl  # POSIX; imported here so that reading stores works everywhere

    if store_dir.exists() and not store_dir.is_dir():
        raise KBError(f"{store_dir} is a file, not a store directory")
    try:
        store_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(store_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise KBError(f"cannot create {store_dir}: {error.strerror}") from None
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise KBError(f"another coqa load is writing to {store_dir}: wait until it ends, then load again") from None
        yield
    finally:
        os.close(descriptor)  # releases the lock


def check_mode(store_dir: Path, mode: str, index_only: bool) -> bool:
    """Whether the load appends to an existing store; KBError when the mode
    does not fit what is in `store_dir`, or when a piece's name is taken by
    something coqa did not write (a load never deletes that). `mode` is one
    of MODES."""
    for piece in store_pieces(store_dir):
        if not _written_by_coqa(piece):
            raise KBError(
                f"{piece} is not part of a coqa store, and a load would replace it: move it away or load into another directory"
            )
    if not store_pieces(store_dir):
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


def _written_by_coqa(piece: Path) -> bool:
    """Whether a store piece looks as coqa writes it: a pyoxigraph (RocksDB)
    directory, a directory holding only the mention index, a coqa manifest."""
    if piece.name == STORE_SUBDIR:
        return piece.is_dir() and (piece / "CURRENT").is_file()
    if piece.name == INDEX_SUBDIR:
        return piece.is_dir() and all(is_index_file(entry.name) for entry in piece.iterdir())
    try:
        return "coqa_store" in json.loads(piece.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def new_work_dir(store_dir: Path) -> Path:
    """A fresh work folder for a load inside `store_dir` (so that committing
    is renaming)."""
    try:
        return Path(tempfile.mkdtemp(prefix=WORK_PREFIX, dir=store_dir))
    except OSError as error:
        raise KBError(f"cannot create a work folder in {store_dir}: {error.strerror}") from None


def copy_store(store_dir: Path, work_dir: Path) -> None:
    """Start the work folder of an append from the live pyoxigraph store: a
    RocksDB checkpoint (hard links to its immutable files: quick and small),
    which the load then adds to while the live store stays as it was."""
    try:
        live = ox.Store(str(store_dir / STORE_SUBDIR))
        live.backup(str(work_dir / STORE_SUBDIR))
    except OSError as error:
        raise KBError(f"cannot open the store at {store_dir / STORE_SUBDIR} for writing (is it in use?): {error}") from None
    del live


def recover_interrupted_loads(store_dir: Path) -> list[str]:
    """Deal with the work folders left by loads that did not end normally
    (killed, power cut): finish committing those that had begun to, remove
    the others. Call it holding the write lock (then no load is using them).
    Returns one line per folder saying what was done."""
    notes = []
    for work_dir in sorted(store_dir.glob(WORK_PREFIX + "*")):
        if not work_dir.is_dir():
            continue
        if (work_dir / COMMIT_MARKER).is_file():
            _finish_commit(work_dir, store_dir)
            notes.append(f"completed the load that was interrupted while it was put in place ({work_dir.name})")
        else:
            notes.append(f"removed {work_dir.name} ({_megabytes(work_dir)} MB), left by an interrupted load")
        shutil.rmtree(work_dir, ignore_errors=True)
        if work_dir.exists():
            notes[-1] = f"could not remove {work_dir}, left by an interrupted load: remove it by hand"
    return notes


def _megabytes(directory: Path) -> int:
    return round(sum(path.stat().st_size for path in directory.rglob("*") if path.is_file()) / 1e6)


def commit(work_dir: Path, store_dir: Path, rejects_target: Path) -> None:
    """Make the pieces built in `work_dir` the store in `store_dir`, all of
    them or (when a crash stops it) none until the next load completes it.
    The rejects file of the load (`work_dir/rejects.tsv`, if any) replaces
    `rejects_target`; a load without rejects removes an old one."""
    marker = {
        "pieces": [piece.name for piece in store_pieces(work_dir)],
        "rejects_target": str(rejects_target),
        "rejects": (work_dir / REJECTS_FILE).is_file(),
    }
    try:
        temporary = work_dir / (COMMIT_MARKER + ".tmp")
        temporary.write_text(json.dumps(marker), encoding="utf-8")
        temporary.replace(work_dir / COMMIT_MARKER)
        _finish_commit(work_dir, store_dir)
    except OSError as error:
        raise KBError(
            f"cannot put the new store in place in {store_dir}: {error}; the next coqa load there completes or removes it"
        ) from None
    shutil.rmtree(work_dir, ignore_errors=True)


def _finish_commit(work_dir: Path, store_dir: Path) -> None:
    """Carry out the commit recorded in `work_dir`; each step can be redone,
    so a commit stopped anywhere is completed by running this again."""
    marker = json.loads((work_dir / COMMIT_MARKER).read_text(encoding="utf-8"))
    retired = work_dir / _RETIRED
    retired.mkdir(exist_ok=True)
    for name in PIECES:
        live, built = store_dir / name, work_dir / name
        if name in marker["pieces"] and not built.exists():
            continue  # already in place
        if live.exists():
            live.rename(retired / name)
        if name in marker["pieces"]:
            built.rename(live)
    target, rejects = Path(marker["rejects_target"]), work_dir / REJECTS_FILE
    if not marker["rejects"]:
        target.unlink(missing_ok=True)
    elif rejects.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(rejects), str(target))
