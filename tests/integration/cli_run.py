"""Running the `coqa` command line in a child process, as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from coqa.testing.local_process import clean_environment

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


def run_coqa(arguments: list[str], timeout: float = 300, **environment: str) -> subprocess.CompletedProcess[str]:
    """`coqa ARGUMENTS` in a child process (text output captured)."""
    command = [sys.executable, "-m", "coqa.cli.main", *arguments]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=clean_environment(**environment))
