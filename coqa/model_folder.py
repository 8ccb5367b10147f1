"""A model folder, the one format of every trained model (KBQA: coqa.model;
DBQA: coqa.dbqa.model): `meta.json` and the parts, written beside the target
and moved in when complete, each part's SHA-256 recorded in meta.json and
checked before a native library reads a byte of it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any, Callable, Mapping

META_FILE = "meta.json"


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, hex."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_model_folder(
    path: Path, write_parts: Callable[[Path], list[str]], meta: Callable[[dict[str, str]], dict[str, Any]], error: type[Exception]
) -> None:
    """Write a model folder at `path`: `write_parts(folder)` writes the parts
    and returns their names, `meta(digests)` gives meta.json's content from
    each part's SHA-256. Written aside first; an existing folder at `path` is
    replaced only when it is a model folder (else `error`)."""
    if path.exists() and not (path / META_FILE).is_file():
        raise error(f"{path} exists and is not a coqa model directory: choose another output path")
    staging = path.with_name(path.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    digests = {name: file_digest(staging / name) for name in write_parts(staging)}
    text = json.dumps(meta(digests), ensure_ascii=False, indent=1, sort_keys=True)
    (staging / META_FILE).write_text(text + "\n", encoding="utf-8")
    if path.exists():
        shutil.rmtree(path)
    staging.rename(path)


def read_meta_file(path: Path, error: type[Exception], retrain: str) -> dict[str, Any]:
    """The meta.json of a model folder as a mapping; `error` (one line ending
    in `retrain`) when the folder or its meta.json is missing or not JSON."""
    if not path.is_dir():
        raise error(f"{path} is not a coqa model directory; {retrain}")
    try:
        meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
    except OSError:
        raise error(f"{path} has no {META_FILE}: it is not a coqa model directory; {retrain}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{path / META_FILE} is not valid JSON ({exc}); {retrain}") from None
    if not isinstance(meta, dict):
        raise error(f"{path / META_FILE} is not a JSON object; {retrain}")
    return meta


def check_part_digests(path: Path, digests: Any, error: type[Exception], retrain: str) -> None:
    """`error` (one line naming the file) unless every part in `digests` (name
    -> SHA-256, as meta.json records it) is there with that digest and the
    folder holds no other file (a stray one would be read as part of the model)."""
    if not isinstance(digests, Mapping) or not digests:
        raise error(f"{path / META_FILE} records no checksums of the model's parts; {retrain}")
    for name, recorded in sorted(digests.items()):
        part = path / str(name)
        if Path(str(name)).name != name or not part.is_file():
            raise error(f"{part}: a part of the model listed in {META_FILE} is missing; {retrain}")
        if file_digest(part) != recorded:
            raise error(f"{part} is damaged or not this model's part (its SHA-256 differs from {META_FILE}); {retrain}")
    for stray in sorted(p.name for p in path.iterdir() if p.name != META_FILE and p.name not in digests):
        raise error(f"{path / stray} is not a part of the model ({META_FILE} does not list it): remove it or {retrain}")
