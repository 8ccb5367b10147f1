"""Mention index at PKU BASE scale: build time and peak memory, then (in a
fresh process) open time, memory after opening and after lookups, and
lookup latency.

    python benchmarks/bench_mention_index.py [--mentions 13000000] [--data FILE]

Targets: the index for 13M mention2ent lines opens in under 5 s and
stays within 1 GB of memory. The build and the query side each run in their
own subprocess so that their memory figures are their own.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import synthetic
from coqa.kb import INDEX_SUBDIR
from benchutil import Stopwatch, format_table, machine_load, memory, percentiles, run_in_work_dir

# Question shapes for find_all; the slots take mentions sampled from the data.
QUESTION_TEMPLATES = (
    "{}的出生地是哪里？",
    "谁是{}的妻子？",
    "{}是哪个国家的？",
    "{}的代表作品有哪些？",
    "{}和{}共同出演的电影有哪些？",
)
DEFAULT_MENTIONS = 13_000_000


def build(data: Path, store_dir: Path) -> dict[str, Any]:
    """Build the index from a mention2ent file as `coqa load --index-only`
    does; runs in its own process, so the peak memory is the build's."""
    from coqa.kb import INDEX_SUBDIR
    from coqa.kb.loading.loader import load_kb
    from coqa.kb.mention_segments import segment_files

    loaded = load_kb([data], store_dir, mode="replace", index_only=True, progress=False)
    collected = loaded.files[0].seconds
    return {
        "lines": loaded.total.lines,
        "entries": loaded.index_entries,
        "collect_s": collected,
        "save_s": loaded.seconds - collected,
        "peak_rss_mb": memory()["peak_mb"],
        "index_mb": sum(path.stat().st_size for path in segment_files(store_dir / INDEX_SUBDIR)) / 2**20,
    }


def query(index_dir: Path, questions_file: Path) -> dict[str, Any]:
    """Open the index and run the lookups; runs in a fresh process."""
    from coqa.kb.mention_index import MentionIndex
    from coqa.kb.surfaces import normalize_surface

    samples = json.loads(questions_file.read_text(encoding="utf-8"))
    before = memory()
    clock = Stopwatch()
    index = MentionIndex.open(index_dir)
    opened = clock.lap()
    after_open = memory()
    lookup_ms, find_ms, found, matches = [], [], 0, 0
    for sample in samples:
        clock.lap()
        found += bool(index.lookup(sample["mention"]))
        lookup_ms.append(clock.lap() * 1000)
        matches += sum(1 for _ in index.find_all(normalize_surface(sample["question"])))
        find_ms.append(clock.lap() * 1000)
    return {
        "open_s": opened,
        "before_open": before,
        "after_open": after_open,
        "after_queries": memory(),
        "keys": len(index),
        "queries": len(samples),
        "lookup_found": found,
        "lookup_ms": percentiles(lookup_ms),
        "find_all_ms": percentiles(find_ms),
        "find_all_matches_per_question": matches / max(1, len(samples)),
    }


def sample_questions(data: Path, count: int, seed: int) -> list[dict[str, str]]:
    """`count` mentions drawn from the file (reservoir sampling) and a
    question built around each."""
    rng = random.Random(seed)
    reservoir: list[str] = []
    with open(data, encoding="utf-8") as source:
        for number, line in enumerate(source):
            mention = line.split("\t", 1)[0]
            if not mention.strip():
                continue
            if len(reservoir) < count:
                reservoir.append(mention)
            elif (slot := rng.randrange(number + 1)) < count:
                reservoir[slot] = mention
    samples = []
    for position, mention in enumerate(reservoir):
        template = QUESTION_TEMPLATES[position % len(QUESTION_TEMPLATES)]
        other = reservoir[(position * 7 + 1) % len(reservoir)]
        samples.append({"mention": mention, "question": template.format(mention, other)})
    return samples


def run_phase(phase: str, *args: str) -> dict[str, Any]:
    """Run one phase of this script in a fresh Python process; its JSON result."""
    command = [sys.executable, str(Path(__file__).resolve()), "--phase", phase, *args]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def report(mentions: int, generated_s: float | None, built: dict[str, Any], queried: dict[str, Any]) -> str:
    rows = [
        ("mention lines", f"{built['lines']:,}"),
        ("index entries (surface, entity)", f"{built['entries']:,}"),
        ("generate file", "-" if generated_s is None else f"{generated_s:.1f} s"),
        ("build: read + collect", f"{built['collect_s']:.1f} s"),
        ("build: save (trie, write, manifest)", f"{built['save_s']:.1f} s"),
        ("build: peak RSS", f"{built['peak_rss_mb']:,.0f} MB"),
        ("index file", f"{built['index_mb']:,.0f} MB, {queried['keys']:,} keys"),
        ("open (fresh process)", f"{queried['open_s']:.3f} s   [target < 5 s]"),
        ("RSS before open", _rss(queried["before_open"])),
        ("RSS after open", _rss(queried["after_open"])),
        (f"RSS after {queried['queries']} lookups + find_all", _rss(queried["after_queries"]) + "   [target <= 1024 MB]"),
        ("lookup p50 / p95", "{p50:.3f} / {p95:.3f} ms".format(**queried["lookup_ms"])),
        ("lookup hits", f"{queried['lookup_found']}/{queried['queries']}"),
        ("find_all(question) p50 / p95", "{p50:.3f} / {p95:.3f} ms".format(**queried["find_all_ms"])),
        ("find_all matches per question", f"{queried['find_all_matches_per_question']:.1f}"),
        ("machine", machine_load()),
    ]
    return format_table(("mention index", f"{mentions:,} lines"), rows)


def _rss(memory_now: dict[str, float]) -> str:
    return "{rss_mb:,.0f} MB (anonymous {anon_mb:,.0f} + mapped files {file_mb:,.0f}; peak {peak_mb:,.0f})".format(
        **memory_now
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark the mention index at PKU BASE scale.")
    parser.add_argument("--mentions", type=int, default=DEFAULT_MENTIONS, help="synthetic mention2ent lines (default 13M)")
    parser.add_argument(
        "--data", type=Path, help="use this mention2ent file (named pkubase-mention2ent*) instead of generating one"
    )
    parser.add_argument("--work", type=Path, help="working directory (default: a temporary one, removed at the end)")
    parser.add_argument("--queries", type=int, default=1000, help="lookups and find_all calls (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed for data and samples (default 0)")
    parser.add_argument("--phase", choices=("build", "query"), help=argparse.SUPPRESS)
    parser.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--questions", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase == "build":
        print(json.dumps(build(args.data, args.index)))
        return 0
    if args.phase == "query":
        print(json.dumps(query(args.index, args.questions)))
        return 0
    if args.data is not None and not args.data.is_file():
        parser.error(f"no such file: {args.data}")
    return run_in_work_dir(args, run)


def run(args: argparse.Namespace, work: Path) -> int:
    data, generated_s = args.data, None
    if data is None:
        data = work / synthetic.MENTIONS_FILE
        clock = Stopwatch()
        entities = synthetic.entity_count(0, args.mentions)
        synthetic.write_chunks(data, synthetic.mention_chunks(args.mentions, entities, args.seed))
        generated_s = clock.lap()
    questions = work / "questions.json"
    questions.write_text(json.dumps(sample_questions(data, args.queries, args.seed), ensure_ascii=False), encoding="utf-8")
    store_dir = work / "index-only-store"
    built = run_phase("build", "--data", str(data), "--index", str(store_dir))
    queried = run_phase("query", "--index", str(store_dir / INDEX_SUBDIR), "--questions", str(questions))
    print(report(built["lines"], generated_s, built, queried))
    return 0


if __name__ == "__main__":
    sys.exit(main())
