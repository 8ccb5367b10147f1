"""Running a real gStore (its start/stop scripts, as in gStore 1.2's prebuilt
tools folder) on 127.0.0.1 over an N-Triples file made by `coqa export`, for
tests and benchmarks. Bounded waits everywhere; the server is always stopped."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from coqa.kb.base import KBError
from coqa.kb.backends.gstore import GStore
from coqa.testing.local_process import free_port

START_TIMEOUT = 120.0
STOP_TIMEOUT = 20.0
_TRIPLE_NUM = re.compile(rb"TripleNum is (\d+)")


@dataclass
class GStoreServer:
    """A running server: its URL and database, the triples gbuild stored
    (`TripleNum` of its build log) and the lines its parser refused
    (`DB.db/parse_error.log`)."""

    url: str
    db: str
    nt_file: Path
    triples_built: int
    parse_errors: list[str]


def gstore_available(tools: Path) -> str | None:
    """None when a gStore can run from `tools`, else why not (for a skip message)."""
    if not (tools / "start-gstore.sh").is_file():
        return f"no gStore at {tools} (start-gstore.sh missing)"
    if os.uname().sysname != "Linux" or os.uname().machine != "x86_64":
        return "the prebuilt gStore runs on x86-64 Linux only"
    return None


@contextmanager
def serve_gstore(
    tools: Path,
    nt_file: Path,
    work: Path,
    db: str = "pkubase",
    conf: Mapping[str, str] | None = None,
    log_level: str | None = None,
) -> Iterator[GStoreServer]:
    """Build database `db` from `nt_file` in the work folder `work` and serve
    it on 127.0.0.1; yield the server once `check` answers; stop it after.
    `conf`: keys of gStore's conf.ini set to other values (e.g.
    {"querylog_mode": "0"}: no query log), KBError for a key it lacks;
    `log_level`: the level of its log4cplus log (shipped: TRACE, which
    writes every request, credentials included, to logs/debug.log)."""
    port = free_port()
    home = work / "gstore-home"
    log_path = work / "gstore.log"
    if conf or log_level:
        configure_gstore(tools, home, conf or {}, log_level)
    environment = {**os.environ, "GSTORE_HOME": str(home)}
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [str(tools / "start-gstore.sh"), db, str(nt_file), str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=environment,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for_check(url, db, process, log_path)
        # The log holds the system database's build first, then this one's.
        build_log = log_path.read_bytes().split(b"[start-gstore] building", 1)[-1]
        match = _TRIPLE_NUM.search(build_log)
        error_log = home / f"{db}.db" / "parse_error.log"
        errors = error_log.read_text(errors="replace").splitlines() if error_log.is_file() else []
        yield GStoreServer(url, db, nt_file, int(match.group(1)) if match else -1, [e for e in errors if "error" in e])
    finally:
        _stop(process)


def configure_gstore(tools: Path, home: Path, conf: Mapping[str, str], log_level: str | None = None) -> None:
    """Give the work folder `home` gStore's shipped configuration (as the
    start script would on first start) with the `conf` keys of conf.ini set
    and, given a `log_level`, its log4cplus root logger at that level."""
    if not (home / "init.conf").is_file():
        shutil.copytree(tools / "share" / "gstore", home, dirs_exist_ok=True)
    for key, value in conf.items():
        _set_value(home / "conf.ini", key, value)
    if log_level:
        for name in ("slog.properties", "slog.stdout.properties"):
            _set_value(home / name, "log4cplus.rootLogger", log_level)


def _set_value(path: Path, key: str, value: str) -> None:
    """Set `key` (`key=value[, more]`) in `path` to `value`, keeping what
    follows a comma (log4cplus's appenders); KBError when `path` lacks it."""
    text = path.read_text(encoding="utf-8")
    text, count = re.subn(rf"(?m)^({re.escape(key)}\s*=\s*)[^,\n]*", lambda match: match.group(1) + value, text)
    if not count:
        raise KBError(f"gStore's {path.name} has no setting {key!r}")
    path.write_text(text, encoding="utf-8")


def _wait_for_check(url: str, db: str, process: subprocess.Popen, log_path: Path) -> None:
    probe = GStore(url, db, timeout=2, retries=0, backoff=0)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                lines = log_path.read_text(errors="replace").strip().splitlines()
                raise KBError(f"gStore exited with {process.returncode}: {lines[-1] if lines else 'no output'}")
            try:
                probe.check()
                return
            except KBError:
                time.sleep(0.2)
        raise KBError(f"gStore did not answer `check` within {START_TIMEOUT:g} s (log: {log_path})")
    finally:
        probe.close()


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the start script (it shuts ghttp down), then the whole group if need be."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
