"""Reading NLPCC KBQA knowledge-base files: `subject ||| predicate ||| object`
lines to the same facts a PKU BASE triples file gives.

How NLPCC lines become PKU BASE terms (one rule, applied line by line, so a
47.9M-line file streams like a PKU BASE one):

- the subject becomes the entity `<subject>`, the predicate `<predicate>`
  (names go through the name codec like any PKU BASE name, so surrounding
  white space is dropped);
- the object becomes the literal `"object"`, always, verbatim. NLPCC objects
  are plain strings and an NLPCC answer is such a string, so a literal prints
  back as exactly the answer string. An object string that is also a subject
  stays a literal in the store (telling the two apart would need every
  subject known before the first object is written: a second pass over the
  file, or 8.7M names in memory on the full KB); it is linkable as that
  entity all the same, because the mention index holds every subject under
  its name (coqa.kb.loading.index_job): a question naming the string links to the
  entity `<string>`. NLPCC questions ask for one fact of one subject, so no
  query needs to join an object with a subject.

The mention index gets each subject under its name, its base name (the part
before a `（…）` or `(…)` qualifier, as in `联想thinkpad 40y7673（90w/交流电源）`)
and the alias inside a trailing bracket (coqa.kb.surfaces): NLPCC has no
mention2ent file, so subject names are all the mentions there are
(`SubjectFeeder`). Object values are not indexed as literal mentions, unlike
PKU BASE literals: an NLPCC question names a subject and asks for an object,
so a value found in a question only adds candidate queries that constrain by
a value (`?x <p> "value"`), never the asked one, and on the NLPCC KB, where
nearly every object is a literal, those entries would be most of the index.

Line rules (UTF-8; the repairs of PKU BASE lines apply: GB18030 text, byte
order mark, CRLF line end). Rejected, with the reason in the rejects file: a
line without exactly three ` ||| `-separated fields (fewer than three, or
` ||| ` inside the object, where the split is ambiguous), an empty or
white-space-only subject, predicate or object, bytes that are neither UTF-8
nor GB18030. Blank lines are counted as blank; a fact given twice is stored
once and counted as a duplicate.
"""

from __future__ import annotations

import re
from itertools import repeat
from pathlib import Path

from typing import Sequence

from coqa.kb.loading.formats import NLPCC_KB, LineError, Triple, clean_line_ends
from coqa.kb.loading.line_reading import LineReader
from coqa.kb.mention_index import MentionIndexBuilder
from coqa.kb.names import IRI_SAFE_CHARS, Term, canonical_name
from coqa.kb.loading.rejects import RejectsWriter
from coqa.kb.loading.triple_reading import TripleConsumer, TripleFileReader

SEPARATOR = " ||| "
SNIFF_BYTES = 1 << 16

# A line the fast path takes: subject and predicate are names the codec keeps
# as they are but for inner spaces (the regular names of
# coqa.kb.loading.triple_reading), the object has no character a regular PKU BASE
# literal cannot hold and no `|`, is not all white space, and nothing needs a
# repair. Such a line rewritten as `<s>\t<p>\t"o" .` is a regular PKU BASE
# line, which the store and the index take in bulk. Each part is a run of
# characters that cannot overlap the next, so a failing match is linear.
_NAME = rf"(?!\s)[{IRI_SAFE_CHARS} ]+(?<!\s)"
_OBJECT = r'[^\S\t\r\n]*[^"\\\s<>|][^"\\\t\r\n<>|]*'
_REGULAR_RUN = re.compile(rf"(?:(?!\ufeff){_NAME} \|\|\| {_NAME} \|\|\| {_OBJECT}\n)*")
_PKUBASE_SUBJECTS = re.compile(r"^<([^\t]*)>\t", re.M)
_NLPCC_LINE = re.compile(r"[^\t\n]*\S[^\n]* \|\|\| [^\n]* \|\|\| ")


def regular_lines_as_pkubase(lines: str) -> str:
    """Regular NLPCC lines (each with its "\\n") as regular PKU BASE lines
    `<s>\\t<p>\\t"o" .`. Done with whole-text splits and joins rather than a
    regex substitution (three times slower): a regular line holds exactly two
    separators and no "\\n" inside, so splitting at the separators gives
    s1, p1, "o1\\ns2", p2, ..., "on\\n", and each "\\n" sits between an
    object and the next subject."""
    pieces = lines.split(SEPARATOR)
    body = "".join(map("".join, zip(pieces[0::2], repeat(">\t<"), pieces[1::2], repeat('>\t"')))) + pieces[-1]
    return "<" + body.replace("\n", '" .\n<')[:-1]


def parse_nlpcc_line(text: str) -> tuple[Triple, list[str]]:
    """The fact on one line of an NLPCC KB file (without its "\\n") and the
    repairs applied; LineError if no rule can load it. Not for blank lines."""
    repairs: list[str] = []
    fields = clean_line_ends(text, repairs).split(SEPARATOR)
    if len(fields) < 3:
        raise LineError(f"{len(fields)} ' ||| '-separated field(s), expected 3 (subject, predicate, object)")
    if len(fields) > 3:
        raise LineError(f"{len(fields)} ' ||| '-separated fields: ' ||| ' inside a field")
    subject, predicate, obj = fields
    for role, field in (("subject", subject), ("predicate", predicate), ("object", obj)):
        if not field.strip():
            raise LineError(f"empty {role}")
    return Triple(subject, predicate, Term.literal(obj)), repairs


def is_nlpcc_kb_file(path: Path) -> bool:
    """True when the first non-blank line of the file is a `s ||| p ||| o` line."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(SNIFF_BYTES)
    except OSError:
        return False
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    return bool(_NLPCC_LINE.match(text))


class NlpccFileReader(TripleFileReader):
    """An NLPCC KB file, its facts handed to `consumer` as PKU BASE facts."""

    def __init__(self, path: Path, rejects: RejectsWriter, consumer: TripleConsumer) -> None:
        super().__init__(path, NLPCC_KB, rejects, consumer)

    def text_block(self, text: str) -> None:
        """Runs of regular lines are rewritten as regular PKU BASE lines in one
        regex substitution each; the other lines go one by one through `line`."""
        if not text.endswith("\n"):
            text += "\n"  # the file's last line
        position = 0
        while (start := _REGULAR_RUN.match(text, position).end()) < len(text):  # type: ignore[union-attr]
            self._take_run(text[position:start])
            end = text.index("\n", start)
            self.line(text[start:end], [])
            position = end + 1
        self._take_run(text[position:])

    def _take_run(self, lines: str) -> None:
        if lines:
            self._take_regular(regular_lines_as_pkubase(lines))

    def parse(self, text: str) -> list[str]:
        triple, repairs = parse_nlpcc_line(text)
        self._parsed.append(triple)
        return repairs


class SubjectFeeder:
    """Feeds the subject names of an NLPCC KB file's facts to the mention
    index builder (a coqa.kb.loading.triple_reading.TripleConsumer). A subject's
    lines are usually together, so names are de-duplicated per block; the
    builder de-duplicates the rest."""

    def __init__(self, builder: MentionIndexBuilder) -> None:
        self.builder = builder

    def take(self, regular: str, triples: Sequence[Triple]) -> None:
        names = _PKUBASE_SUBJECTS.findall(regular) + [canonical_name(triple.subject) for triple in triples]
        self.builder.add_entities(list(dict.fromkeys(names)))


def triple_file_reader(path: Path, kind: str, rejects: RejectsWriter, consumer: TripleConsumer) -> LineReader:
    """The reader of a file of facts of this kind: NLPCC KB or PKU BASE triples/types."""
    if kind == NLPCC_KB:
        return NlpccFileReader(path, rejects, consumer)
    return TripleFileReader(path, kind, rejects, consumer)
