"""`coqa load`: build an embedded store (or only a mention index) from PKU BASE or NLPCC KB files."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from coqa.config import ConfigError, load_settings

if TYPE_CHECKING:  # the loader imports pyoxigraph: only `coqa load` itself needs it
    from coqa.kb.loading.report import FileReport, LoadReport

LOAD_DESCRIPTION = """Load PKU BASE files into an embedded store directory: the triples and
types into a pyoxigraph store (STORE/oxigraph), every entity name, literal
value and mention2ent line into the mention index (STORE/mentions).

Files are found in each KB_DIR by name: pkubase-triples*, pkubase-types*,
pkubase-mention2ent*; files may also be named one by one. An NLPCC KBQA
knowledge base (`subject ||| predicate ||| object` lines) is recognised by
its content (or --format nlpcc): subjects become entities <subject>,
predicates <predicate>, objects literals "object"; subject names (and their
names without a trailing (...) qualifier) are its mentions, object values
are not. Files are streamed: loading the triples takes the same memory
whatever their number; the mention index being built holds its entries in
memory until it is saved.

Lines that break the format are repaired when a documented rule can (GBK /
GB18030 text, byte order mark, CRLF, missing ' .', a tab inside a literal or
name, ...) or written to the rejects file with file, line number, reason and
the raw line. At the end every file's lines are accounted for:
lines = loaded + repaired + rejected + blank; "duplicates" counts the loaded
or repaired lines whose fact was already stored (kept once): per file for a
mention file or a lone triple file; for several triple files, which go into
the store in one bulk load, only in the total.

A load is all or nothing: it builds the new store in STORE/.loading-* and
puts it in place at the end, so a failed or interrupted load (Ctrl-C, kill)
leaves the store, its index, manifest and rejects file as they were; the next
load removes what it left. One load at a time per store: a second one stops
at once with a message."""

LOAD_EPILOG = """examples:
  coqa load ../shared/data/pkubase-bench --store /tmp/s
      load the three files of a PKU BASE directory into a new store
  coqa load pkubase-triples.txt pkubase-mention2ent.txt --store /tmp/s
      name the files one by one
  coqa load ../shared/data/nlpcc-kbqa --store /tmp/n
      an NLPCC KBQA knowledge base (found in the directory by its content)
  coqa load more/ --store /tmp/s --append
      add facts and mentions to an existing store (--replace rebuilds it)
  coqa load pkubase/ --store /tmp/idx --index-only
      only the mention index, for a KB served by gStore or a SPARQL endpoint
      (then: coqa ask ... --gstore URL --db NAME --mention-index /tmp/idx/mentions)
  coqa sparql 'select ?x where { <莫妮卡·贝鲁奇> <代表作品> ?x. }' --store /tmp/s
      query the loaded store"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `load` subcommand."""
    parser = commands.add_parser(
        "load",
        help="load PKU BASE or NLPCC KB files into an embedded store and mention index",
        description=LOAD_DESCRIPTION,
        epilog=LOAD_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", metavar="KB_DIR_OR_FILE", help="PKU BASE directory or files")
    parser.add_argument("--store", metavar="DIR", help="store directory to build (default: the store setting)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--replace", action="store_true", help="rebuild an existing store from these files")
    mode.add_argument("--append", action="store_true", help="add these files to an existing store")
    parser.add_argument(
        "--index-only", action="store_true", help="build only the mention index (for gStore / SPARQL endpoint backends)"
    )
    parser.add_argument("--rejects", metavar="FILE", help="where rejected lines go (default: STORE/rejects.tsv)")
    parser.add_argument(
        "--format",
        choices=("pkubase", "nlpcc"),
        help="the files' format (default: PKU BASE files by name, NLPCC KB files by content)",
    )
    parser.set_defaults(run=run_load)


def run_load(args: argparse.Namespace) -> int:
    from coqa.kb.loading.loader import load_kb

    store = args.store or load_settings(args.config).store
    if not store:
        raise ConfigError("no store directory: pass --store DIR (or set `store` in the config)")
    mode = "replace" if args.replace else "append" if args.append else "new"
    report = load_kb(
        args.sources, store, mode=mode, index_only=args.index_only, rejects_path=args.rejects, kb_format=args.format
    )
    print(format_report(report))
    return 0


_COLUMNS = ("lines", "loaded", "repaired", "rejected", "blank", "duplicates")


def _row(name: str, report: FileReport, width: int) -> str:
    cells = ["?" if getattr(report, c) is None else f"{getattr(report, c):,}" for c in _COLUMNS]
    return f"{name:<{width}}" + "".join(f"{cell:>12}" for cell in cells)


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {count:,}" for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]))


def format_report(report: LoadReport) -> str:
    """The counts table and summary printed at the end of `coqa load`."""
    names = [r.path for r in report.files]
    width = max(len(n) for n in names + ["total"]) + 2
    total = report.total
    lines = [f"{'file':<{width}}" + "".join(f"{c:>12}" for c in _COLUMNS)]
    lines += [_row(name, r, width) for name, r in zip(names, report.files)]
    lines.append(_row("total", total, width))
    lines.append("lines = loaded + repaired + rejected + blank; duplicates are loaded lines whose fact was already stored")
    if total.duplicates is not None and any(r.duplicates is None for r in report.files):
        lines.append("? = not counted per file: the triple files go into the store in one bulk load; the total counts them")
    lines += [f"empty file: {r.path}" for r in report.files if r.lines == 0]
    if total.repairs:
        lines.append(f"repairs: {_reasons(total.repairs)}")
    if report.rejects_path:
        lines.append(f"rejected lines: {total.rejected:,} written to {report.rejects_path} ({_reasons(total.rejects)})")
    else:
        lines.append("rejected lines: none")
    contents = f"{report.index_entries:,} mention index entries"
    if report.triples is not None:
        contents = f"{report.triples:,} triples, " + contents
    rate = total.lines / report.seconds if report.seconds else 0.0
    compacted = "" if report.compaction_seconds is None else f", {report.compaction_seconds:.1f} s of it compacting the store"
    lines.append(f"store: {report.store_dir} ({contents}) in {report.seconds:.1f} s{compacted} ({rate:,.0f} lines/s)")
    lines += [f"note: {note}" for note in report.notes]
    return "\n".join(lines)
