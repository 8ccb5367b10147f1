"""`coqa serve`: the HTTP API and the web page (needs the `serve` extra)."""

from __future__ import annotations

import argparse

from coqa.cli.common import add_kb_options, add_min_confidence_option, fail, settings_from_args
from coqa.serve.sparql import DEFAULT_MEMORY_MB

EPILOG = """\
The page at http://HOST:PORT/ asks questions and shows why; the API is
documented at http://HOST:PORT/docs.

examples:
  coqa serve
  coqa serve --store /tmp/s --workers 2
  curl -s -XPOST 127.0.0.1:8000/answer -H 'content-type: application/json' -d '{"question":"周星驰的身高是多少？"}'
"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `serve` subcommand."""
    parser = commands.add_parser(
        "serve",
        help="serve the HTTP API and the web page",
        description="Serve POST /answer, POST /answer/batch, POST /sparql, GET /health and a web page "
        "for asking questions and seeing why, over the same knowledge base and model as `coqa answer`.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--workers", type=int, default=1, help="pipeline processes answering questions at once (default 1)"
    )
    parser.add_argument("--model", metavar="MODEL", help="model from `coqa train` (default: the shipped model)")
    add_min_confidence_option(parser)
    parser.add_argument("--sparql-rows", type=int, default=1000, help="row limit of POST /sparql (default 1000)")
    parser.add_argument(
        "--sparql-timeout", type=float, default=10.0, help="time limit of POST /sparql in seconds (default 10)"
    )
    parser.add_argument(
        "--sparql-memory",
        type=int,
        default=DEFAULT_MEMORY_MB,
        metavar="MB",
        help=f"data memory limit of the POST /sparql query process in MB (default {DEFAULT_MEMORY_MB})",
    )
    add_kb_options(parser)
    parser.set_defaults(run=run)


# The modules of the serve extra (pyproject.toml), by import name.
SERVE_EXTRA = ("fastapi", "uvicorn", "fastapi_offline")


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        return fail("--workers must be at least 1", 2)
    if args.sparql_rows < 1 or args.sparql_timeout <= 0 or args.sparql_memory < 1:
        return fail("--sparql-rows, --sparql-timeout and --sparql-memory must be positive", 2)
    if not 0 < args.port < 65536:
        return fail("--port must be between 1 and 65535", 2)
    try:
        from coqa.serve.app import ServeOptions
        from coqa.serve.server import run as serve
    except ImportError as error:
        if (error.name or "").split(".")[0] in SERVE_EXTRA:
            return fail(f"coqa serve needs the serve extra ({error.name} is missing): pip install 'coqa[serve]'")
        return fail(f"coqa is not fully installed ({error.name} is missing): install coqa again with pip")
    settings = settings_from_args(args)
    serve(settings, ServeOptions(args.workers, args.sparql_rows, args.sparql_timeout, args.sparql_memory), args.host, args.port)
    return 0
