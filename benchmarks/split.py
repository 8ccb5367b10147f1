"""Held-out splits of a training file, for choices made without looking at dev.

    python benchmarks/split.py ../shared/data/pkubase-bench/train.txt --held 4001-5220 --out /tmp/heldout
    python benchmarks/split.py ../shared/data/nlpcc-kbqa/train.txt --held 2001-5000 --out /tmp/nlpcc-held

writes `--out/train.txt` (every record outside the 1-based, inclusive range
`--held`) and `--out/held.txt` (the records inside it), each record as it
stands in the file (a CCKS record is the lines up to a blank line, an NLPCC
record the lines up to a line of `=`), so both files read like the original.
The held-out figures of README.md and docs/measurements/ come from such
splits.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_NLPCC_SEPARATOR = re.compile(r"^=+\s*$")


def records(text: str) -> list[str]:
    """The records of a CCKS or NLPCC training file, each with its separator line."""
    found: list[str] = []
    current: list[str] = []
    for line in text.splitlines(keepends=True):
        current.append(line)
        if not line.strip() or _NLPCC_SEPARATOR.match(line):
            if any(part.strip() and not _NLPCC_SEPARATOR.match(part) for part in current):
                found.append("".join(current))
            current = []
    if any(part.strip() for part in current):
        last = "".join(current)
        found.append(last if last.endswith("\n") else last + "\n")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("train_file")
    parser.add_argument("--held", required=True, metavar="FIRST-LAST", help="1-based inclusive record range held out")
    parser.add_argument("--out", required=True, help="directory for train.txt and held.txt")
    args = parser.parse_args()
    match = re.fullmatch(r"(\d+)-(\d+)", args.held)
    if match is None:
        sys.exit(f"split: --held must look like 4001-5220, not {args.held!r}")
    first, last = int(match.group(1)), int(match.group(2))
    found = records(Path(args.train_file).read_text(encoding="utf-8"))
    if not 1 <= first <= last <= len(found):
        sys.exit(f"split: --held {args.held} is outside the file's {len(found)} records")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    held = found[first - 1 : last]
    kept = found[: first - 1] + found[last:]
    (out / "train.txt").write_text("".join(kept), encoding="utf-8")
    (out / "held.txt").write_text("".join(held), encoding="utf-8")
    print(f"{out / 'train.txt'}: {len(kept)} records; {out / 'held.txt'}: {len(held)} records")


if __name__ == "__main__":
    main()
