"""The store directory: its pieces, which load modes fit it, and putting a
newly built store in place."""

from __future__ import annotations

import shutil
from pathlib import Path

from coqa.kb import INDEX_SUBDIR, MANIFEST, STORE_SUBDIR
from coqa.kb.base import KBError

MODES = ("new", "replace", "append")


def store_pieces(store_dir: Path) -> list[Path]:
    """The parts of a coqa store present in `store_dir`."""
    names = (STORE_SUBDIR, INDEX_SUBDIR, MANIFEST)
    return [store_dir / name for name in names if (store_dir / name).exists()]


def check_mode(store_dir: Path, mode: str, index_only: bool) -> bool:
    """Whether the load appends to an existing store; KBError when the mode
    does not fit what is in `store_dir`."""
    if mode not in MODES:
        raise KBError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    if store_dir.exists() and not store_dir.is_dir():
        raise KBError(f"{store_dir} is a file, not a store directory")
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


def move_into_place(work_dir: Path, store_dir: Path) -> None:
    """Replace the store pieces in `store_dir` by those built in `work_dir`."""
    retired = work_dir / "replaced"
    try:
        retired.mkdir()
        for piece in store_pieces(store_dir):
            piece.rename(retired / piece.name)
        for piece in store_pieces(work_dir):
            piece.rename(store_dir / piece.name)
    except OSError as error:
        raise KBError(f"cannot move the new store from {work_dir} into {store_dir}: {error}") from None
    shutil.rmtree(work_dir, ignore_errors=True)
