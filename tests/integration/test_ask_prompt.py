"""`coqa ask` at a terminal: earlier questions come back with the up arrow
(readline history), and Ctrl-C ends the session quietly."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

from coqa.testing.local_process import clean_environment

DEADLINE = 120.0


def _own_terminal() -> None:
    """In the child: a session of its own whose controlling terminal is the
    pty on its stdin, so that Ctrl-C typed there is a SIGINT, and that signal's
    default action, as a shell gives a foreground job (a test run started in
    the background of a non-interactive shell ignores SIGINT, and a child
    would inherit that)."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _read_until(fd: int, wanted: bytes, seen: bytearray, times: int = 1) -> None:
    """Read the terminal's output into `seen` until it holds `wanted` `times` times (bounded in time)."""
    ends = time.monotonic() + DEADLINE
    while seen.count(wanted) < times:
        assert time.monotonic() < ends, f"no {wanted!r} in {bytes(seen)!r}"
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                seen.extend(os.read(fd, 4096))
            except OSError:
                return


def _wait_for_raw_mode(fd: int) -> None:
    """Wait until readline has put the terminal in non-canonical mode: keys typed
    before that (an arrow's escape sequence) would be read as a line of text."""
    ends = time.monotonic() + DEADLINE
    while termios.tcgetattr(fd)[3] & termios.ICANON:
        assert time.monotonic() < ends, "readline never took the terminal"
        time.sleep(0.05)


def test_history_recalls_a_question_and_ctrl_c_ends_quietly(demo_store: str, demo_model: Path, tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "coqa.cli.main", "ask", "--store", demo_store, "--model", str(demo_model)]
    environment = clean_environment(COQA_CACHE_DIR=str(tmp_path / "cache"), TERM="xterm")
    process = subprocess.Popen(
        command, stdin=terminal, stdout=terminal, stderr=terminal, env=environment, close_fds=True, preexec_fn=_own_terminal
    )
    os.close(terminal)
    seen = bytearray()
    try:
        _read_until(controller, b"question> ", seen)
        os.write(controller, "周星驰的身高是多少？\r".encode("utf-8"))
        _read_until(controller, b"confidence:", seen)
        _read_until(controller, b"question> ", seen, times=2)
        _wait_for_raw_mode(controller)
        os.write(controller, b"\x1b[A\r")  # up arrow: the question again
        _read_until(controller, b"confidence:", seen, times=2)
        _read_until(controller, b"question> ", seen, times=3)
        _wait_for_raw_mode(controller)
        # Idle at the prompt, as a person is: a SIGINT that lands in the instant between
        # readline taking the terminal and waiting for a key is only seen at the next key.
        time.sleep(0.5)
        os.write(controller, b"\x03")  # Ctrl-C at the prompt
        assert process.wait(timeout=DEADLINE) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    text = bytes(seen).decode("utf-8", errors="replace")
    assert text.count('"174cm"') >= 2 and "Traceback" not in text and "error" not in text
    assert "周星驰的身高是多少？" in (tmp_path / "cache" / "ask_history").read_text(encoding="utf-8")
