"""Where the answers of a `coqa eval` go wrong: the failed stage by gold
query shape, and the ranking errors (a right candidate existed, another was
chosen) by how the chosen query differs from the gold one.

    python benchmarks/ranking_errors.py EVAL_DIR/errors.jsonl [--examples CLASS]

Classes of a ranking error, first that applies: `other entity` (the chosen
query uses none of the gold constants), `longer` (it holds every gold
predicate and more triples: a hop or constraint the question does not ask),
`shorter` (its predicates are some of the gold ones, in fewer triples),
`same predicates` (the gold predicates in another direction or arrangement),
`one hop, other predicate`, `other predicates` (everything else).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from coqa.gold import is_variable, parse_query

STAGES = ("no mention", "linking", "candidates", "ranking")


def error_class(gold_sparql: str, chosen_sparql: str) -> str:
    """The class of a ranking error (module docstring)."""
    gold, chosen = parse_query(gold_sparql).triples, parse_query(chosen_sparql).triples
    gold_predicates, chosen_predicates = {t[1] for t in gold}, {t[1] for t in chosen}
    constants = {x for s, _, o in gold for x in (s, o) if not is_variable(x)}
    if not any(not is_variable(x) and x in constants for s, _, o in chosen for x in (s, o)):
        return "other entity"
    if len(chosen) > len(gold) and gold_predicates <= chosen_predicates:
        return "longer"
    if len(chosen) < len(gold) and chosen_predicates <= gold_predicates:
        return "shorter"
    if chosen_predicates == gold_predicates:
        return "same predicates"
    if len(chosen) == len(gold) == 1:
        return "one hop, other predicate"
    return "other predicates"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("errors", type=Path, help="errors.jsonl of a coqa eval report")
    parser.add_argument("--examples", help="print the gold and chosen queries of this class")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.errors.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_shape = Counter((row["shape"], row["stage"]) for row in rows)
    print("| shape | " + " | ".join(STAGES) + " |\n|---|" + "---|" * len(STAGES))
    for shape in sorted({shape for shape, _ in by_shape}):
        print(f"| {shape} | " + " | ".join(str(by_shape[(shape, stage)]) for stage in STAGES) + " |")
    ranking = [row for row in rows if row["stage"] == "ranking" and row["chosen_sparql"]]
    classes = Counter(error_class(row["gold_sparql"], row["chosen_sparql"]) for row in ranking)
    print(f"\nranking errors: {len(ranking)}")
    for name, count in classes.most_common():
        print(f"  {count:4d}  {name}")
    for row in ranking:
        if args.examples and error_class(row["gold_sparql"], row["chosen_sparql"]) == args.examples:
            print(f"\n{row['number']}\n  gold:   {row['gold_sparql']}\n  chosen: {row['chosen_sparql']}")


if __name__ == "__main__":
    main()
