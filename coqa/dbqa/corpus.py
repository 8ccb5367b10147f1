"""Text a DBQA lexicon learns words from besides its training file
(`coqa train --task nlpcc-dbqa --lexicon-text FILE`).

Two kinds of file are read, recognised from their content:
- an NLPCC KBQA knowledge base (`subject ||| predicate ||| object` lines):
  each line gives one text, its three fields joined by spaces. Only the
  co-occurrence of words is learnt from it: its facts (some of them
  distractors, not true) are never shown or used as knowledge;
- an NLPCC KBQA question file (`<question id=N>` records): each question is
  one text; triples and answers are not read.

Anything else is refused with a DatasetError naming the file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from coqa.dataset import DatasetError, parse_nlpcc, read_lines
from coqa.kb.loading.nlpcc_reading import SEPARATOR, is_nlpcc_kb_file


def read_lexicon_text(path: str | Path) -> list[str]:
    """The texts of one file, in file order (blank lines skipped)."""
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file (--lexicon-text)")
    if is_nlpcc_kb_file(path):
        return [" ".join(line.split(SEPARATOR)) for line in read_lines(path) if line.strip()]
    try:
        records = parse_nlpcc(read_lines(path), path)
    except DatasetError as error:
        raise DatasetError(f"{error} (--lexicon-text takes an NLPCC KBQA knowledge base or question file)") from None
    return [record.question for record in records]


def texts_digest(texts: Sequence[str]) -> str:
    """The sha256 of texts as read (recorded in meta.json)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8") + b"\n")
    return digest.hexdigest()
