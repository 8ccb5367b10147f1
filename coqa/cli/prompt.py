"""The question prompt of `coqa ask`: line editing and a history kept across
sessions (GNU readline, through the standard library, where Python has it),
`exit`, `quit`, Ctrl-D or Ctrl-C to end."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Iterator

from coqa.cli.common import is_utf8_text

HISTORY_LINES = 1000


def questions_at_prompt(history: Path | None) -> Iterator[str]:
    """The questions typed at a `question> ` prompt, until exit, quit, end of
    input or Ctrl-C (which end it quietly). With readline, the arrow keys edit
    and recall lines, and `history` (when given) keeps them across sessions."""
    readline = _readline(history)
    try:
        while True:
            try:
                line = input("question> ")
            except (EOFError, KeyboardInterrupt):
                print()
                return
            if not is_utf8_text(line):
                print("coqa: error: that line is not UTF-8 text; type the question in UTF-8", file=sys.stderr)
                continue
            if line.strip() in ("exit", "quit"):
                return
            if line.strip():
                yield line
    finally:
        if readline is not None and history is not None:
            try:
                history.parent.mkdir(parents=True, exist_ok=True)
                readline.write_history_file(str(history))
            except OSError:
                pass  # a history that cannot be kept is no reason to fail the session


def _readline(history: Path | None):  # type: ignore[no-untyped-def]
    """The readline module set up with `history`, or None where Python has none."""
    if not sys.stdin.isatty():
        return None
    try:
        import readline
    except ImportError:
        return None
    readline.set_history_length(HISTORY_LINES)
    if history is not None and history.is_file():
        try:
            readline.read_history_file(str(history))
        except OSError:
            pass
    return readline
