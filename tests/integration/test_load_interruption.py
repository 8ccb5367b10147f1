"""A load is all or nothing, whatever ends it (issue 11 #6, #14).

`coqa load` runs in a subprocess (its mention index in a second process, as
for large inputs) and is sent SIGINT or SIGKILL at several points: while it
sets up, while the store is being bulk loaded, once the index is saved
(and, in this process, while it commits). The
store directory must then hold either exactly what it held before or exactly
what an uninterrupted load gives (store, index, manifest and rejects file
together); a load reports "interrupted" only when nothing was committed; the
index process ends with its parent; and the next load removes (or completes)
what an interrupted one left."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

import coqa.kb.loading.loader as loader_module
from coqa.kb import INDEX_SUBDIR, STORE_SUBDIR
from coqa.kb.loading.loader import load_kb
from coqa.kb.loading.manifest import read_manifest
from coqa.kb.loading.rejects import REJECTS_FILE
from coqa.kb.loading.store_dir import WORK_PREFIX
from coqa.kb.mention_index import MentionIndex

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads child processes from /proc")

RUNNER = """
import json, sys
import coqa.kb.loading.loader as loader
loader.PARALLEL_BYTES = 0  # the mention index in a second process, as for large inputs
try:
    report = loader.load_kb([sys.argv[1]], sys.argv[2], mode=sys.argv[3], progress=False)
    # Inside the try: a SIGINT that lands once the load is done must not end the runner by an uncaught KeyboardInterrupt.
    print(json.dumps(report.notes), flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""
# Where to interrupt: a path inside the load's work folder whose appearance marks the point.
POINTS = {"setup": "", "store pass": STORE_SUBDIR, "index saved": f"{INDEX_SUBDIR}/mentions.marisa"}
DEADLINE = 60.0


def _write_kb(directory: Path, seed: int, facts: int) -> Path:
    """PKU BASE files with regular, repaired and rejected lines (seeded)."""
    rng = random.Random(seed)
    directory.mkdir(parents=True)
    lines = []
    for i in range(facts):
        subject = f"实体{seed}_{rng.randrange(facts)}"
        lines.append(f"<{subject}>\t<属性{rng.randrange(50)}>\t\"值{i}\" .\n")
        if i % 997 == 0:
            lines.append(f"<{subject}>\t<坏行>\n")
    (directory / "pkubase-triples.txt").write_text("".join(lines), encoding="utf-8")
    mentions = "".join(f"提及{seed}_{i}\t实体{seed}_{i}\t{1 + i % 5}\n" for i in range(facts // 2))
    (directory / "pkubase-mention2ent.txt").write_text(mentions, encoding="utf-8")
    return directory


def state(store: Path) -> tuple:
    """What a store directory holds, as far as a load changes it."""
    manifest = read_manifest(store)
    triples = len(ox.Store.read_only(str(store / STORE_SUBDIR))) if (store / STORE_SUBDIR).exists() else None
    index = len(MentionIndex.open(store / INDEX_SUBDIR)) if (store / INDEX_SUBDIR).exists() else None
    rejects = (store / REJECTS_FILE).read_bytes() if (store / REJECTS_FILE).exists() else None
    return len(manifest.get("loads", [])), manifest.get("triples"), manifest.get("index_entries"), triples, index, rejects


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """For each mode: the store before the load, the source, and the state an
    uninterrupted load leaves."""
    root = tmp_path_factory.mktemp("interruption")
    source = _write_kb(root / "source", seed=1, facts=60_000)
    base = root / "base"
    load_kb([_write_kb(root / "base-source", seed=2, facts=2_000)], base)
    scenes = {}
    for mode, before in (("new", None), ("append", base)):
        reference = root / f"reference-{mode}"
        if before is not None:
            shutil.copytree(before, reference)
        load_kb([source], reference, mode=mode)
        scenes[mode] = (before, source, state(reference))
    return scenes


def _children(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for_point(store: Path, point: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + DEADLINE
    while process.poll() is None and time.monotonic() < deadline:
        if any((work / POINTS[point]).exists() for work in store.glob(WORK_PREFIX + "*")):
            return
        time.sleep(0.002)


@pytest.mark.parametrize("point", list(POINTS))
@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
@pytest.mark.parametrize("mode", ["new", "append"])
def test_an_interrupted_load_is_all_or_nothing(tmp_path: Path, scenes: dict, mode: str, signal_number: int, point: str) -> None:
    before_store, source, after = scenes[mode]
    store = tmp_path / "store"
    if before_store is not None:
        shutil.copytree(before_store, store)
    before = state(store)
    process = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(source), str(store), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    _wait_for_point(store, point, process)
    children = _children(process.pid)
    if process.poll() is None:  # else it ended before the point was seen
        os.kill(process.pid, signal_number)
    out, err = process.communicate(timeout=DEADLINE)
    deadline = time.monotonic() + 10
    while any(map(_alive, children)) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(map(_alive, children)), "the mention index process outlived its parent"

    now = state(store)
    assert now in (before, after), "the store holds part of a load"
    if signal_number == signal.SIGINT:
        assert process.returncode in (0, 130), err
        assert (out.strip() == "interrupted") == (now == before), (out, err)
        assert not list(store.glob(WORK_PREFIX + "*"))

    # The next load finds what an interrupted one left, reports it and leaves nothing behind.
    left = list(store.glob(WORK_PREFIX + "*"))
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    (tiny / "pkubase-triples.txt").write_text("<小>\t<是>\t<一> .\n", encoding="utf-8")
    report = load_kb([tiny], store, mode="replace" if now == before and mode == "new" else "append")
    assert len(report.notes) == len(left)
    assert not list(store.glob(WORK_PREFIX + "*"))


def test_a_commit_cut_short_is_completed_by_the_next_load(tmp_path: Path, scenes: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash between the renames of a commit (too short a window to hit
    with a signal from outside; here the process stops after two renames):
    the work folder holds commit.json and some pieces already moved. The next
    load completes the commit before it starts."""
    before_store, source, after = scenes["append"]
    store = tmp_path / "store"
    shutil.copytree(before_store, store)
    renamed: list[str] = []
    rename = Path.rename

    def rename_then_stop(self: Path, target: Path) -> Path:
        if len(renamed) == 2:
            raise SystemExit("stopped in the middle of the commit")
        renamed.append(self.name)
        return rename(self, target)

    monkeypatch.setattr(Path, "rename", rename_then_stop)
    with pytest.raises(SystemExit):
        load_kb([source], store, mode="append")
    monkeypatch.undo()
    assert renamed == [STORE_SUBDIR, STORE_SUBDIR] and list(store.glob(WORK_PREFIX + "*"))
    assert state(store) not in (state(before_store), after)  # half committed
    report = load_kb([source], store, mode="append")
    assert any("completed the load" in note for note in report.notes)
    assert not list(store.glob(WORK_PREFIX + "*"))
    manifest = read_manifest(store)
    assert len(manifest["loads"]) == after[0] + 1
    assert manifest["triples"] == after[1] == len(ox.Store.read_only(str(store / STORE_SUBDIR)))
    assert manifest["index_entries"] == after[2] == len(MentionIndex.open(store / INDEX_SUBDIR))


def test_ctrl_c_while_committing_ends_committed_and_says_so(tmp_path: Path, scenes: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 11 #6: a SIGINT that came when an append had in fact completed
    reported "interrupted" and left the manifest stale. A SIGINT during the
    commit now lets it finish, and the report says what happened."""
    before_store, source, after = scenes["append"]
    store = tmp_path / "store"
    shutil.copytree(before_store, store)
    commit = loader_module.commit

    def interrupted_commit(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # a real Ctrl-C, delivered now
        time.sleep(0.05)
        commit(*args)

    monkeypatch.setattr(loader_module, "commit", interrupted_commit)
    report = load_kb([source], store, mode="append")
    assert report.notes == ["interrupted after the load was complete: the store holds all of it"]
    assert state(store) == after
