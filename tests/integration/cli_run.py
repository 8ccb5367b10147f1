"""Running the `coqa` command line in a child process, as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def clean_environment(**extra: str) -> dict[str, str]:
    """The environment of a CLI run: no COQA_* of the caller, plus `extra`."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("COQA_")}
    environment.update(extra)
    return environment


def run_coqa(arguments: list[str], timeout: float = 300, **environment: str) -> subprocess.CompletedProcess[str]:
    """`coqa ARGUMENTS` in a child process (text output captured)."""
    command = [sys.executable, "-m", "coqa.cli.main", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=clean_environment(**environment))


def worker_pids(parent: int) -> list[int]:
    """The spawned worker processes of `parent` (not its resource tracker), from
    /proc; a process that ends while /proc is read is skipped."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"spawn_main" in command:
            pids.append(int(entry.name))
    return pids
