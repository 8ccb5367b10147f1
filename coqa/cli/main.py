"""Entry point of the `coqa` console script."""

from __future__ import annotations

import argparse
import sys

from coqa.cli import answer_commands, eval_commands, kb_commands, serve_command, sparql_command
from coqa.cli.common import fail
from coqa.config import ConfigError
from coqa.dataset import DatasetError
from coqa.kb.base import KBError
from coqa.model import ModelError
from coqa.ner import NERUnavailable

# Errors that mean "the user must change something": one line, no traceback.
USER_ERRORS = (ConfigError, DatasetError, KBError, ModelError, NERUnavailable)

DESCRIPTION = """Answer Chinese questions over PKU BASE (CCKS COQA / CKBQA).

Quick start (the shipped demo knowledge base, no configuration):
  coqa ask '...'                          one question, with the explanation
  coqa answer questions.txt -o result.txt a question file, official format

With PKU BASE (or the pkubase-bench slice):
  coqa load KB_DIR --store STORE          load triples, types, mention2ent
  coqa train train.txt --store STORE -o MODEL
  coqa eval dev.txt --store STORE --model MODEL
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="coqa", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", metavar="FILE", help="YAML settings file (see config.yaml); also $COQA_CONFIG")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (answer_commands, kb_commands, sparql_command, eval_commands, serve_command):
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return 2
    try:
        return int(args.run(args) or 0)
    except USER_ERRORS as error:
        return fail(str(error))
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
