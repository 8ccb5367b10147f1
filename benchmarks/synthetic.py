"""Synthetic PKU-BASE-shaped (or NLPCC-shaped) files for the speed and scale benchmarks.

    python benchmarks/synthetic.py --triples N --out DIR [--mentions M] [--seed S]
    python benchmarks/synthetic.py --format nlpcc --triples N --out DIR [--seed S]

writes DIR/pkubase-triples.txt, DIR/pkubase-types.txt and
DIR/pkubase-mention2ent.txt in PKU BASE's formats. The output is a pure
function of (N, M, seed), and it is streamed: memory stays flat whatever N is
(entity names are computed from their ids by hashing, never stored).

Shape: every constant below was fitted on the real slice in
../shared/data/pkubase-bench (69,991 triples, 20,580 type lines, 59,581
mention lines), unless its comment says it was chosen. The slice under-counts
literals (its README: literal triples were mostly not published), so
LITERAL_SHARE is low compared with the full PKU BASE; pass --literal-share to
change it.

`--format nlpcc` writes DIR/nlpcc-kb.txt instead: N lines
`subject ||| predicate ||| object` shaped like the NLPCC KBQA knowledge base
(constants under "NLPCC" below), streamed and deterministic the same way.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TextIO

import numpy as np

TRIPLES_FILE = "pkubase-triples.txt"
TYPES_FILE = "pkubase-types.txt"
MENTIONS_FILE = "pkubase-mention2ent.txt"

# --- fitted on pkubase-bench/pkubase-triples.txt --------------------------
# ln(out-degree) of the 24,163 subjects: mean 0.833, std 0.645 (mean degree 2.9).
OUT_DEGREE_LOGNORMAL = (0.833, 0.645)
MEAN_OUT_DEGREE = 2.9
MAX_OUT_DEGREE = 500
# Entity in-degree against rank, log-log slope over ranks 10..n/2: -1.17.
OBJECT_ZIPF = 1.17
# 1,635 predicates for 69,991 triples; predicate frequency against rank: slope -1.40.
PREDICATES_PER_TRIPLE = 1635 / 69991
PREDICATE_ZIPF = 1.40
# 4,249 of 69,991 objects are literals; 85 of them look typed (`"1000"^^<…#float>"`).
LITERAL_SHARE = 0.061
TYPED_LITERAL_SHARE = 0.02
# ln(literal length): mean 2.115, std 1.339 (median 6, 4% over 200, max 4,672).
LITERAL_LENGTH_LOGNORMAL = (2.115, 1.339)
MAX_LITERAL_LENGTH = 5000
# Literals that are plain ASCII (numbers, codes, dates): 22.9%.
ASCII_LITERAL_SHARE = 0.229
# Literals holding unescaped inner quotes: 3.4%; holding a `\\n` sequence: 0.35%.
QUOTED_LITERAL_SHARE = 0.034
BACKSLASH_LITERAL_SHARE = 0.0035

# --- fitted on the 26,980 entity names of pkubase-triples.txt ------------
# 16.3% carry a `_（…）` description.
DESCRIPTION_SHARE = 0.163
# ln(length) of names without a description: mean 1.616, std 0.560 (median 5).
PLAIN_NAME_LENGTH_LOGNORMAL = (1.616, 0.560)
# ln(length) of the part before `_（`: mean 1.062, std 0.385 (median 3).
BASE_NAME_LENGTH_LOGNORMAL = (1.062, 0.385)
# ln(length) of the text inside `_（…）`: mean 2.043, std 0.515 (median 8).
# One-character names: 0.13% of the names without a description, 1.36% of base names.
ONE_CHAR_NAME_SHARE = 0.0013
ONE_CHAR_BASE_SHARE = 0.0136
DESCRIPTION_LENGTH_LOGNORMAL = (2.043, 0.515)
# Names that are plain ASCII: 3.5%; names with a middle dot (foreign names): 25%.
ASCII_NAME_SHARE = 0.035
DOT_NAME_SHARE = 0.25
# Names with an inner space: 3.9%; with double quotes: 0.04%; with `\\` or `{`: 0.007%.
SPACE_NAME_SHARE = 0.039
QUOTE_NAME_SHARE = 0.0004
BACKSLASH_NAME_SHARE = 0.00007
BRACE_NAME_SHARE = 0.00007
# Chosen, not fitted: the slice has no names with `|`, `^` or a trailing space,
# the full PKU BASE does (`<2008年北京奥运会 >`); one in 10,000 names each.
PIPE_NAME_SHARE = 0.0001
CARET_NAME_SHARE = 0.0001
TRAILING_SPACE_NAME_SHARE = 0.0001
# 3,651 distinct CJK characters; frequency of rank r fitted as (r + 50)**-1.45
# (Zipf-Mandelbrot; top character 2.5%, top 100 43%, top 1,000 91%).
CJK_VOCABULARY = 3651
CJK_ZIPF = 1.45
CJK_ZIPF_OFFSET = 50
# Predicate names: ln(length) mean 1.229, std 0.397 (median 3); 0.49% have one character.
PREDICATE_LENGTH_LOGNORMAL = (1.229, 0.397)
ONE_CHAR_PREDICATE_SHARE = 0.0049

# --- fitted on pkubase-bench/pkubase-types.txt -----------------------------
# 17,008 of 26,980 entities have a type; 1.21 types each, P(k+1)/P(k) ~ 0.17.
TYPED_ENTITY_SHARE = 0.63
EXTRA_TYPE_RATIO = 0.17
# 216 distinct types, frequency against rank: slope -2.0 (top type 59%).
TYPE_VOCABULARY = 216
TYPE_ZIPF = 2.0
TYPE_NAME_LENGTH_LOGNORMAL = (1.320, 0.628)
TYPE_PREDICATE = "类型"

# --- fitted on pkubase-bench/pkubase-mention2ent.txt ------------------------
# 59,581 lines for 24,143 entities: 2.47 lines per entity.
MENTIONS_PER_ENTITY = 2.47
# Entities per mention: 56,188 x1, 1,367 x2, 129 x3, 25 x4 -> Zipf exponent 5.3.
ENTITIES_PER_MENTION_ZIPF = 5.3
MAX_ENTITIES_PER_MENTION = 100
# Share of lines whose mention is the entity's full name: 33.3%; its base name: 7.2%.
MENTION_IS_NAME_SHARE = 0.333
MENTION_IS_BASE_SHARE = 0.072
# ln(length) of the other mentions (aliases): mean 1.939, std 0.741; 0.27% of
# all mentions have one character.
ALIAS_LENGTH_LOGNORMAL = (1.939, 0.741)
ONE_CHAR_MENTION_SHARE = 0.0027
# 4 of 59,581 lines have an empty mention.
EMPTY_MENTION_SHARE = 0.00007
# Mention lines per triple in the slice (used when --mentions is not given).
MENTIONS_PER_TRIPLE = 59581 / 69991

# --- NLPCC: fitted on ../shared/data/nlpcc-kbqa/nlpcc-kbqa-kb.txt ------------
# (113,478 triples, 18,800 subjects, 4,606 predicates) unless the comment says otherwise.
NLPCC_FILE = "nlpcc-kb.txt"
# Out-degree: the compact KB gives every subject about 6 (it was built so);
# the full NLPCC KB has 47.9M triples for 8.7M subjects: mean 5.5. Chosen: a
# lognormal with that mean and the spread of PKU BASE's (std of ln 0.645).
NLPCC_OUT_DEGREE_LOGNORMAL = (math.log(5.5) - 0.645**2 / 2, 0.645)
# ln(length) of subject names: mean 1.702, std 0.633 (median 5); ASCII 4.8%;
# a `（…）` or `(…)` qualifier: 1.8%.
NLPCC_SUBJECT_LENGTH_LOGNORMAL = (1.702, 0.633)
NLPCC_ASCII_SUBJECT_SHARE = 0.048
NLPCC_QUALIFIER_SHARE = 0.018
# 4,606 predicates for 113,478 triples; frequency against rank: slope -0.92.
NLPCC_PREDICATES_PER_TRIPLE = 4606 / 113478
NLPCC_PREDICATE_ZIPF = 0.92
# Objects that are also a subject's name: 5.7%.
NLPCC_OBJECT_IS_SUBJECT_SHARE = 0.057
# ln(length) of the other objects: mean 1.845, std 0.813 (median 6, max 680);
# ASCII 16.6%; with an inner space 13.2%; with a `"` 0.12%, `<` or `>` 0.12%,
# `|` 0.07%, `\\` 0.06%.
NLPCC_OBJECT_LENGTH_LOGNORMAL = (1.845, 0.813)
NLPCC_MAX_OBJECT_LENGTH = 700
NLPCC_ASCII_OBJECT_SHARE = 0.166
NLPCC_SPACE_OBJECT_SHARE = 0.132
NLPCC_OBJECT_QUIRKS = (('"', 0.0012), ("<", 0.0006), (">", 0.0006), ("|", 0.0007), ("\\", 0.0006))
# Chosen, not fitted: lines the loader must reject, one in 100,000 each: an
# object holding ` ||| `, and a line with two fields.
NLPCC_BAD_LINE_SHARE = 0.00001

TRIPLE_CHUNK_SUBJECTS = 20_000
LINE_CHUNK = 50_000
_CHAR_TABLE_BITS = 16
_SLOTS = 64  # character slots per name: longer parts are capped to 32 characters
_ASCII_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_ASCII_LITERAL_CHARS = "0123456789" * 4 + "ABCDEFGHIJKLMNOPQRSTUVWXYZ-:./"
_DATATYPES = ("http://www.w3.org/2001/XMLSchema#float", "http://www.w3.org/2001/XMLSchema#dateTime")


def zipf_ranks(u: np.ndarray, n: int, exponent: float) -> np.ndarray:
    """Ranks 1..n with P(rank) proportional to rank**-exponent (continuous
    inverse CDF) for uniform draws `u` in [0, 1)."""
    a = 1.0 - exponent
    ranks = ((float(n) ** a - 1.0) * u + 1.0) ** (1.0 / a)
    return np.clip(ranks.astype(np.int64), 1, n)


def _cjk_table() -> np.ndarray:
    """65,536 code points laid out by the fitted character law: indexing it
    with 16 random bits yields a character with the fitted frequencies."""
    weights = (np.arange(1, CJK_VOCABULARY + 1) + CJK_ZIPF_OFFSET) ** -CJK_ZIPF
    u = (np.arange(1 << _CHAR_TABLE_BITS) + 0.5) / (1 << _CHAR_TABLE_BITS)
    ranks = np.searchsorted(np.cumsum(weights) / weights.sum(), u)
    # Scatter ranks over the CJK block so frequent characters are not neighbours.
    return (0x4E00 + (ranks * 7919) % 20902).astype(np.uint32)


CJK_TABLE = _cjk_table()


def _splitmix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on a uint64 array (wrapping arithmetic)."""
    z = x + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _uniform(bits: np.ndarray) -> np.ndarray:
    return (bits >> np.uint64(11)).astype(np.float64) * (1.0 / (1 << 53))


def _lengths(z: np.ndarray, params: tuple[float, float], one_char: np.ndarray, cap: int) -> np.ndarray:
    """Lengths from the lognormal law for normals `z`, floored at 2, with 1 where
    `one_char`: the lognormal alone puts 2-4% of names below 1.5 characters,
    several times the observed share of one-character names."""
    mean, std = params
    lengths = np.clip(np.rint(np.exp(mean + std * z)), 2, cap).astype(np.int64)
    return np.where(one_char, 1, lengths)


@dataclass(frozen=True)
class NameShape:
    """How one kind of name looks; `salt` separates the kinds' hash streams."""

    salt: int
    length: tuple[float, float]
    one_char_share: float = 0.0
    description_share: float = 0.0
    ascii_share: float = 0.0
    dot_share: float = 0.0
    quirks: bool = False


ENTITY = NameShape(
    1, PLAIN_NAME_LENGTH_LOGNORMAL, ONE_CHAR_NAME_SHARE, DESCRIPTION_SHARE, ASCII_NAME_SHARE, DOT_NAME_SHARE, True
)
PREDICATE = NameShape(2, PREDICATE_LENGTH_LOGNORMAL, ONE_CHAR_PREDICATE_SHARE)
TYPE = NameShape(3, TYPE_NAME_LENGTH_LOGNORMAL)
ALIAS = NameShape(4, ALIAS_LENGTH_LOGNORMAL, ONE_CHAR_MENTION_SHARE, 0.0, ASCII_NAME_SHARE, DOT_NAME_SHARE)

# (cumulative upper bound, quirk) drawn from one uniform per entity name.
_QUIRKS = [
    (SPACE_NAME_SHARE, "space"),
    (QUOTE_NAME_SHARE, "quote"),
    (BACKSLASH_NAME_SHARE, "\\"),
    (BRACE_NAME_SHARE, "{"),
    (PIPE_NAME_SHARE, "|"),
    (CARET_NAME_SHARE, "^"),
    (TRAILING_SPACE_NAME_SHARE, "trailing"),
]
_QUIRK_TOTAL = sum(share for share, _ in _QUIRKS)


def _apply_quirk(name: str, u: float) -> str:
    """Insert at most one quirk into `name`, chosen by `u` in [0, 1)."""
    bound = 0.0
    for share, quirk in _QUIRKS:
        bound += share
        if u < bound:
            cut = max(1, len(name) // 2)
            if quirk == "space":
                return name[:cut] + " " + name[cut:]
            if quirk == "quote":
                return '"' + name[:cut] + '"' + name[cut:]
            if quirk == "trailing":
                return name + " "
            return name[:cut] + quirk + name[cut:]
    return name


class NameSource:
    """Names as a pure function of (seed, shape, id): the same id always gets
    the same name, so nothing needs to be remembered while streaming."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def names(self, shape: NameShape, ids: np.ndarray) -> list[str]:
        """The names of `ids` (an int array), in order."""
        if len(ids) == 0:
            return []
        key = np.uint64((self.seed * 1_000_003 + shape.salt * 7_777_777) & 0xFFFFFFFFFFFFFFFF)
        base = _splitmix(ids.astype(np.uint64) * np.uint64(128) ^ key)
        draws = _splitmix(base[:, None] + np.arange(8, dtype=np.uint64)[None, :])
        u = _uniform(draws)
        # Box-Muller: two independent standard normals per name.
        radius = np.sqrt(-2.0 * np.log1p(-u[:, 0]))
        z0, z1 = radius * np.cos(2 * np.pi * u[:, 1]), radius * np.sin(2 * np.pi * u[:, 1])
        has_description = u[:, 2] < shape.description_share
        first = np.where(
            has_description,
            _lengths(z0, BASE_NAME_LENGTH_LOGNORMAL, u[:, 6] < ONE_CHAR_BASE_SHARE, 32),
            _lengths(z0, shape.length, u[:, 6] < shape.one_char_share, 32),
        )
        second = _lengths(z1, DESCRIPTION_LENGTH_LOGNORMAL, np.zeros(len(ids), bool), 32)
        text = self._characters(base, u[:, 3] < shape.ascii_share)
        dotted = u[:, 4] < shape.dot_share
        quirk = u[:, 5] if shape.quirks else np.ones(len(ids))
        out = []
        rows = zip(first.tolist(), second.tolist(), has_description.tolist(), dotted.tolist(), quirk.tolist())
        for start, (length, description_length, described, dot, quirk_draw) in zip(range(0, len(text), _SLOTS), rows):
            name = text[start : start + length]
            if described:
                name += "_（" + text[start + 32 : start + 32 + description_length] + "）"
            elif dot and length > 1:
                name = name[: length // 2] + "·" + name[length // 2 :]
            if quirk_draw < _QUIRK_TOTAL:
                name = _apply_quirk(name, quirk_draw)
            out.append(name)
        return out

    @staticmethod
    def _characters(base: np.ndarray, ascii_rows: np.ndarray) -> str:
        """One string of `_SLOTS` characters per row, rows concatenated."""
        bits = _splitmix(base[:, None] + np.arange(64, 64 + _SLOTS // 4, dtype=np.uint64)[None, :])
        picks = bits.view(np.uint16).reshape(len(base), _SLOTS)
        codes = CJK_TABLE[picks]
        if ascii_rows.any():
            alphabet = np.frombuffer(_ASCII_NAME_CHARS.encode("utf-32-le"), dtype=np.uint32)
            codes[ascii_rows] = alphabet[picks[ascii_rows] % len(alphabet)]
        return codes.astype("<u4").tobytes().decode("utf-32-le")


def entity_count(triples: int, mentions: int) -> int:
    """Number of entity ids the files draw from."""
    if triples > 0:
        return max(1, math.ceil(triples / MEAN_OUT_DEGREE))
    return max(1, round(mentions / MENTIONS_PER_ENTITY))


def _scatter(ranks: np.ndarray, n: int) -> np.ndarray:
    """Map popularity ranks 1..n to entity ids 0..n-1 (a fixed permutation),
    so that popular objects are spread over the subjects."""
    stride = 2_654_435_761
    while math.gcd(stride, n) != 1:
        stride += 2
    return ((ranks - 1) * (stride % n)) % n if n > 1 else ranks * 0


def _value_texts(
    rng: np.random.Generator, count: int, length_lognormal: tuple[float, float], max_length: int, ascii_share: float
) -> tuple[str, np.ndarray]:
    """`count` random values (CJK text, or ASCII for an `ascii_share` of them)
    as one string and their lengths; value i is the i-th slice of that length."""
    lengths = np.clip(np.rint(rng.lognormal(*length_lognormal, size=count)), 1, max_length).astype(np.int64)
    ascii_rows = rng.random(count) < ascii_share
    codes = CJK_TABLE[rng.integers(0, 1 << _CHAR_TABLE_BITS, size=int(lengths.sum()))]
    alphabet = np.frombuffer(_ASCII_LITERAL_CHARS.encode("utf-32-le"), dtype=np.uint32)
    owner = np.repeat(ascii_rows, lengths)
    codes[owner] = alphabet[codes[owner] % len(alphabet)]
    return codes.astype("<u4").tobytes().decode("utf-32-le"), lengths


def _literals(rng: np.random.Generator, count: int) -> list[str]:
    """`count` literal values (without their quotes) as PKU BASE writes them."""
    text, lengths = _value_texts(rng, count, LITERAL_LENGTH_LOGNORMAL, MAX_LITERAL_LENGTH, ASCII_LITERAL_SHARE)
    out = []
    start = 0
    for row, (length, draw) in enumerate(zip(lengths.tolist(), rng.random(count).tolist())):
        value = text[start : start + length]
        start += length
        if draw < TYPED_LITERAL_SHARE:
            number = str(start % 2000) if row % 2 == 0 else f"{start % 24:02d}:00"
            value = f'{number}"^^<{_DATATYPES[row % 2]}>'
        elif draw < TYPED_LITERAL_SHARE + QUOTED_LITERAL_SHARE and length > 2:
            third = length // 3
            value = value[:third] + '"' + value[third : 2 * third] + '"' + value[2 * third :]
        elif draw < TYPED_LITERAL_SHARE + QUOTED_LITERAL_SHARE + BACKSLASH_LITERAL_SHARE:
            value = value[: length // 2] + "\\\\n" + value[length // 2 :]
        out.append(value)
    return out


def triple_chunks(triples: int, seed: int, literal_share: float = LITERAL_SHARE) -> Iterator[str]:
    """The triples file as text chunks; exactly `triples` lines in all, a
    `literal_share` of them with a literal object."""
    rng = np.random.default_rng([seed, 1])
    names = NameSource(seed)
    entities = entity_count(triples, 0)
    predicates = max(16, round(triples * PREDICATES_PER_TRIPLE))
    next_subject = 0
    left = triples
    while left > 0:
        degrees = np.clip(
            np.rint(rng.lognormal(*OUT_DEGREE_LOGNORMAL, size=TRIPLE_CHUNK_SUBJECTS)), 1, MAX_OUT_DEGREE
        ).astype(np.int64)
        ends = np.cumsum(degrees)
        used = min(int(np.searchsorted(ends, left)) + 1, len(ends))
        degrees = degrees[:used]
        count = min(int(ends[used - 1]), left)
        subjects = np.repeat(np.arange(next_subject, next_subject + used) % entities, degrees)[:count]
        predicate_ids = zipf_ranks(rng.random(count), predicates, PREDICATE_ZIPF) - 1
        is_literal = rng.random(count) < literal_share
        objects = _scatter(zipf_ranks(rng.random(count), entities, OBJECT_ZIPF), entities)
        literals = iter(_literals(rng, int(is_literal.sum())))
        yield _triple_text(names, subjects, predicate_ids, objects, is_literal, literals)
        next_subject += used
        left -= count


def _named(names: NameSource, shape: NameShape, ids: np.ndarray) -> dict[int, str]:
    unique = np.unique(ids)
    return dict(zip(unique.tolist(), names.names(shape, unique)))


def _triple_text(
    names: NameSource,
    subjects: np.ndarray,
    predicate_ids: np.ndarray,
    objects: np.ndarray,
    is_literal: np.ndarray,
    literals: Iterator[str],
) -> str:
    entity = _named(names, ENTITY, np.concatenate([subjects, objects[~is_literal]]))
    predicate = _named(names, PREDICATE, predicate_ids)
    lines = []
    for s, p, o, lit in zip(subjects.tolist(), predicate_ids.tolist(), objects.tolist(), is_literal.tolist()):
        obj = f'"{next(literals)}"' if lit else f"<{entity[o]}>"
        lines.append(f"<{entity[s]}>\t<{predicate[p]}>\t{obj} .\n")
    return "".join(lines)


def type_chunks(entities: int, seed: int) -> Iterator[str]:
    """The types file as text chunks: some types for about 63% of the entities."""
    rng = np.random.default_rng([seed, 2])
    names = NameSource(seed)
    type_names = names.names(TYPE, np.arange(TYPE_VOCABULARY))
    for start in range(0, entities, LINE_CHUNK):
        ids = np.arange(start, min(start + LINE_CHUNK, entities))
        counts = np.where(rng.random(len(ids)) < TYPED_ENTITY_SHARE, rng.geometric(1 - EXTRA_TYPE_RATIO, len(ids)), 0)
        owners = np.repeat(ids, counts)
        types = zipf_ranks(rng.random(len(owners)), TYPE_VOCABULARY, TYPE_ZIPF) - 1
        entity = _named(names, ENTITY, owners)
        yield "".join(
            f"<{entity[e]}>\t<{TYPE_PREDICATE}>\t<{type_names[t]}> .\n" for e, t in zip(owners.tolist(), types.tolist())
        )


def mention_chunks(mentions: int, entities: int, seed: int) -> Iterator[str]:
    """The mention2ent file as text chunks, exactly `mentions` lines, grouped by
    mention with ranks 1..k as in PKU BASE."""
    rng = np.random.default_rng([seed, 3])
    names = NameSource(seed)
    group = 0
    left = mentions
    while left > 0:
        sizes = np.minimum(rng.zipf(ENTITIES_PER_MENTION_ZIPF, LINE_CHUNK), MAX_ENTITIES_PER_MENTION)
        ends = np.cumsum(sizes)
        used = min(int(np.searchsorted(ends, left)) + 1, len(ends))
        sizes = sizes[:used]
        groups = np.arange(group, group + used)
        firsts = _scatter(groups % entities + 1, entities)
        others = rng.integers(0, entities, size=int(sizes.sum()))
        kind = rng.random((used, 2))
        lines = _mention_lines(names, groups, firsts, sizes, others, kind)
        yield "".join(lines[:left])
        group += used
        left -= min(len(lines), left)


def _mention_lines(
    names: NameSource,
    groups: np.ndarray,
    firsts: np.ndarray,
    sizes: np.ndarray,
    others: np.ndarray,
    kind: np.ndarray,
) -> list[str]:
    ends = np.cumsum(sizes)
    members = others.copy()
    members[ends - sizes] = firsts
    entity = _named(names, ENTITY, members)
    member_names = [entity[member] for member in members.tolist()]
    aliases = names.names(ALIAS, groups)
    lines = []
    start = 0
    for size, first, alias, (draw, base_draw) in zip(sizes.tolist(), firsts.tolist(), aliases, kind.tolist()):
        name = entity[first]
        cut = name.find("_（")
        if draw < EMPTY_MENTION_SHARE:
            mention = ""
        elif cut > 0 and base_draw < MENTION_IS_BASE_SHARE / DESCRIPTION_SHARE:
            mention = name[:cut]
        elif draw < MENTION_IS_NAME_SHARE / (1 - MENTION_IS_BASE_SHARE) and size == 1:
            mention = name
        else:
            mention = alias
        if size == 1:
            lines.append(f"{mention}\t{member_names[start]}\t1\n")
        else:
            lines.extend(f"{mention}\t{member_names[start + rank]}\t{rank + 1}\n" for rank in range(size))
        start += size
    return lines


NLPCC_SUBJECT = NameShape(
    5, NLPCC_SUBJECT_LENGTH_LOGNORMAL, ONE_CHAR_NAME_SHARE, NLPCC_QUALIFIER_SHARE, NLPCC_ASCII_SUBJECT_SHARE, 0.0, True
)


def _nlpcc_objects(rng: np.random.Generator, count: int) -> list[str]:
    """`count` NLPCC object strings that are not subject names."""
    text, lengths = _value_texts(
        rng, count, NLPCC_OBJECT_LENGTH_LOGNORMAL, NLPCC_MAX_OBJECT_LENGTH, NLPCC_ASCII_OBJECT_SHARE
    )
    quirks = ((" ", NLPCC_SPACE_OBJECT_SHARE),) + NLPCC_OBJECT_QUIRKS
    out = []
    start = 0
    for length, draw in zip(lengths.tolist(), rng.random(count).tolist()):
        value = text[start : start + length]
        start += length
        bound = 0.0
        for quirk, share in quirks:
            bound += share
            if draw < bound:
                if length > 1:
                    value = value[: length // 2] + quirk + value[length // 2 :]
                break
        out.append(value)
    return out


def nlpcc_chunks(triples: int, seed: int) -> Iterator[str]:
    """The NLPCC KB file as text chunks: exactly `triples` lines."""
    rng = np.random.default_rng([seed, 4])
    names = NameSource(seed)
    subjects_total = max(1, math.ceil(triples / math.exp(NLPCC_OUT_DEGREE_LOGNORMAL[0] + 0.645**2 / 2)))
    predicates = max(16, round(triples * NLPCC_PREDICATES_PER_TRIPLE))
    next_subject = 0
    left = triples
    while left > 0:
        degrees = np.clip(
            np.rint(rng.lognormal(*NLPCC_OUT_DEGREE_LOGNORMAL, size=TRIPLE_CHUNK_SUBJECTS)), 1, MAX_OUT_DEGREE
        ).astype(np.int64)
        ends = np.cumsum(degrees)
        used = min(int(np.searchsorted(ends, left)) + 1, len(ends))
        count = min(int(ends[used - 1]), left)
        subjects = np.repeat(np.arange(next_subject, next_subject + used) % subjects_total, degrees[:used])[:count]
        predicate_ids = zipf_ranks(rng.random(count), predicates, NLPCC_PREDICATE_ZIPF) - 1
        draws = rng.random(count)
        named_objects = draws < NLPCC_OBJECT_IS_SUBJECT_SHARE
        objects = _scatter(zipf_ranks(rng.random(count), subjects_total, OBJECT_ZIPF), subjects_total)
        strings = iter(_nlpcc_objects(rng, int((~named_objects).sum())))
        subject = _named(names, NLPCC_SUBJECT, np.concatenate([subjects, objects[named_objects]]))
        predicate = _named(names, PREDICATE, predicate_ids)
        lines = []
        rows = zip(subjects.tolist(), predicate_ids.tolist(), objects.tolist(), named_objects.tolist(), draws.tolist())
        for s, p, o, named, draw in rows:
            obj = subject[o] if named else next(strings)
            if 1 - draw < NLPCC_BAD_LINE_SHARE:
                lines.append(f"{subject[s]} ||| {predicate[p]}\n")
            elif 1 - draw < 2 * NLPCC_BAD_LINE_SHARE:
                lines.append(f"{subject[s]} ||| {predicate[p]} ||| {obj} ||| {obj}\n")
            else:
                lines.append(f"{subject[s]} ||| {predicate[p]} ||| {obj}\n")
        yield "".join(lines).replace("_（", "（")
        next_subject += used
        left -= count


# --- Distractors: the collisions of a full KB, built from a real KB's vocabulary ---
# Chosen, not fitted (the slice cannot show what the full PKU BASE adds around
# it); every draw is seeded, so the files are a pure function of (KB files, seed).
DISTRACTOR_TRIPLES_FILE = "pkubase-triples-distractors.txt"
DISTRACTOR_TYPES_FILE = "pkubase-types-distractors.txt"
DISTRACTOR_MENTIONS_FILE = "pkubase-mention2ent-distractors.txt"
# Share of the KB's base names (the part before `_（`, or the whole name) that
# get homonyms `base_（other description）`; their number per base name is
# geometric with P(k+1)/P(k) = HOMONYM_EXTRA_RATIO (mean 1.67).
HOMONYM_SHARE = 0.5
HOMONYM_EXTRA_RATIO = 0.4
# Share of the common words (2-4 characters, see KBVocabulary) that name a
# distractor entity; every short ASCII/digit token does.
WORD_ENTITY_SHARE = 0.5
WORD_LENGTHS = (2, 4)
TOKEN_LENGTHS = (2, 4)
# Objects of distractor triples that are literals, drawn from the common
# phrases (words, tokens and the KB's short literal values).
DISTRACTOR_LITERAL_SHARE = 0.3
MAX_PHRASE_LENGTH = 8
MAX_DISTRACTOR_DEGREE = 20
# Distractor mention lines ranked 1 (tied with the KB's own first entity for
# that mention); the others rank after the KB's entities.
DISTRACTOR_FIRST_SHARE = 0.2
_TOKEN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]+(?![A-Za-z0-9])")
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]+")
# Names with these would need escaping or repair on the way into the store;
# the vocabulary leaves them out so every distractor line loads as written.
_AWKWARD = re.compile(r'[\s<>"{}|^`\\]')


@dataclass(frozen=True)
class KBVocabulary:
    """What distractors are made of, read from a PKU BASE triples, types and
    mention2ent file (never from questions)."""

    entities: frozenset[str]  # every entity name of the KB: no distractor may touch one
    bases: list[str]  # distinct base names, sorted
    descriptions: list[str]  # distinct texts inside `_（…）`, sorted
    predicates: list[str]  # one per triple (draws follow their frequency), 类型 left out
    types: list[str]  # one per type line
    words: list[str]  # common words, sorted
    tokens: list[str]  # short ASCII/digit tokens, sorted
    phrases: list[str]  # values for distractor literals, sorted
    mention_ranks: dict[str, int]  # highest rank of each mention

    @classmethod
    def read(cls, kb_dir: Path) -> "KBVocabulary":
        """The vocabulary of the KB files in `kb_dir` (TRIPLES_FILE, TYPES_FILE, MENTIONS_FILE).

        Common words: CJK strings of WORD_LENGTHS characters that are a
        predicate, a type, a literal value or a mention of the KB. Tokens:
        maximal ASCII letter/digit runs of TOKEN_LENGTHS characters inside its
        names, literals and mentions (C9, 985, 3D)."""
        from coqa.kb.loading.formats import LineError, parse_mention_line, parse_triple_line

        entities: set[str] = set()
        predicates: list[str] = []
        literals: list[str] = []
        types: list[str] = []
        for name, kind in ((TRIPLES_FILE, "triples"), (TYPES_FILE, "types")):
            for line in _kb_lines(kb_dir / name):
                try:
                    triple, _ = parse_triple_line(line)
                except LineError:
                    continue
                entities.add(triple.subject)
                if triple.object.is_literal:
                    literals.append(triple.object.value)
                elif kind == "types" or triple.predicate == TYPE_PREDICATE:
                    types.append(triple.object.value)
                else:
                    entities.add(triple.object.value)
                if kind == "triples" and triple.predicate != TYPE_PREDICATE:
                    predicates.append(triple.predicate)
        mention_ranks: dict[str, int] = {}
        for line in _kb_lines(kb_dir / MENTIONS_FILE):
            try:
                mention, _ = parse_mention_line(line)
            except LineError:
                continue
            mention_ranks[mention.mention] = max(mention.rank, mention_ranks.get(mention.mention, 0))
        bases, descriptions = set(), set()
        for name in entities:
            cut = name.find("_（")
            if cut > 0 and name.endswith("）"):
                bases.add(name[:cut])
                descriptions.add(name[cut + 2 : -1])
            else:
                bases.add(name)
        lo, hi = WORD_LENGTHS
        word_sources = set(predicates) | set(types) | set(literals) | set(mention_ranks)
        words = {w for w in word_sources if lo <= len(w) <= hi and _CJK_WORD.fullmatch(w)}
        lo, hi = TOKEN_LENGTHS
        token_sources = [*entities, *literals, *mention_ranks]
        tokens = {t for text in token_sources for t in _TOKEN.findall(text) if lo <= len(t) <= hi}
        short_literals = {v for v in literals if 0 < len(v) <= MAX_PHRASE_LENGTH and not _AWKWARD.search(v)}
        return cls(
            frozenset(entities),
            sorted(b for b in bases if not _AWKWARD.search(b)),
            sorted(d for d in descriptions if not _AWKWARD.search(d)),
            predicates,
            types,
            sorted(words),
            sorted(tokens),
            sorted(words | tokens | short_literals),
            mention_ranks,
        )


def _kb_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if line.strip():
                yield line


@dataclass(frozen=True)
class Distractor:
    """One distractor entity and the mention that collides with the KB."""

    name: str
    mention: str


def distractor_entities(vocabulary: KBVocabulary, seed: int) -> list[Distractor]:
    """Homonyms of the KB's base names, then entities named by common words,
    then by tokens; a word or token that already names a KB entity gets a
    description. No name equals one of the KB's or another distractor's."""
    rng = np.random.default_rng([seed, 5])
    taken = set(vocabulary.entities)
    out: list[Distractor] = []

    def add(name: str, mention: str) -> None:
        if name not in taken:
            taken.add(name)
            out.append(Distractor(name, mention))

    def described(base: str) -> str:
        return f"{base}_（{vocabulary.descriptions[rng.integers(len(vocabulary.descriptions))]}）"

    for base in vocabulary.bases:
        if rng.random() < HOMONYM_SHARE:
            for _ in range(int(rng.geometric(1 - HOMONYM_EXTRA_RATIO))):
                add(described(base), base)
    for word in vocabulary.words:
        if rng.random() < WORD_ENTITY_SHARE:
            add(word if word not in taken else described(word), word)
    for token in vocabulary.tokens:
        add(token if token not in taken else described(token), token)
    return out


def distractor_chunks(vocabulary: KBVocabulary, distractors: list[Distractor], seed: int) -> tuple[str, str, str]:
    """The distractor triples, types and mention2ent files' text.

    Each distractor gets its own neighbourhood: an out-degree from the fitted
    law (at most MAX_DISTRACTOR_DEGREE), the KB's predicates at their
    frequencies, objects that are other distractors or (a
    DISTRACTOR_LITERAL_SHARE of them) common phrases, types like the KB's.
    Nothing links to a KB entity, so no answer of the KB changes."""
    rng = np.random.default_rng([seed, 6])
    count = len(distractors)
    degrees = np.clip(np.rint(rng.lognormal(*OUT_DEGREE_LOGNORMAL, size=count)), 1, MAX_DISTRACTOR_DEGREE).astype(np.int64)
    edges = int(degrees.sum())
    predicates = rng.integers(0, len(vocabulary.predicates), size=edges).tolist()
    literal = (rng.random(edges) < DISTRACTOR_LITERAL_SHARE).tolist()
    phrases = rng.integers(0, len(vocabulary.phrases), size=edges).tolist()
    objects = rng.integers(0, count, size=edges).tolist()
    triples = []
    edge = 0
    for distractor, degree in zip(distractors, degrees.tolist()):
        for _ in range(degree):
            obj = f'"{vocabulary.phrases[phrases[edge]]}"' if literal[edge] else f"<{distractors[objects[edge]].name}>"
            triples.append(f"<{distractor.name}>\t<{vocabulary.predicates[predicates[edge]]}>\t{obj} .\n")
            edge += 1
    typed = (rng.random(count) < TYPED_ENTITY_SHARE).tolist()
    type_draws = rng.integers(0, len(vocabulary.types), size=count).tolist()
    types = [
        f"<{d.name}>\t<{TYPE_PREDICATE}>\t<{vocabulary.types[t]}> .\n"
        for d, is_typed, t in zip(distractors, typed, type_draws)
        if is_typed
    ]
    first = (rng.random(count) < DISTRACTOR_FIRST_SHARE).tolist()
    full_name = (rng.random(count) < MENTION_IS_NAME_SHARE).tolist()
    ranks = dict(vocabulary.mention_ranks)
    mentions = []
    for distractor, is_first, with_name in zip(distractors, first, full_name):
        rank = ranks.get(distractor.mention, 0) + 1
        ranks[distractor.mention] = rank
        mentions.append(f"{distractor.mention}\t{distractor.name}\t{1 if is_first else rank}\n")
        if with_name and distractor.name != distractor.mention:
            mentions.append(f"{distractor.name}\t{distractor.name}\t1\n")
    return "".join(triples), "".join(types), "".join(mentions)


def generate_distractors(out: Path, kb_dir: Path, seed: int) -> dict[str, int]:
    """Write the three distractor files for the KB in `kb_dir` into `out`;
    return the line count of each."""
    out.mkdir(parents=True, exist_ok=True)
    vocabulary = KBVocabulary.read(kb_dir)
    texts = distractor_chunks(vocabulary, distractor_entities(vocabulary, seed), seed)
    counts = {}
    for name, text in zip((DISTRACTOR_TRIPLES_FILE, DISTRACTOR_TYPES_FILE, DISTRACTOR_MENTIONS_FILE), texts):
        write_chunks(out / name, iter([text]))
        counts[name] = text.count("\n")
    return counts


def write_chunks(path: Path, chunks: Iterator[str]) -> None:
    """Write text chunks to `path` as UTF-8 with `\\n` line ends."""
    with open(path, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        for chunk in chunks:
            out.write(chunk)


def generate(
    out: Path, triples: int, mentions: int | None, seed: int, literal_share: float = LITERAL_SHARE
) -> dict[str, int]:
    """Write the three files into `out`; return the line count of each."""
    out.mkdir(parents=True, exist_ok=True)
    if mentions is None:
        mentions = round(triples * MENTIONS_PER_TRIPLE)
    entities = entity_count(triples, mentions)
    write_chunks(out / TRIPLES_FILE, triple_chunks(triples, seed, literal_share))
    type_lines = 0
    with open(out / TYPES_FILE, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as types_out:
        for chunk in type_chunks(entities if triples > 0 else 0, seed):
            type_lines += chunk.count("\n")
            types_out.write(chunk)
    write_chunks(out / MENTIONS_FILE, mention_chunks(mentions, entities, seed))
    return {TRIPLES_FILE: triples, TYPES_FILE: type_lines, MENTIONS_FILE: mentions}


def generate_nlpcc(out: Path, triples: int, seed: int) -> dict[str, int]:
    """Write the NLPCC KB file into `out`; return its line count."""
    out.mkdir(parents=True, exist_ok=True)
    write_chunks(out / NLPCC_FILE, nlpcc_chunks(triples, seed))
    return {NLPCC_FILE: triples}


def _report(counts: dict[str, int], out: Path, seconds: float, stream: TextIO) -> None:
    for name, lines in counts.items():
        print(f"{out / name}: {lines:,} lines", file=stream)
    print(f"generated in {seconds:.1f} s", file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write synthetic PKU-BASE-shaped files (streamed, deterministic).")
    parser.add_argument("--triples", type=int, required=True, help="lines in pkubase-triples.txt (0 for none)")
    parser.add_argument(
        "--format", choices=("pkubase", "nlpcc"), default="pkubase", help=f"nlpcc: write only {NLPCC_FILE}"
    )
    parser.add_argument("--out", type=Path, required=True, help="output directory (created)")
    parser.add_argument(
        "--mentions", type=int, default=None, help="lines in pkubase-mention2ent.txt (default: 0.85 per triple)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed; same seed, same files (default 0)")
    parser.add_argument(
        "--literal-share", type=float, default=LITERAL_SHARE, help=f"share of literal objects (default {LITERAL_SHARE})"
    )
    parser.add_argument(
        "--distractors",
        type=Path,
        metavar="KB_DIR",
        help="also write the distractor files for the PKU BASE files in KB_DIR (e.g. ../shared/data/pkubase-bench)",
    )
    args = parser.parse_args(argv)
    if args.distractors is not None and args.format == "nlpcc":
        parser.error("--distractors is for the PKU BASE format")
    if args.triples < 0 or (args.mentions is not None and args.mentions < 0):
        parser.error("--triples and --mentions must be >= 0")
    if not 0.0 <= args.literal_share <= 1.0:
        parser.error("--literal-share must be between 0 and 1")
    started = time.perf_counter()
    if args.format == "nlpcc":
        counts = generate_nlpcc(args.out, args.triples, args.seed)
    else:
        counts = generate(args.out, args.triples, args.mentions, args.seed, args.literal_share)
        if args.distractors is not None:
            counts.update(generate_distractors(args.out, args.distractors, args.seed))
    _report(counts, args.out, time.perf_counter() - started, sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
