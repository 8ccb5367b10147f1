"""Options and helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import logging
import sys

from coqa.config import Settings, load_settings
from coqa.kb import uses_demo_kb

DEMO_NOTICE = (
    "coqa: note: no knowledge base given (--store, --endpoint, --gstore or a config file): "
    "using the shipped demo knowledge base (a few hundred facts written for coqa, not PKU BASE)"
)


def add_kb_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose a knowledge base (and the config file)."""
    group = parser.add_argument_group("knowledge base (default: config, else the shipped demo KB)")
    group.add_argument("--store", metavar="DIR", help="embedded oxigraph store directory made by `coqa load`")
    group.add_argument("--endpoint", metavar="URL", help="SPARQL 1.1 query endpoint, e.g. http://127.0.0.1:7878/query")
    group.add_argument("--gstore", metavar="URL", help="gStore ghttp server, e.g. http://127.0.0.1:9000 (with --db)")
    group.add_argument("--db", metavar="NAME", help="gStore database name")
    group.add_argument("--mention-index", metavar="DIR", help="mention index directory (default: STORE/mentions)")
    # SUPPRESS: an unset subcommand option must not hide `coqa --config FILE COMMAND`.
    group.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS, help="YAML settings file (see config.yaml)")


def add_min_confidence_option(parser: argparse.ArgumentParser) -> None:
    """`--min-confidence X`: leave out answers less likely right than X."""
    parser.add_argument(
        "--min-confidence", type=float, metavar="X",
        help="leave the answer empty when its confidence (the calibrated probability that it is right) "
        "is below X, in [0, 1] (default: min_confidence of the config, 0)",
    )  # fmt: skip


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from the config file, the environment and the flags in `args`;
    for a command with the knowledge-base options, a notice on stderr when they
    name none and the demo knowledge base is used."""
    flags: dict[str, object] = {}
    if getattr(args, "gstore", None):
        flags.update(backend="gstore", gstore_url=args.gstore, gstore_db=args.db)
    elif getattr(args, "endpoint", None):
        flags.update(backend="sparql", endpoint=args.endpoint)
    elif getattr(args, "store", None):
        flags.update(backend="oxigraph")
    for key in ("store", "mention_index", "model"):
        if getattr(args, key, None):
            flags[key] = getattr(args, key)
    if getattr(args, "min_confidence", None) is not None:
        flags["min_confidence"] = args.min_confidence
    settings = load_settings(getattr(args, "config", None), flags)
    logging.basicConfig(level=settings.log_level.upper(), format="coqa: %(levelname)s: %(message)s")
    if hasattr(args, "endpoint") and uses_demo_kb(settings.kb_config()):
        print(DEMO_NOTICE, file=sys.stderr)
    return settings


def is_utf8_text(text: str) -> bool:
    """False for text holding bytes that were not UTF-8 (Python keeps them as
    lone surrogates in arguments and stdin lines, e.g. GBK from a GBK terminal)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def fail(message: str, code: int = 1) -> int:
    """Print a one-line error to stderr and return the exit code."""
    print(f"coqa: error: {message}", file=sys.stderr)
    return code
