"""Entry point of the `coqa` console script.

`coqa --help`, `coqa CMD --help` and the light commands (score, compare) must
start fast, so the command modules import the model stack (scikit-learn,
numpy, pyoxigraph) only inside the functions that run a command.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from typing import Any

from coqa import __version__
from coqa.cli import answer_commands, eval_commands, export_command, kb_commands, serve_command, sparql_command
from coqa.cli.common import fail, is_utf8_text

# Errors that mean "the user must change something": one line, no traceback.
# Named by module so that catching them imports nothing: an error class whose
# module was never imported cannot have been raised.
USER_ERRORS = (
    ("coqa.batch", "WorkerDied"),
    ("coqa.config", "ConfigError"),
    ("coqa.dataset", "DatasetError"),
    ("coqa.kb.base", "KBError"),
    ("coqa.model", "ModelError"),
    ("coqa.templates", "TemplateError"),
    ("coqa.mentions.ner", "NERUnavailable"),
)

DESCRIPTION = """Answer Chinese questions over PKU BASE (CCKS COQA / CKBQA).

Quick start (the shipped demo knowledge base, no configuration):
  coqa ask '...'                          one question, with the explanation
  coqa answer questions.txt -o result.txt a question file, official format

With PKU BASE (or the pkubase-bench slice):
  coqa load KB_DIR --store STORE          load triples, types, mention2ent
  coqa train train.txt --store STORE -o MODEL
  coqa eval dev.txt --store STORE --model MODEL

`coqa COMMAND --help` shows a command's options and examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coqa", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"coqa {__version__}")
    parser.add_argument("--config", metavar="FILE", help="YAML settings file (see config.yaml); also $COQA_CONFIG")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (answer_commands, kb_commands, export_command, sparql_command, eval_commands, serve_command):
        module.register(commands)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    return tuple(getattr(sys.modules[module], name) for module, name in USER_ERRORS if module in sys.modules)


def undecodable_argument(argv: list[str]) -> str | None:
    """A one-line error for the first argument that is not UTF-8 text (the
    shell passed bytes in another encoding, e.g. GBK), else None."""
    for position, argument in enumerate(argv, start=1):
        if not is_utf8_text(argument):
            raw = os.fsencode(argument)
            shown = raw[:24].hex(" ") + (" ..." if len(raw) > 24 else "")
            return (
                f"argument {position} is not UTF-8 text (bytes {shown}): give arguments in UTF-8, "
                "e.g. convert a GBK file with `iconv -f GBK -t UTF-8`"
            )
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    problem = undecodable_argument(argv)
    if problem:
        return fail(problem, 2)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    previous = _stop_on_signals()
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except Stopped as stop:
        return fail(f"stopped by {signal.Signals(stop.signum).name}", 128 + stop.signum)
    except BrokenPipeError:
        return 0
    except Exception as error:
        if isinstance(error, _user_errors()):
            return fail(str(error))
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class Stopped(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the command like Ctrl-C does, so
    that what it was writing (a `.part` file) is removed on the way out.
    A BaseException, so that no `except Exception` of a stage catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: object) -> None:
    raise Stopped(signum)


def _stop_on_signals() -> dict[int, Any]:
    """Turn SIGTERM and SIGHUP into `Stopped` (in the main thread only, where
    Python runs signal handlers); the handlers they replaced, to restore."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, _raise_stopped) for signum in (signal.SIGTERM, signal.SIGHUP)}


if __name__ == "__main__":
    sys.exit(main())
