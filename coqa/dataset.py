"""Question, CCKS and result files: reading them, telling their formats
apart, the result-line format, and the triple patterns of gold SPARQL.

A CCKS file holds blocks separated by blank lines (lines that are empty or
hold only white space): `qN:question`, the gold SPARQL (one or more lines),
then the gold answers tab-separated. A plain question file holds one question
per line, `qN:` optional. An NLPCC KBQA file holds `<question id=N>\tquestion`
lines (training files add `<triple id=N>` and `<answer id=N>` lines).

Lines end at LF (or CRLF); a lone carriage return is a character of its line.
A result line holds one question's answers separated by tabs; inside an
answer, a tab, LF and CR are written as the two characters `\t`, `\n`, `\r`
(`escape_field`), everything else (backslashes included) as it is. Answers
are compared in that written form, so they read back as they were written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from itertools import islice
from typing import Iterable, Iterator

_QUESTION_PREFIX = re.compile(r"^\s*q\d+\s*[:：]\s*", re.I)
_SPARQL_START = re.compile(r"^\s*(select|ask|prefix|base)\b", re.I)
_NLPCC_QUESTION = re.compile(r"^\s*<question id=\s*\d+\s*>", re.I)
_FIELD_ESCAPES = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})

PLAIN, CCKS, NLPCC = "plain", "ccks", "nlpcc"
_TERM = re.compile(r'<[^<>\n]*>|\?\w+|"(?:[^"\\]|\\.)*"(?:\^\^<[^>]*>"?|@[\w-]+)?|\'[^\']*\'')
_BODY = re.compile(r"\{(.*)\}", re.S)


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
    if len(lines) == 1:
        sparql, answers = lines[0], ()
    else:
        sparql = " ".join(line.strip() for line in lines[:-1])
        answers = tuple(a.strip() for a in lines[-1].split("\t") if a.strip())
    return GoldQuestion(number, strip_question_prefix(first), sparql.strip(), answers)


def file_format(lines: list[str]) -> str:
    """The format of a question or gold file from its first non-blank lines:
    NLPCC when it is a `<question id=N>` line, CCKS when it is a `qN:` line
    followed by a SPARQL query, else PLAIN (one question or answer line per line)."""
    filled = list(islice((line for line in lines if line.strip()), 2))
    if filled and _NLPCC_QUESTION.match(filled[0]):
        return NLPCC
    if len(filled) == 2 and _QUESTION_PREFIX.match(filled[0]) and _SPARQL_START.match(filled[1]):
        return CCKS
    return PLAIN


@dataclass(frozen=True)
class QuestionFile:
    """The questions of a file given to `coqa answer`, and the format they were read from."""

    questions: list[str]
    kind: str  # PLAIN or CCKS


def read_question_file(path: str | Path) -> QuestionFile:
    """The questions of a plain question file (one per line, `qN:` stripped,
    empty lines kept: each input line gets one answer line) or of a CCKS file
    (the question of each block). An NLPCC file is refused with DatasetError
    (coqa does not answer NLPCC questions yet)."""
    lines = read_lines(path)
    kind = file_format(lines)
    if kind == NLPCC:
        raise DatasetError(
            f"{path} is an NLPCC KBQA file (<question id=N> lines), which coqa cannot answer yet: "
            "give a file with one question per line or a CCKS file"
        )
    if kind == CCKS:
        return QuestionFile([question.question for question in parse_ccks(lines, path)], CCKS)
    return QuestionFile([strip_question_prefix(line) for line in lines], PLAIN)


def escape_field(text: str) -> str:
    """`text` as a field of a tab-separated line: tab, LF and CR written as
    `\\t`, `\\n`, `\\r`; other characters (backslashes included) as they are."""
    return text.translate(_FIELD_ESCAPES)


def format_result_line(answers: Iterable[str]) -> str:
    """The result-file line of one question: its answers, each `escape_field`ed,
    separated by tabs; the empty string when there is none."""
    return "\t".join(escape_field(answer) for answer in answers)


def gold_triples(sparql: str) -> list[tuple[str, str, str]]:
    """The triple patterns of a (possibly sloppy) gold SPARQL query, as term
    strings (`<name>`, `?var`, `"literal"`). Missing dots are tolerated;
    FILTER and other non-triple clauses are skipped."""
    match = _BODY.search(sparql)
    if not match:
        return []
    body = re.sub(r"(?i)\bfilter\s*\(.*?\)\s*\.?", " ", match.group(1))
    terms = [t.group(0) for t in _TERM.finditer(body)]
    return [tuple(terms[i : i + 3]) for i in range(0, len(terms) - len(terms) % 3, 3)]  # type: ignore[misc]
