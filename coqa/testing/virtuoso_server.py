"""Running a real Virtuoso (Debian's virtuoso-opensource, through a start
script such as ../shared/tools/virtuoso/start-virtuoso.sh) on 127.0.0.1 over
the N-Triples files of a folder made by `coqa export --to ntriples`, for tests
and benchmarks. Bounded waits; the server is always stopped."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

from coqa.kb.base import KBError
from coqa.testing.local_process import free_port

GRAPH = "http://pkubase.org/graph"
DATABASE_SUBDIR = "virtuoso-db"  # the folder of `work` serve_virtuoso runs Virtuoso in
START_TIMEOUT = 180.0
STOP_TIMEOUT = 20.0


def virtuoso_available(script: Path) -> str | None:
    """None when Virtuoso can run with `script`, else why not (for a skip message)."""
    if not script.is_file():
        return f"no start script at {script}"
    if shutil.which("virtuoso-t") is None or shutil.which("isql-vt") is None:
        return "virtuoso-t / isql-vt are not installed (apt-get install virtuoso-opensource)"
    return None


@contextmanager
def serve_virtuoso(script: Path, load_dir: Path, work: Path, sparql_settings: Mapping[str, str] | None = None) -> Iterator[str]:
    """Start Virtuoso in `work`, load every *.nt of `load_dir` into GRAPH (the
    graph every query sees), and yield its SPARQL endpoint URL; stop it after.
    `sparql_settings`: items of its virtuoso.ini's [SPARQL] section to set
    once it runs (`set_sparql_settings`)."""
    isql_port, http_port = free_port(), free_port()
    environment = {
        **os.environ,
        "VT_LOAD_DIR": str(load_dir.resolve()),
        "VT_GRAPH": GRAPH,
        "VT_DEFAULT_GRAPH": GRAPH,
        "VT_START_TIMEOUT": str(int(START_TIMEOUT)),
    }
    database = work / DATABASE_SUBDIR
    try:
        started = subprocess.run(
            [str(script), str(database), str(isql_port), str(http_port)],
            capture_output=True,
            text=True,
            env=environment,
            timeout=START_TIMEOUT + 600,  # the script bounds its own start and load
        )
    except subprocess.TimeoutExpired:
        _stop_pid_file(database)
        raise KBError("Virtuoso did not start and load in time") from None
    if started.returncode != 0:
        _stop_pid_file(database)
        lines = (started.stderr or started.stdout).strip().splitlines()
        raise KBError(f"Virtuoso did not start: {lines[-1] if lines else 'no output'}")
    try:
        set_sparql_settings(database, sparql_settings or {})
        yield f"http://127.0.0.1:{http_port}/sparql"
    finally:
        _stop_pid_file(database)


def set_sparql_settings(database: Path, settings: Mapping[str, str]) -> None:
    """Set items of the [SPARQL] section of the virtuoso.ini in `database` (the
    folder the start script made), adding those it lacks. Virtuoso 7.2.5's
    /sparql handler reads that section from the file for every request (a
    change is seen by the next query: tests/integration/test_virtuoso_settings.py),
    so a running server needs no restart. The lines are edited by hand, as
    configparser refuses the packaged file (it repeats keys) and would drop its
    comments."""
    if not settings:
        return
    path = database / "virtuoso.ini"
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines.index("[SPARQL]")
    end = next((i for i in range(header + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    missing = dict(settings)
    for index in range(header + 1, end):
        key = lines[index].split("=", 1)[0].strip()
        if "=" in lines[index] and key in missing:
            lines[index] = f"{key} = {missing.pop(key)}"
    lines[header + 1 : header + 1] = [f"{key} = {value}" for key, value in missing.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _stop_pid_file(database: Path) -> None:
    """SIGTERM to the server the script started (its PID is in virtuoso.pid); wait for it to go."""
    pid_file = database / "virtuoso.pid"
    if not pid_file.is_file():
        return
    pid = int(pid_file.read_text().strip())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)  # not our child (the script detached it): poll whether it is gone
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
