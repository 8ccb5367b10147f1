"""Reading mention2ent files: lines to (mention, entity, rank) rows in batches.

One regex pass splits a block into the fields of its regular lines; the
other lines (rare) go through `coqa.kb.loading.formats.parse_mention_line`, which
repairs them or says why it cannot. Rows go to a `MentionConsumer` (the
mention index builder) one batch per block.
"""

from __future__ import annotations

import re
from itertools import compress
from pathlib import Path
from typing import Protocol, Sequence

from coqa.kb.loading.formats import MAX_RANK_DIGITS, MENTIONS, parse_mention_line
from coqa.kb.loading.line_reading import LineReader
from coqa.kb.names import canonical_name
from coqa.kb.loading.rejects import RejectsWriter

# A mention2ent line the fast path takes: a mention that is not all white
# space, a canonical entity name without angle brackets, a rank in its
# canonical form (no leading zeros) that parse_mention_line would accept.
# Each field is one run of characters that cannot overlap the next
# (white space, then a non-space; tabs end a field), so a failing match
# backtracks over each character once: linear in the line's length (an
# ambiguous split such as `[^\t]*\S[^\t]*` is quadratic).
_REGULAR_MENTION = rf"(?!\ufeff)([^\S\t\n]*\S[^\t\n]*)\t([^<\s](?:[^\t\n]*(?<=\S))?)\t(0|[1-9][0-9]{{0,{MAX_RANK_DIGITS - 1}}})"
# One row per line: the three fields of a regular line, or the whole line.
_MENTION_ROWS = re.compile(rf"^(?:{_REGULAR_MENTION}|(.*))$", re.M)


class MentionConsumer(Protocol):
    """Whatever takes the rows a `MentionFileReader` reads."""

    def add_mentions(self, mentions: Sequence[str], entities: Sequence[str], ranks: Sequence[int | str]) -> None:
        """Take rows: `mentions[i]` may name `entities[i]` (a canonical name)
        with rank `ranks[i]` (an int or its decimal digits without leading zeros)."""


class MentionFileReader(LineReader):
    """A mention2ent file, its rows handed to `consumer`."""

    def __init__(self, path: Path, rejects: RejectsWriter, consumer: MentionConsumer) -> None:
        super().__init__(path, MENTIONS, rejects)
        self.consumer = consumer

    def text_block(self, text: str) -> None:
        """Regular lines go to the consumer in one batch, the others (rare) one
        by one through `line`; one regex pass splits the block into fields."""
        rows = _MENTION_ROWS.findall(text)
        if text.endswith("\n"):
            rows.pop()  # the empty match after the final "\n"
        if not rows:
            return
        mentions, entities, ranks, others = (list(column) for column in zip(*rows))
        irregular = [number for number, mention in enumerate(mentions) if not mention]
        if irregular:
            entities, ranks = list(compress(entities, mentions)), list(compress(ranks, mentions))
            mentions = list(compress(mentions, mentions))
        self.consumer.add_mentions(mentions, entities, ranks)
        first = self.next_line
        for number in irregular:
            self.next_line = first + number
            self.line(others[number], [])
        self.count_loaded(len(mentions))
        self.next_line = first + len(rows)

    def parse(self, text: str) -> list[str]:
        mention, repairs = parse_mention_line(text)
        self.consumer.add_mentions([mention.mention], [canonical_name(mention.entity)], [mention.rank])
        return repairs
