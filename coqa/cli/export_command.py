"""`coqa export`: PKU BASE triple files as one clean N-Triples file for gStore or another engine."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from coqa.kb.loading.export import ExportReport

DESCRIPTION = """Export the pkubase-triples* and pkubase-types* files of KB_DIR (or files
named one by one) as one N-Triples file that the target engine loads with
zero errors, names through the same codec the matching backend uses for
queries:

  gstore    names bare, as gStore holds them; the few characters gStore
            cannot hold (white space, <>"{}|^`\\, control characters) are
            percent-encoded, and decoded back in results by --gstore
  ntriples  names as absolute IRIs (http://pkubase.org/r/ + percent-encoded
            name), as the embedded store holds them; for Virtuoso, Fuseki,
            QLever ... behind --endpoint

Lines are read, repaired and counted as by `coqa load`: lines = loaded +
repaired + rejected + blank, every rejected line in the rejects file with
file, line number and reason. Mention files are not exported: build the
mention index with `coqa load KB_DIR --store DIR --index-only`."""

EPILOG = """examples:
  coqa export ../shared/data/pkubase-bench --to gstore -o /tmp/pkubase.nt
  GSTORE_HOME=/tmp/gs start-gstore.sh pkubase /tmp/pkubase.nt 9000     (gStore's script)
  coqa sparql 'select ?x where { <2008年北京奥运会 > <口号> ?x. }' --gstore http://127.0.0.1:9000 --db pkubase
  coqa export ../shared/data/pkubase-bench --to ntriples -o /tmp/load/pkubase.nt   (then Virtuoso's ld_dir)
  coqa export ../shared/data/nlpcc-kbqa --to ntriples -o /tmp/nlpcc.nt   (an NLPCC KB file's facts)"""


def register(commands: argparse._SubParsersAction) -> None:
    """Add the `export` subcommand."""
    parser = commands.add_parser(
        "export",
        help="export PKU BASE (or an NLPCC KB) as clean N-Triples for gStore or another engine",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", metavar="KB_DIR_OR_FILE", help="PKU BASE or NLPCC KB directory or files")
    parser.add_argument("--to", required=True, choices=("gstore", "ntriples"), help="the engine the file is for")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="the N-Triples file to write")
    parser.add_argument("--rejects", metavar="FILE", help="where rejected lines go (default: FILE.rejects.tsv)")
    parser.set_defaults(run=run_export)


def run_export(args: argparse.Namespace) -> int:
    from coqa.kb.loading.export import export_kb

    report = export_kb(args.sources, args.to, args.output, rejects_path=args.rejects)
    print(format_export_report(report))
    return 0


COLUMNS = ("lines", "loaded", "repaired", "rejected", "blank")


def format_export_report(report: ExportReport) -> str:
    """The counts table and summary printed at the end of `coqa export`."""
    rows = [(r.path, r) for r in report.files] + [("total", report.total)]
    width = max(len(name) for name, _ in rows) + 2
    lines = [f"{'file':<{width}}" + "".join(f"{c:>12}" for c in COLUMNS)]
    lines += [f"{name:<{width}}" + "".join(f"{getattr(r, c):>12,}" for c in COLUMNS) for name, r in rows]
    lines.append("lines = loaded + repaired + rejected + blank")
    total = report.total
    if total.repairs:
        lines.append(f"repairs: {_reasons(total.repairs)}")
    if report.rejects_path:
        lines.append(f"rejected lines: {total.rejected:,} written to {report.rejects_path} ({_reasons(total.rejects)})")
    else:
        lines.append("rejected lines: none")
    lines += [f"not exported (mention file; the mention index stays with coqa): {path}" for path in report.skipped]
    lines.append(f"wrote {report.triples_written:,} triples to {report.output} in {report.seconds:.1f} s")
    return "\n".join(lines)


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason}: {count:,}" for reason, count in sorted(counts.items(), key=lambda kv: -kv[1]))
