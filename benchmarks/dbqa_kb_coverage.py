"""How many DBQA questions a knowledge base in the NLPCC format could speak to at all.

    python benchmarks/dbqa_kb_coverage.py ../shared/data/nlpcc-kbqa/nlpcc-kbqa-kb.txt \\
        ../shared/data/nlpcc-dbqa/train.txt ../shared/data/nlpcc-dbqa/dev.txt --repair-labels \
        [--kbqa-questions ../shared/data/nlpcc-kbqa/train.txt]

A feature "the sentence states a value of a relation the question asks about
an entity it names" can only fire where the question names a subject of the
knowledge base and the document holds one of that subject's values. For each
DBQA file this prints the questions that write a subject's name (of at least
2 and of at least 3 characters: two-character names such as place names are
written by many questions about something else), those whose document holds a
value (2 characters or more) of a subject they write, and those where a
sentence labelled right holds one. Names and values compare normalised
(coqa.dbqa.text.normalise). Nothing is written; the knowledge base's facts
are only counted (the NLPCC KB on this machine holds distractor facts that are
not true, see its README). `--kbqa-questions FILE` (an NLPCC KBQA question
file) also counts the DBQA questions written the same (normalised) in FILE.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from coqa.dataset import read_gold_questions
from coqa.dbqa.reading import DbqaQuestion, read_dbqa
from coqa.dbqa.text import normalise


def read_values(path: Path) -> dict[str, list[str]]:
    """Normalised subject -> its normalised objects, from `subject ||| predicate ||| object` lines."""
    values: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8") as stream:
        for line in stream:
            parts = line.rstrip("\n").split(" ||| ")
            if len(parts) == 3:
                values[normalise(parts[0])].append(normalise(parts[2]))
    return values


def subjects_written(question: str, subjects: set[str], longest: int) -> set[str]:
    """The subjects (2 characters or more) the normalised question writes."""
    return {
        question[start:end]
        for start in range(len(question))
        for end in range(start + 2, min(len(question), start + longest) + 1)
        if question[start:end] in subjects
    }


def coverage(questions: list[DbqaQuestion], values: dict[str, list[str]]) -> dict[str, int]:
    subjects = {subject for subject in values if len(subject) >= 2}
    longest = max(map(len, subjects), default=0)
    counts = dict.fromkeys(("questions", "names_2", "names_3", "value_in_document", "value_in_right_sentence"), 0)
    for question in questions:
        counts["questions"] += 1
        written = subjects_written(normalise(question.question), subjects, longest)
        if not written:
            continue
        counts["names_2"] += 1
        counts["names_3"] += any(len(subject) >= 3 for subject in written)
        known = [value for subject in sorted(written) for value in values[subject] if len(value) >= 2]
        sentences = [normalise(sentence) for sentence in question.sentences]
        counts["value_in_document"] += any(value in sentence for sentence in sentences for value in known)
        right = [sentence for sentence, label in zip(sentences, question.labels or [0] * len(sentences)) if label]
        counts["value_in_right_sentence"] += any(value in sentence for sentence in right for value in known)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kb", type=Path, help="a knowledge base of `subject ||| predicate ||| object` lines")
    parser.add_argument("files", nargs="+", help="DBQA files")
    parser.add_argument("--repair-labels", action="store_true")
    parser.add_argument("--kbqa-questions", metavar="FILE", help="an NLPCC KBQA file whose questions are compared")
    args = parser.parse_args()
    values = read_values(args.kb)
    kbqa = {normalise(question.question) for question in read_gold_questions(args.kbqa_questions)} if args.kbqa_questions else set()
    print(f"{args.kb.name}: {len(values)} subjects")
    for path in args.files:
        questions = read_dbqa(path, repair_labels=args.repair_labels).questions
        counts = coverage(questions, values)
        if args.kbqa_questions:
            same = sum(1 for question in questions if normalise(question.question) in kbqa)
            print(f"{Path(path).name}: {same} of {len(questions)} questions written the same in {Path(args.kbqa_questions).name}")
        print(
            f"{Path(path).name}: {counts['questions']} questions; writing a subject of >= 2 characters {counts['names_2']}, "
            f">= 3 characters {counts['names_3']}; a value of one in the document {counts['value_in_document']}, "
            f"in a right sentence {counts['value_in_right_sentence']}"
        )


if __name__ == "__main__":
    main()
