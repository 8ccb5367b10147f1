"""The shipped demo knowledge base, loaded into the cache on first use.

coqa/demo/ holds a small knowledge base in PKU BASE's own file formats
(facts written for coqa) and demo questions. With no store configured, coqa
answers against it: `ensure_demo_store` loads it once into
CACHE_DIR/demo-<hash of the files> and returns that directory afterwards. A
change to the demo files yields a new hash, hence a fresh store.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from coqa.kb import MANIFEST
from coqa.kb.base import KBError
from coqa.kb.loading.loader import load_kb
from coqa.resources import DEMO_DIR

DEMO_KB_FILES = ("pkubase-triples.txt", "pkubase-types.txt", "pkubase-mention2ent.txt")
DEMO_QUESTIONS = DEMO_DIR / "questions.txt"
DEMO_CCKS = DEMO_DIR / "questions.ccks.txt"


def demo_fingerprint() -> str:
    """A short hash of the demo KB files (names and contents)."""
    digest = hashlib.sha256()
    for name in DEMO_KB_FILES:
        digest.update(name.encode("utf-8") + b"\0")
        digest.update((DEMO_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


def ensure_demo_store(cache_dir: Path) -> Path:
    """The store directory of the demo KB under `cache_dir`, loaded on first use.

    The load goes to a private temporary directory that is renamed into place
    when complete, so concurrent first uses do not corrupt each other: the
    first rename wins and the others discard their copy.
    """
    cache_dir = Path(cache_dir).expanduser()
    target = cache_dir / f"demo-{demo_fingerprint()}"
    if (target / MANIFEST).is_file():
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".demo-loading-", dir=cache_dir))
    except OSError as error:
        raise KBError(f"cannot create the demo store in {cache_dir}: {error.strerror}") from None
    try:
        report = load_kb([DEMO_DIR / name for name in DEMO_KB_FILES], work / "store", progress=False)
        if report.total.rejected:
            raise KBError(f"the demo knowledge base has rejected lines: {dict(report.total.rejects)}")
        try:
            (work / "store").rename(target)
        except OSError as error:
            if not (target / MANIFEST).is_file():
                raise KBError(f"cannot create the demo store {target}: {error.strerror}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
