"""Question, CCKS and result files: reading them, telling their formats
apart, and the result-line format (coqa.gold reads gold SPARQL).

A CCKS file holds blocks separated by blank lines (lines that are empty or
hold only white space): `qN:question`, the gold SPARQL (one or more lines),
then the gold answers tab-separated. A plain question file holds one question
per line, `qN:` optional. An NLPCC KBQA file holds `<question id=N>\tquestion`
lines (training files add `<triple id=N>\tsubject ||| predicate ||| object`
and `<answer id=N>\tanswer` lines), records separated by lines of `=`.

An NLPCC record is read into the same `GoldQuestion` as a CCKS block, in the
terms the NLPCC knowledge base is loaded as (coqa.kb.loading.nlpcc_reading: subjects
are entities, objects literals): the gold triple gives the gold SPARQL
`SELECT ?x WHERE { <subject> <predicate> ?x . }`, the answer line the gold
answer `"answer"` (the literal that query returns). NLPCC answers are the
literal values without quotes, a line of them split at ` | ` (`nlpcc_answers`);
an NLPCC submission answers each question as `<question id=N>\tquestion`,
`<answer id=N>\ta1 | a2` (best first) and a line of `=` (`format_nlpcc_record`).

Lines end at LF (or CRLF); a lone carriage return is a character of its line.
A result line holds one question's answers separated by tabs; inside an
answer, a tab, LF and CR are written as the two characters `\t`, `\n`, `\r`
(`escape_field`), everything else (backslashes included) as it is. Answers
are compared in that written form, so they read back as they were written.
"""

from __future__ import annotations

import re
from enum import Enum
from dataclasses import dataclass
from pathlib import Path
from itertools import islice
from typing import Iterable, Iterator

_QUESTION_PREFIX = re.compile(r"^\s*q\d+\s*[:：]\s*", re.I)
_SPARQL_START = re.compile(r"^\s*(select|ask|prefix|base)\b", re.I)
_NLPCC_QUESTION = re.compile(r"^\s*<question id=\s*\d+\s*>", re.I)
_NLPCC_FIELD = re.compile(r"^\s*<(question|triple|answer) id=\s*(\d+)\s*>[ \t]?(.*)$", re.I)
_NLPCC_SEPARATOR = re.compile(r"^\s*=+\s*$")
NLPCC_ANSWER_SEPARATOR = " | "
_NLPCC_TRIPLE_SPLIT = re.compile(r"\s*\|\|\|\s*")
NLPCC_RECORD_END = "=" * 50
_FIELD_ESCAPES = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})



class QuestionFormat(Enum):
    """The format of a question file: one question per line, CCKS blocks, or NLPCC KBQA records."""

    PLAIN = "plain"
    CCKS = "ccks"
    NLPCC = "nlpcc"


def strip_question_prefix(line: str) -> str:
    """A question line without its `qN:` label and surrounding white space."""
    return _QUESTION_PREFIX.sub("", line, count=1).strip()


@dataclass(frozen=True)
class GoldQuestion:
    """One question of a CCKS file with its gold SPARQL and answers."""

    number: int
    question: str
    sparql: str
    answers: tuple[str, ...]


class DatasetError(ValueError):
    """A CCKS file that cannot be read; the message names the file and line."""


def read_text(path: str | Path) -> str:
    """A UTF-8 text file (BOM dropped, CRLF read as LF, a lone CR kept as a
    character); DatasetError with a one-line reason when it cannot be read."""
    path = Path(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            return handle.read().replace("\r\n", "\n")
    except OSError as error:
        raise DatasetError(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path} is not UTF-8 text") from None


def read_lines(path: str | Path) -> list[str]:
    """The lines of a UTF-8 text file, empty lines kept. Only the newline
    ending the last line is dropped; an empty file has no lines."""
    text = read_text(path)
    if text == "":
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def read_ccks(path: str | Path) -> list[GoldQuestion]:
    """All questions of a CCKS-format file, in file order. A block that does
    not start with a `qN:` line, or holds a second one (a missing blank line
    between two questions), is refused with its line number."""
    return parse_ccks(read_lines(path), path)


def parse_ccks(lines: list[str], path: str | Path) -> list[GoldQuestion]:
    """`read_ccks` over the lines of the file at `path` (named in errors)."""
    return [_gold_question(block, Path(path), number) for number, block in enumerate(_blocks(lines), start=1)]


def _blocks(lines: list[str]) -> Iterator[list[tuple[int, str]]]:
    """The runs of non-blank lines, each line with its number (from 1)."""
    block: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            block.append((number, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def _gold_question(block: list[tuple[int, str]], path: Path, number: int) -> GoldQuestion:
    (start, first), rest = block[0], block[1:]
    if not _QUESTION_PREFIX.match(first):
        raise DatasetError(f"{path}:{start}: a question block must start with a qN: question line")
    for line_number, line in rest:
        if _QUESTION_PREFIX.match(line):
            raise DatasetError(
                f"{path}:{line_number}: a second question in the block that starts at line {start}: "
                "separate the questions with an empty line"
            )
    if not rest:
        raise DatasetError(f"{path}:{start}: a question block needs a question and a SPARQL line")
    lines = [line for _, line in rest]
    answers: tuple[str, ...]
    if len(lines) == 1:
        sparql, answers = lines[0], ()
    else:
        sparql = " ".join(line.strip() for line in lines[:-1])
        answers = tuple(a.strip() for a in lines[-1].split("\t") if a.strip())
    return GoldQuestion(number, strip_question_prefix(first), sparql.strip(), answers)


def file_format(lines: list[str]) -> QuestionFormat:
    """The format of a question or gold file from its first non-blank lines:
    NLPCC when it is a `<question id=N>` line, CCKS when it is a `qN:` line
    followed by a SPARQL query, else PLAIN (one question or answer line per line)."""
    filled = list(islice((line for line in lines if line.strip()), 2))
    if filled and _NLPCC_QUESTION.match(filled[0]):
        return QuestionFormat.NLPCC
    if len(filled) == 2 and _QUESTION_PREFIX.match(filled[0]) and _SPARQL_START.match(filled[1]):
        return QuestionFormat.CCKS
    return QuestionFormat.PLAIN


def nlpcc_gold_sparql(subject: str, predicate: str) -> str:
    """The gold SPARQL of an NLPCC gold triple (its object is the answer)."""
    return f"SELECT ?x WHERE {{ <{subject.strip()}> <{predicate.strip()}> ?x . }}"


def parse_nlpcc(lines: list[str], path: str | Path) -> list[GoldQuestion]:
    """The records of an NLPCC KBQA file (lines of the file at `path`, named
    in errors) in file order, numbered by their ids. A record starts at its
    `<question id=N>` line; its `<triple id=N>` and `<answer id=N>` lines
    (optional: a question file has none) must carry the same id. Lines of `=`
    and blank lines separate records; any other line is refused with its
    line number."""
    records: list[dict[str, object]] = []
    for line_number, line in enumerate(lines, start=1):
        if not line.strip() or _NLPCC_SEPARATOR.match(line):
            continue
        match = _NLPCC_FIELD.match(line)
        if not match:
            raise DatasetError(f"{path}:{line_number}: expected a <question id=N>, <triple id=N> or <answer id=N> line")
        field, number, value = match.group(1).lower(), int(match.group(2)), match.group(3).strip()
        if field == "question":
            records.append({"number": number, "question": value})
            continue
        if not records or records[-1]["number"] != number or field in records[-1]:
            raise DatasetError(f"{path}:{line_number}: <{field} id={number}> does not belong to the question before it")
        records[-1][field] = _nlpcc_field(field, value, f"{path}:{line_number}")
    return [
        GoldQuestion(
            int(record["number"]),  # type: ignore[call-overload]
            str(record["question"]),
            str(record.get("triple", "")),
            tuple(record.get("answer", ())),  # type: ignore[arg-type]
        )
        for record in records
    ]


def _nlpcc_field(field: str, value: str, where: str) -> object:
    """The gold SPARQL of a triple line (none when its subject or predicate
    is empty, as in a few NLPCC training records), the gold answers of an
    answer line."""
    if field == "answer":
        return (f'"{value}"',) if value else ()
    parts = _NLPCC_TRIPLE_SPLIT.split(value, maxsplit=2)  # the object may be empty
    if len(parts) != 3:
        raise DatasetError(f"{where}: a gold triple must be `subject ||| predicate ||| object`")
    if not parts[0].strip() or not parts[1].strip():
        return ""
    return nlpcc_gold_sparql(parts[0], parts[1])


def read_gold_questions(path: str | Path) -> list[GoldQuestion]:
    """The labelled questions of a CCKS file or of an NLPCC KBQA file (for
    `coqa train` and `coqa eval`); DatasetError for a file that is neither."""
    lines = read_lines(path)
    if file_format(lines) == QuestionFormat.NLPCC:
        return parse_nlpcc(lines, path)
    return parse_ccks(lines, path)


@dataclass(frozen=True)
class QuestionFile:
    """The questions of a file given to `coqa answer`, the format they were
    read from and, for NLPCC, each question's id."""

    questions: list[str]
    kind: QuestionFormat
    ids: tuple[int, ...] = ()


def read_question_file(path: str | Path) -> QuestionFile:
    """The questions of a plain question file (one per line, `qN:` stripped,
    empty lines kept: each input line gets one answer line), of a CCKS file
    (the question of each block) or of an NLPCC file (each record's question
    and id)."""
    lines = read_lines(path)
    kind = file_format(lines)
    if kind == QuestionFormat.NLPCC:
        records = parse_nlpcc(lines, path)
        return QuestionFile([record.question for record in records], QuestionFormat.NLPCC, tuple(r.number for r in records))
    if kind == QuestionFormat.CCKS:
        return QuestionFile([question.question for question in parse_ccks(lines, path)], QuestionFormat.CCKS)
    return QuestionFile([strip_question_prefix(line) for line in lines], QuestionFormat.PLAIN)


def term_value(term: str) -> str:
    """The value of a PKU BASE term string: `"literal"` and `<name>` without
    their quotes or brackets; anything else as it is."""
    if len(term) >= 2 and (term[0], term[-1]) in (('"', '"'), ("<", ">")):
        return term[1:-1]
    return term


def nlpcc_answers(terms: Iterable[str]) -> list[str]:
    """NLPCC answer strings of answer terms, in order: each term's value split
    at ` | ` (an NLPCC answer line lists several answers so), empty parts dropped."""
    return [part for term in terms for part in term_value(term).split(NLPCC_ANSWER_SEPARATOR) if part.strip()]


def format_nlpcc_record(number: int, question: str, answers: Iterable[str]) -> str:
    """One question of an NLPCC submission: `<question id=N>`, `<answer id=N>`
    with the NLPCC answers of the answer terms joined by ` | ` (best first),
    and the line of `=` that ends a record; tabs and line breaks inside a
    field are written as `\t`, `\n`, `\r`."""
    shown = NLPCC_ANSWER_SEPARATOR.join(escape_field(answer) for answer in nlpcc_answers(answers))
    return f"<question id={number}>\t{escape_field(question)}\n<answer id={number}>\t{shown}\n{NLPCC_RECORD_END}\n"


def escape_field(text: str) -> str:
    """`text` as a field of a tab-separated line: tab, LF and CR written as
    `\\t`, `\\n`, `\\r`; other characters (backslashes included) as they are."""
    return text.translate(_FIELD_ESCAPES)


def format_result_line(answers: Iterable[str]) -> str:
    """The result-file line of one question: its answers, each `escape_field`ed,
    separated by tabs; the empty string when there is none."""
    return "\t".join(escape_field(answer) for answer in answers)

