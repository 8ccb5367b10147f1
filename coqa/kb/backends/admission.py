"""What a query must be before any backend runs it: bounded, parsed, read-only.

Every backend calls `admit` (the embedded store `admit_prepared`) first, so
the same rule holds for the embedded store, SPARQL endpoints and gStore, and
nothing leaves the process that was not checked:

1. Size and shape bounds, checked on the text before any parser sees it,
   in the same pass as the name codec's rewrite into standard SPARQL
   (`standard_text`, which keeps the structure), and again on every further
   rewrite a backend makes of it (`check_rewritten`): the
   SPARQL parser and query planner recurse, and deeply nested or very long
   queries overflow their stack (a segfault, not an exception) or take
   seconds to plan. The bounds are far above any CCKS gold query or query
   coqa generates (those have at most a handful of patterns). Brackets,
   comments and strings are found by `coqa.kb.sparql_text`, the tokenizer
   whose rules are the engine's (a comment ending in a lone CR hides nothing).
2. SERVICE is refused in every spelling: a federated query makes the engine
   (the embedded store included) send HTTP requests to any address.
   pyoxigraph (0.5) has no option to switch SERVICE off or to give it a
   handler, so this check is the guard; comments are dropped before any
   engine sees a query, so none can hide the keyword.
3. The text (in PKU BASE style, rewritten by the name codec) is parsed by
   pyoxigraph's SPARQL parser. Only SELECT and ASK pass; updates (INSERT,
   DELETE, DROP, CLEAR, LOAD, ...) do not even parse as a query, CONSTRUCT and
   DESCRIBE are refused by their form. gStore executes updates sent as
   queries, so this check is what keeps coqa read-only there.

Parsing is done by preparing the query on a pyoxigraph store: pyoxigraph has
no public parse-only call, and its SELECT results are lazy. `admit` prepares
it on an empty in-memory store, so nothing is evaluated (no SERVICE call is
ever made there). The embedded backend uses `admit_prepared` on its own
store instead: the query is then parsed once, not once for admission and once
more to run it (about 50-100 us of a typical generated query's 100-300).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import pyoxigraph as ox

from coqa.kb.base import KBError
from coqa.kb.names import standard_reference
from coqa.kb.sparql_text import IRI, Token, rewrite_references, structure_text, tokens

MAX_QUERY_CHARS = 10_000
# A rewritten text may be longer than its query: a name's non-ASCII
# characters are percent-encoded (9 characters for one CJK character), and
# gStore's VALUES rewrite repeats the group once per value.
MAX_REWRITTEN_CHARS = 100_000
MAX_REWRITTEN_PATTERNS = 1_000
MAX_NESTING = 50
MAX_UNIONS = 100
MAX_TRIPLE_PATTERNS = 50

SELECT = "select"
ASK = "ask"

_BRACKET = re.compile(r"[(){}\[\]]")
_UNION = re.compile(r"\bunion\b", re.I)
# A triple pattern ends at '.', ';' or ',' (not the '.' inside a number).
_PATTERN_END = re.compile(r"(?<![0-9])\.|\.(?![0-9])|[;,]")
_UPDATE_WORD = re.compile(
    r"^\s*(?:(?:prefix\s+\S*\s*<[^>]*>|base\s*<[^>]*>)\s*)*(insert|delete|load|clear|drop|create|add|move|copy|with)\b",
    re.I,
)


@dataclass(frozen=True)
class AdmittedQuery:
    """A query that passed `admit`: its standard-SPARQL text (absolute IRIs),
    its form (SELECT or ASK) and, for SELECT, the variables it projects, in
    order. Backends read replies by these variables."""

    standard_text: str
    form: str
    variables: tuple[str, ...]


def admit(query: str) -> AdmittedQuery:
    """Check `query` (PKU BASE style) and parse it; KBError with a one-line
    reason when it is too large, too deep, malformed, or not SELECT/ASK."""
    admitted, prepared = admit_prepared(query, _empty_store())
    # pyoxigraph's results must be dropped on the thread that made them.
    del prepared
    return admitted


def admit_prepared(query: str, store: ox.Store) -> tuple[AdmittedQuery, ox.QuerySolutions | ox.QueryBoolean]:
    """`admit`, parsing the query by preparing it on `store`: also returns the
    prepared results (lazy solutions of a SELECT, the answer of an ASK), which
    the caller must read or drop on this thread. OSError from `store` passes
    through."""
    standard = standard_text(query)
    try:
        prepared = store.query(standard)
    except SyntaxError as error:
        if _UPDATE_WORD.match(query):
            raise KBError("updates are refused: coqa only reads the knowledge base (SELECT or ASK queries)") from None
        raise KBError(f"bad SPARQL: {str(error).splitlines()[0]}") from None
    if isinstance(prepared, ox.QuerySolutions):
        return AdmittedQuery(standard, SELECT, tuple(v.value for v in prepared.variables)), prepared
    if isinstance(prepared, ox.QueryBoolean):
        return AdmittedQuery(standard, ASK, ()), prepared
    # Read nothing from CONSTRUCT or DESCRIBE results: drop them here, before
    # the exception can hold them.
    del prepared
    raise KBError("only SELECT and ASK queries are accepted (CONSTRUCT and DESCRIBE are not)")


def check_bounds(
    query: str, max_chars: int = MAX_QUERY_CHARS, max_patterns: int = MAX_TRIPLE_PATTERNS, max_unions: int = MAX_UNIONS
) -> None:
    """KBError when `query` exceeds the size, nesting, UNION or pattern
    bounds, or holds the SERVICE keyword."""
    _check_length(query, max_chars)
    # Strings, IRIs, names and comments replaced by a space: their content is not structure.
    structure, service = structure_text(query)
    _check_structure(structure, service, max_patterns, max_unions)


def standard_text(query: str) -> str:
    """`check_bounds(query)`, then its standard-SPARQL text
    (`to_standard_sparql`), checked as `check_rewritten` would check it; in
    one pass over the tokens. The rewrite changes only IRI references and
    names, each into one IRI reference (`_standard_reference` makes sure),
    and drops comments, which end at a line end or the end of the text, so
    its structure is the query's own; and it makes a text at most 8 times
    as long (`<x>` becomes a 24-character IRI), within MAX_REWRITTEN_CHARS.
    Every query any backend runs passes here, and tokenizing it three times
    was a tenth of a question's time on the embedded store."""
    _check_length(query, MAX_QUERY_CHARS)
    standard, structure, service = rewrite_references(query, _standard_reference)
    _check_structure(structure, service, MAX_TRIPLE_PATTERNS, MAX_UNIONS)
    return standard


@lru_cache(maxsize=1 << 16)
def _standard_reference(token: Token) -> str:
    """`standard_reference(token)`, made sure to read as one IRI reference."""
    rewritten = standard_reference(token)
    if list(tokens(rewritten)) != [Token(IRI, rewritten)]:
        raise KBError(f"a name does not rewrite into one IRI: {token.text[:80]}")
    return rewritten


def _check_length(text: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise KBError(f"the query is too long: {len(text):,} characters (at most {max_chars:,})")


def _check_structure(structure: str, service: bool, max_patterns: int, max_unions: int) -> None:
    """KBError when the query's structure (`structure_text`) holds SERVICE or
    exceeds the nesting, UNION or pattern bounds."""
    if service:
        raise KBError("SERVICE is refused: coqa queries only its own knowledge base")
    depth = deepest = 0
    for char in _BRACKET.findall(structure):  # brackets only: every query passes here
        if char in "({[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")}]":
            depth -= 1
    if deepest > MAX_NESTING:
        raise KBError(f"the query is nested too deeply: {deepest} levels of brackets (at most {MAX_NESTING})")
    unions = len(_UNION.findall(structure))
    if unions > max_unions:
        raise KBError(f"the query has too many UNIONs: {unions:,} (at most {max_unions:,})")
    patterns = len(_PATTERN_END.findall(structure))
    if patterns > max_patterns:
        raise KBError(f"the query has too many triple patterns: about {patterns:,} (at most {max_patterns})")


def check_rewritten(text: str) -> None:
    """`check_bounds` for a text a backend made from an admitted query, just
    before sending it: the same nesting bound, the wider size and pattern
    bounds a rewrite needs (gStore's VALUES rewrite makes a UNION per value)."""
    try:
        check_bounds(text, MAX_REWRITTEN_CHARS, MAX_REWRITTEN_PATTERNS, MAX_REWRITTEN_PATTERNS)
    except KBError as error:
        raise KBError(f"once rewritten for the engine, {error}") from None


@lru_cache(maxsize=1)
def _empty_store() -> ox.Store:
    return ox.Store()
