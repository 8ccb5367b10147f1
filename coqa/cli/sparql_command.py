"""`coqa sparql`: run a raw SPARQL SELECT query against the configured knowledge base."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from coqa.cli.common import add_kb_options, fail, settings_from_args
from coqa.dataset import escape_field
from coqa.kb import QueryResult, Term, open_kb

EPILOG = """\
The query is in PKU BASE style: bare names in angle brackets, as in the CCKS
gold SPARQL; it runs unchanged on every backend. Results print as PKU BASE
terms: <name> for entities, "value" for literals, an empty field for an
unbound variable; tabs and line breaks inside a value print as \\t \\n \\r.

formats:
  text   one line per row, values separated by tabs (default)
  tsv    the same with a header row of the variables (?x ...)
  json   {"variables": [...], "rows": [[...], ...]}, values as PKU BASE terms or null

examples:
  coqa sparql 'select ?x where { <莫妮卡·贝鲁奇> <代表作品> ?x. }' --store /tmp/s
  coqa sparql @query.rq --endpoint http://127.0.0.1:7878/query --format tsv
  echo 'select ?p where { <莫妮卡·贝鲁奇> ?p ?o }' | coqa sparql - --gstore http://127.0.0.1:9000 --db pkubase
"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `sparql` subcommand."""
    parser = commands.add_parser(
        "sparql",
        help="run a SPARQL SELECT or ASK query, print PKU BASE terms",
        description="Run a SPARQL SELECT or ASK query against the knowledge base and print the results.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("query", metavar="QUERY", help="the query text, @FILE to read it from a file, or - for stdin")
    parser.add_argument("--format", choices=("text", "tsv", "json"), default="text", help="output format (default: text)")
    add_kb_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Read the query, run it, print the results; exit code 0 on success."""
    source = "stdin" if args.query == "-" else args.query[1:]
    try:
        query = read_query(args.query)
    except OSError as error:
        return fail(f"cannot read the query from {source}: {error.strerror}", 2)
    except UnicodeDecodeError:
        return fail(f"the query in {source} is not UTF-8 text", 2)
    if not query.strip():
        return fail("the query is empty", 2)
    kb = open_kb(settings_from_args(args).kb_config())
    try:
        result = kb.select(query)
    finally:
        kb.close()
    sys.stdout.write(render(result, args.format))
    return 0


def read_query(source: str) -> str:
    """The query text named by QUERY: itself, `@FILE`'s content, or stdin for `-`."""
    if source == "-":
        return sys.stdin.read()
    if source.startswith("@"):
        return Path(source[1:]).read_text(encoding="utf-8")
    return source


def render(result: QueryResult, output_format: str) -> str:
    """The results in `output_format` (text, tsv or json), ending with a newline when not empty."""
    if result.boolean is not None:
        answer = "true" if result.boolean else "false"
        return json.dumps({"boolean": result.boolean}) + "\n" if output_format == "json" else answer + "\n"
    if output_format == "json":
        rows = [[None if term is None else str(term) for term in row] for row in result.rows]
        return json.dumps({"variables": result.variables, "rows": rows}, ensure_ascii=False) + "\n"
    lines = [_tsv_line(row) for row in result.rows]
    if output_format == "tsv":
        lines.insert(0, "\t".join(f"?{name}" for name in result.variables))
    return "".join(line + "\n" for line in lines)


def _tsv_line(row: tuple[Term | None, ...]) -> str:
    return "\t".join("" if term is None else escape_field(str(term)) for term in row)
