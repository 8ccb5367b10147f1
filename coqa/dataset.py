"""CCKS question files: reading them (coqa.gold reads their SPARQL).

A CCKS file holds blocks separated by blank lines: `qN:question`, the gold
SPARQL (one or more lines), then the gold answers tab-separated. A plain
question file holds one question per line, `qN:` optional.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

_QUESTION_PREFIX = re.compile(r"^\s*q\d+\s*[:：]\s*", re.I)


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
    """A UTF-8 text file (BOM dropped, CRLF read as LF); DatasetError with a
    one-line reason when it cannot be read."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
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
    """All questions of a CCKS-format file, in file order."""
    path = Path(path)
    return list(_parse_blocks(read_text(path), path))


def _parse_blocks(text: str, path: Path) -> Iterator[GoldQuestion]:
    line_number = 0
    number = 0
    for block in text.split("\n\n"):
        lines = [line for line in block.split("\n") if line.strip()]
        start = line_number + block[: len(block) - len(block.lstrip("\n"))].count("\n") + 1
        line_number += block.count("\n") + 2
        if not lines:
            continue
        if len(lines) < 2:
            raise DatasetError(f"{path}:{start}: a question block needs a question and a SPARQL line")
        question = strip_question_prefix(lines[0])
        if len(lines) == 2:
            sparql, answers = lines[1], ()
        else:
            sparql = " ".join(line.strip() for line in lines[1:-1])
            answers = tuple(a.strip() for a in lines[-1].split("\t") if a.strip())
        number += 1
        yield GoldQuestion(number, question, sparql.strip(), answers)


def read_questions(path: str | Path) -> list[str]:
    """Questions of a plain question file: one per line, `qN:` stripped, empty
    lines kept (each input line gets one answer line)."""
    return [strip_question_prefix(line) for line in read_lines(path)]

