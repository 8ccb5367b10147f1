"""Reading NLPCC DBQA files into questions with their candidate sentences.

Three layouts, tab-separated, one candidate sentence per line:

    question<TAB>sentence<TAB>label     NLPCC 2016 column order (LAYOUT_2016)
    label<TAB>question<TAB>sentence     NLPCC 2017 column order (LAYOUT_2017)
    question<TAB>sentence               the unlabelled official test files

The layout is recognised from where the label stands on the first line with
three fields. A question's sentences are consecutive lines with the same
question text; a question whose lines are interrupted by another question is
refused, as are lines with the wrong number of fields, labels other than 0/1
and files mixing layouts: every refusal is a DbqaFormatError naming the file
and line. Nothing is dropped.

The one repair rule (off unless asked for, `repair_labels=True`): a label
written with more than one digit, all of them 0 or 1 (the published NLPCC 2017
dev file has one line labelled `10`), is read as its first digit, and the
repair is reported with its line number in `DbqaFile.repairs`. Without the
rule such a label is refused like any other.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from coqa.dataset import DatasetError, read_lines

LAYOUT_2016 = "question-sentence-label"
LAYOUT_2017 = "label-question-sentence"
LAYOUT_UNLABELLED = "question-sentence"
LAYOUTS = (LAYOUT_2016, LAYOUT_2017, LAYOUT_UNLABELLED)

# A DBQA file is read whole; the largest official file (2016 train) is about 30 MB.
MAX_FILE_BYTES = 256 * 1024 * 1024
REPAIRABLE_LABEL = re.compile(r"[01]{2,}")
LABEL_LIKE = re.compile(r"\d+")


class DbqaFormatError(DatasetError):
    """A DBQA file that cannot be read as it is; the message names the file and line."""


@dataclass(frozen=True)
class Candidate:
    """One candidate sentence: its text, its label (None in an unlabelled
    file) and its line number in the file (from 1)."""

    sentence: str
    label: int | None
    line: int


@dataclass(frozen=True)
class DbqaQuestion:
    """A question and its document: the candidate sentences in file order."""

    question: str
    candidates: tuple[Candidate, ...]

    @property
    def sentences(self) -> list[str]:
        return [candidate.sentence for candidate in self.candidates]

    @property
    def labels(self) -> list[int]:
        """The labels (0 for a candidate without one)."""
        return [candidate.label or 0 for candidate in self.candidates]


@dataclass(frozen=True)
class Repair:
    """A label read by the documented repair rule."""

    line: int
    written: str
    read_as: int


@dataclass
class DbqaFile:
    """The questions of a DBQA file in file order, its layout and the labels repaired."""

    path: Path
    layout: str
    questions: list[DbqaQuestion]
    repairs: list[Repair] = field(default_factory=list)

    @property
    def labelled(self) -> bool:
        return self.layout != LAYOUT_UNLABELLED

    @property
    def lines(self) -> int:
        return sum(len(question.candidates) for question in self.questions)

    def digest(self) -> str:
        """sha256 of the questions, sentences and labels as read (independent of
        the layout, line ends and file name)."""
        records = [[q.question, [[c.sentence, c.label] for c in q.candidates]] for q in self.questions]
        return hashlib.sha256(json.dumps(records, ensure_ascii=False).encode("utf-8")).hexdigest()


def looks_like_dbqa(lines: list[str]) -> bool:
    """True when the first lines of a file (up to 50 non-empty ones) all have 2
    or 3 tab-separated fields, as DBQA lines do and CCKS blocks (`qN:` lines),
    NLPCC KBQA files (`<question id=N>` lines) and question-per-line files do not."""
    sample = [line for line in lines[:200] if line.strip()][:50]
    if not sample or sample[0].startswith("<question id=") or re.match(r"q\d+:", sample[0]):
        return False
    return all(len(line.split("\t")) in (2, 3) for line in sample)


def read_dbqa(path: str | Path, repair_labels: bool = False) -> DbqaFile:
    """The questions of the DBQA file at `path`; DbqaFormatError with the line
    number for anything that does not fit the layout (see the module doc)."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DbqaFormatError(f"cannot read {path}: {error.strerror}") from None
    if size > MAX_FILE_BYTES:
        raise DbqaFormatError(f"{path} has {size} bytes, more than the {MAX_FILE_BYTES} a DBQA file may have")
    return parse_dbqa(read_lines(path), path, repair_labels)


def parse_dbqa(lines: list[str], path: str | Path, repair_labels: bool = False) -> DbqaFile:
    """`read_dbqa` over the lines of a file (`path` names it in errors). A
    final empty line is allowed; other empty lines are refused."""
    path = Path(path)
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if not lines:
        raise DbqaFormatError(f"{path} has no DBQA lines")
    layout = detect_layout(lines, path)
    parsed = DbqaFile(path, layout, [])
    closed: dict[str, int] = {}  # question -> line number where its run ended
    run: list[Candidate] = []
    current = ""
    for number, line in enumerate(lines, start=1):
        question, sentence, label = _fields(line, number, layout, path, parsed.repairs if repair_labels else None)
        if run and question != current:
            parsed.questions.append(DbqaQuestion(current, tuple(run)))
            closed[current] = number - 1
            run = []
        if not run and question in closed:
            raise DbqaFormatError(
                f"{path}:{number}: the sentences of question {question[:40]!r} are not contiguous "
                f"(its earlier run ended at line {closed[question]})"
            )
        current = question
        run.append(Candidate(sentence, label, number))
    parsed.questions.append(DbqaQuestion(current, tuple(run)))
    return parsed


def detect_layout(lines: list[str], path: Path) -> str:
    """The layout of a file from its first line: two fields are the unlabelled
    layout; of three, the one whose first or last field is a number is the label."""
    fields = lines[0].split("\t")
    if len(fields) == 2:
        return LAYOUT_UNLABELLED
    if len(fields) == 3:
        first, last = (LABEL_LIKE.fullmatch(fields[0].strip()), LABEL_LIKE.fullmatch(fields[2].strip()))
        if last and not first:
            return LAYOUT_2016
        if first and not last:
            return LAYOUT_2017
        raise DbqaFormatError(
            f"{path}:1: cannot tell the column order: expected a 0/1 label either first "
            "(label<TAB>question<TAB>sentence) or last (question<TAB>sentence<TAB>label)"
        )
    raise DbqaFormatError(f"{path}:1: expected 2 or 3 tab-separated fields, got {len(fields)}")


def _fields(
    line: str, number: int, layout: str, path: Path, repairs: list[Repair] | None
) -> tuple[str, str, int | None]:
    """(question, sentence, label) of one line; `repairs` collects repaired
    labels, None when the repair rule is off."""
    fields = line.split("\t")
    expected = 2 if layout == LAYOUT_UNLABELLED else 3
    if len(fields) != expected:
        shape = {LAYOUT_2016: "question<TAB>sentence<TAB>label", LAYOUT_2017: "label<TAB>question<TAB>sentence"}
        raise DbqaFormatError(
            f"{path}:{number}: expected {expected} tab-separated fields "
            f"({shape.get(layout, 'question<TAB>sentence')}, as on line 1), got {len(fields)}"
        )
    if layout == LAYOUT_UNLABELLED:
        question, sentence, label = fields[0], fields[1], None
    elif layout == LAYOUT_2016:
        question, sentence, label = fields[0], fields[1], _label(fields[2], number, path, repairs)
    else:
        question, sentence, label = fields[1], fields[2], _label(fields[0], number, path, repairs)
    question = question.strip()
    if not question:
        raise DbqaFormatError(f"{path}:{number}: the question is empty")
    return question, sentence.strip(), label


def _label(text: str, number: int, path: Path, repairs: list[Repair] | None) -> int:
    written = text.strip()
    if written in ("0", "1"):
        return int(written)
    if repairs is not None and REPAIRABLE_LABEL.fullmatch(written):
        repairs.append(Repair(number, written, int(written[0])))
        return int(written[0])
    hint = (
        "; --repair-labels reads a label of several 0/1 digits (such as `10`) as its first digit"
        if REPAIRABLE_LABEL.fullmatch(written)
        else ""
    )
    raise DbqaFormatError(f"{path}:{number}: label {written[:20]!r} is not 0 or 1{hint}")
