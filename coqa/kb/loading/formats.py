"""PKU BASE file formats: one line in, one fact out, or a reason why not.

Two line formats (UTF-8, one record per line):

- triples and types files (`pkubase-triples*`, `pkubase-types*`):
  `<subject>\\t<predicate>\\t<object> .` where the object is `<entity>` or
  `"literal"`;
- mention files (`pkubase-mention2ent*`): `mention\\tentity\\trank`.

Terms are kept verbatim. A name is everything between the field's `<` and its
final `>` (a trailing space as in `<2008年北京奥运会 >` included; the name
codec, coqa.kb.names, then trims surrounding white space, so both spellings
are one entity). A literal is everything between the first and the LAST `"`
of its field, so the PKU BASE literal
`"87"^^<http://www.w3.org/2001/XMLSchema#float>"` has the value
`87"^^<http://www.w3.org/2001/XMLSchema#float>` and `str(Term)` gives back the
original field. Backslashes are not unescaped (`\\n` stays two characters).
Names may hold spaces, quotes, `|`, `^`, `{`, backslashes: the codec stores
any string.

Repair rules (the line is loaded and counted as *repaired*, per reason):

- ``decoded as GB18030``: a line that is not valid UTF-8 but is valid GB18030
  (a superset of GBK and GB2312) is decoded as such;
- ``byte order mark``: a UTF-8 BOM at the start of a line is dropped;
- ``CRLF line end``: carriage returns at the end of a line are dropped;
- ``trailing white space``: spaces and tabs after the final `.` are dropped;
- ``missing space before '.'`` / ``missing ' .'``: the terminator is optional;
- ``tab inside a term``: a line with more than three tab-separated fields is
  re-split so that the subject and the predicate are the shortest `<...>`
  runs of fields and the object is the rest (a literal or name holding a tab);
- ``entity in angle brackets`` (mention files): `<name>` becomes `name`.

Lines that are empty or white space only are counted as *blank*. Every other
line that breaks a rule below raises `LineError` with the reason; the loader
writes it to the rejects file: fewer than three fields (`<s>\\t<p>`), a term
that is not closed (a line cut short), an empty or white-space-only name,
text after a literal's closing quote (typed or language-tagged literals are
not PKU BASE), bytes that are neither UTF-8 nor GB18030, a mention line
without exactly three fields, with a mention or entity that is empty or white
space only, or with a rank that is not a whole number of 1 to 9 digits.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from coqa.kb.names import Term

TRIPLES, TYPES, MENTIONS = "triples", "types", "mention2ent"
# NLPCC KBQA knowledge-base files (`subject ||| predicate ||| object`), read
# by coqa.kb.loading.nlpcc_reading into the same facts as a triples file.
NLPCC_KB = "nlpcc-kb"
FILE_PREFIXES = {"pkubase-triples": TRIPLES, "pkubase-types": TYPES, "pkubase-mention2ent": MENTIONS}

BOM = "\ufeff"
DECODED_GB18030 = "decoded as GB18030"
# A rank is 1 to MAX_RANK_DIGITS ASCII digits (PKU BASE ranks are small; a
# longer one is a broken line, and Python's int() refuses 4,300 digits).
MAX_RANK_DIGITS = 9
_RANK = re.compile(f"[0-9]{{1,{MAX_RANK_DIGITS}}}")
BAD_RANK = f"rank is not a whole number of 1 to {MAX_RANK_DIGITS} digits"


class LineError(ValueError):
    """A line that no repair rule can load; the message is the reason."""


class Triple(NamedTuple):
    """A fact of a triples or types file: subject and predicate are names."""

    subject: str
    predicate: str
    object: Term


class Mention(NamedTuple):
    """A mention2ent line: `mention` may name `entity`; rank 1 is the most likely."""

    mention: str
    entity: str
    rank: int


def kind_of_file(file_name: str) -> str | None:
    """The kind of PKU BASE file a file name announces, or None."""
    for prefix, kind in FILE_PREFIXES.items():
        if file_name.startswith(prefix):
            return kind
    return None


def decode_line(raw: bytes) -> tuple[str, list[str]]:
    """Text of a raw line and the repairs applied (GB18030 when not UTF-8)."""
    try:
        return raw.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("gb18030"), [DECODED_GB18030]
    except UnicodeDecodeError:
        raise LineError("neither UTF-8 nor GB18030 text") from None


def is_blank(text: str) -> bool:
    """True for a line holding nothing but white space (or a BOM)."""
    return not text.strip(" \t\r\f\v" + BOM)


def clean_line_ends(text: str, repairs: list[str]) -> str:
    """`text` without a leading byte order mark and trailing carriage
    returns, each noted in `repairs`."""
    if text.startswith(BOM):
        text = text.lstrip(BOM)
        repairs.append("byte order mark")
    if text.endswith("\r"):
        text = text.rstrip("\r")
        repairs.append("CRLF line end")
    return text


def _strip_terminator(text: str, repairs: list[str]) -> str:
    stripped = text.rstrip(" \t")
    if stripped != text:
        repairs.append("trailing white space")
    if stripped.endswith(" ."):
        return stripped[:-2]
    if stripped.endswith(".") and stripped[-2:-1] in (">", '"'):
        repairs.append("missing space before '.'")
        return stripped[:-1]
    if stripped.endswith((">", '"')):
        repairs.append("missing ' .'")
    return stripped


def _take_name_fields(fields: list[str], start: int) -> int:
    """Index just past the shortest run of fields from `start` that forms `<...>`."""
    end = start + 1
    while end < len(fields) and not "\t".join(fields[start:end]).endswith(">"):
        end += 1
    return end


def _split_fields(body: str, repairs: list[str]) -> tuple[str, str, str]:
    fields = body.split("\t")
    if len(fields) < 3:
        raise LineError(f"{len(fields)} tab-separated field(s), expected 3 (subject, predicate, object)")
    if len(fields) == 3:
        return fields[0], fields[1], fields[2]
    subject_end = _take_name_fields(fields, 0)
    predicate_end = _take_name_fields(fields, subject_end)
    if predicate_end >= len(fields):
        raise LineError(f"{len(fields)} tab-separated fields that do not re-split into subject, predicate, object")
    repairs.append("tab inside a term")
    return "\t".join(fields[:subject_end]), "\t".join(fields[subject_end:predicate_end]), "\t".join(fields[predicate_end:])


def _name(field: str, role: str) -> str:
    if not field.startswith("<"):
        raise LineError(f"{role} is not a <name>")
    if len(field) < 2 or not field.endswith(">"):
        raise LineError(f"{role} <name> is not closed (line cut short?)")
    name = field[1:-1]
    if not name.strip():
        raise LineError(f"{role} is an empty name")
    return name


def _object(field: str) -> Term:
    if field.startswith('"'):
        last = field.rfind('"')
        if last == 0:
            raise LineError("literal is not closed (line cut short?)")
        if last != len(field) - 1:
            raise LineError("text after the literal's closing quote (typed or tagged literal?)")
        return Term.literal(field[1:last])
    if field.startswith("<"):
        return Term.entity(_name(field, "object"))
    raise LineError('object is neither <name> nor "literal"')


def parse_triple_line(text: str) -> tuple[Triple, list[str]]:
    """The triple on one line of a triples/types file (without its "\\n") and
    the repairs applied; LineError if no rule can load it. Not for blank lines."""
    repairs: list[str] = []
    body = _strip_terminator(clean_line_ends(text, repairs), repairs)
    subject, predicate, obj = _split_fields(body, repairs)
    return Triple(_name(subject, "subject"), _name(predicate, "predicate"), _object(obj)), repairs


def parse_mention_line(text: str) -> tuple[Mention, list[str]]:
    """The mention on one line of a mention2ent file (without its "\\n") and
    the repairs applied; LineError if no rule can load it. Not for blank lines."""
    repairs: list[str] = []
    fields = clean_line_ends(text, repairs).split("\t")
    if len(fields) != 3:
        raise LineError(f"{len(fields)} tab-separated field(s), expected 3 (mention, entity, rank)")
    mention, entity, rank = fields
    if not mention.strip():
        raise LineError("empty mention")
    if len(entity) > 2 and entity.startswith("<") and entity.endswith(">"):
        entity = entity[1:-1]
        repairs.append("entity in angle brackets")
    if not entity.strip():  # the codec trims names: nothing would be left
        raise LineError("empty entity")
    if not _RANK.fullmatch(rank):
        raise LineError(BAD_RANK)
    return Mention(mention, entity, int(rank)), repairs
