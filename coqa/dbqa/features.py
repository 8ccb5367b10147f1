"""Feature rows of a question's candidate sentences, each judged within its document.

`document_features(question, sentences)` returns one row (feature name ->
value, exactly FEATURE_NAMES) per sentence, in order. Word statistics (IDF,
BM25) are computed over the question's own document: its sentences are the
collection, so a word rare in the document weighs more than one every
sentence repeats. Relative features (`*_gap`, `*_rank`) compare a sentence
with the best of its document. Everything iterates over lists in text order
and sums with math.fsum, so rows do not depend on hash seeds.
"""

from __future__ import annotations

import math
from collections import Counter
from difflib import SequenceMatcher
from typing import Sequence

from coqa.dbqa.answer_types import (
    TYPE_NAMES,
    SentenceValues,
    fits,
    question_type,
    sentence_values,
)
from coqa.dbqa.text import INTERROGATIVES, Segmented, ngrams, segment

BM25_K1 = 1.2
BM25_B = 0.75
VALUE_CAP = 5  # counts of values in a sentence above this say nothing more
DEFINES = "是为指即（("

VALUE_FEATURES = tuple(f"has_{name}" for name in SentenceValues.__dataclass_fields__)
FEATURE_NAMES: tuple[str, ...] = (
    "char_overlap",
    "bigram_overlap",
    "trigram_overlap",
    "word_overlap",
    "word_in_text_overlap",
    "idf_overlap",
    "idf_overlap_gap",
    "idf_overlap_rank",
    "char_overlap_gap",
    "bm25",
    "bm25_share",
    "bm25_rank",
    "bm25_bigram",
    "bm25_bigram_share",
    "bm25_bigram_rank",
    "lcs",
    "lcs_ratio",
    "lcs_start",
    "lcs_gap",
    "first_match_position",
    "match_span",
    "missing_words",
    "missing_idf",
    "missing_max_idf",
    "new_word_share",
    "defines_subject",
    "slot_context",
    "previous_idf_overlap",
    "next_idf_overlap",
    "position",
    "position_share",
    "document_size",
    "length",
    "length_ratio",
    "question_length",
    "question_type",
    "type_fit",
) + VALUE_FEATURES


def document_features(question: str, sentences: Sequence[str]) -> list[dict[str, float]]:
    """One feature row per sentence of the question's document, in order."""
    asked = segment(question)
    segmented = [segment(sentence) for sentence in sentences]
    return features_of_segmented(asked, segmented)


def features_of_segmented(asked: Segmented, document: Sequence[Segmented]) -> list[dict[str, float]]:
    """`document_features` over text already segmented."""
    words = list(dict.fromkeys(asked.content_words))
    core = "".join(words)
    kind = question_type(asked.text)
    count = len(document)
    word_idf = _idf([word for word in words], [sentence.text for sentence in document], count)
    bigrams = list(dict.fromkeys(ngrams(core, 2)))
    bigram_lists = [ngrams(sentence.chars, 2) for sentence in document]
    context = slot_context(asked)
    rows = [_sentence_row(asked, words, core, word_idf, sentence) for sentence in document]
    for row, sentence in zip(rows, document):
        row["slot_context"] = _share(context, sentence.text) if context else -1.0
    word_bm25 = _bm25(words, [list(sentence.words) for sentence in document])
    bigram_bm25 = _bm25(bigrams, bigram_lists)
    mean_length = math.fsum(len(sentence.text) for sentence in document) / count if count else 0.0
    for index, (row, sentence) in enumerate(zip(rows, document)):
        values = sentence_values(sentence)
        row.update(
            bm25=word_bm25[index],
            bm25_bigram=bigram_bm25[index],
            position=float(index),
            position_share=index / (count - 1) if count > 1 else 0.0,
            document_size=float(count),
            length=float(len(sentence.text)),
            length_ratio=len(sentence.text) / mean_length if mean_length else 1.0,
            question_length=float(len(core)),
            question_type=float(TYPE_NAMES.index(kind)),
            type_fit=fits(kind, values),
        )
        row.update({f"has_{name}": float(min(getattr(values, name), VALUE_CAP)) for name in SentenceValues.__dataclass_fields__})
    _relative(rows, "idf_overlap", gap="idf_overlap_gap", rank="idf_overlap_rank")
    _relative(rows, "char_overlap", gap="char_overlap_gap")
    _relative(rows, "lcs", gap="lcs_gap")
    _relative(rows, "bm25", share="bm25_share", rank="bm25_rank")
    _relative(rows, "bm25_bigram", share="bm25_bigram_share", rank="bm25_bigram_rank")
    for index, row in enumerate(rows):
        row["previous_idf_overlap"] = rows[index - 1]["idf_overlap"] if index > 0 else -1.0
        row["next_idf_overlap"] = rows[index + 1]["idf_overlap"] if index + 1 < count else -1.0
    return rows


def _sentence_row(asked: Segmented, words: list[str], core: str, idf: dict[str, float], sentence: Segmented) -> dict[str, float]:
    """The features of one sentence that need no other sentence (but the document's IDF)."""
    text, chars = sentence.text, sentence.chars
    sentence_words = set(sentence.words)
    found = [word for word in words if word in text]
    missing = [word for word in words if word not in text]
    total_idf = math.fsum(idf[word] for word in words)
    lcs_start, lcs = _longest_common_substring(asked.chars, chars)
    starts = [text.find(word) for word in found]
    positions = [(start, start + len(word)) for start, word in zip(starts, found)]
    new_words = [word for word in sentence.content_words if word not in asked.text]
    return {
        "char_overlap": _share(list(dict.fromkeys(core)), chars),
        "bigram_overlap": _share(list(dict.fromkeys(ngrams(core, 2))), chars),
        "trigram_overlap": _share(list(dict.fromkeys(ngrams(core, 3))), chars),
        "word_overlap": sum(1 for word in words if word in sentence_words) / len(words) if words else 0.0,
        "word_in_text_overlap": len(found) / len(words) if words else 0.0,
        "idf_overlap": math.fsum(idf[word] for word in found) / total_idf if total_idf else 0.0,
        "lcs": float(lcs),
        "lcs_ratio": lcs / len(asked.chars) if asked.chars else 0.0,
        "lcs_start": lcs_start / len(chars) if chars and lcs else 1.0,
        "first_match_position": min(start for start, _ in positions) / len(text) if positions else 1.0,
        "match_span": (max(end for _, end in positions) - min(start for start, _ in positions)) / len(text) if positions else 0.0,
        "missing_words": float(len(missing)),
        "missing_idf": math.fsum(idf[word] for word in missing),
        "missing_max_idf": max((idf[word] for word in missing), default=0.0),
        "new_word_share": len(new_words) / len(sentence.content_words) if sentence.content_words else 0.0,
        "defines_subject": 1.0 if any(_followed_by(text, word, DEFINES) for word in words[:3]) else 0.0,
    }


def slot_context(asked: Segmented) -> list[str]:
    """The content words nearest before and after the question's first
    interrogative word (谁, 哪里, 多少...): the words an answer sentence states
    its answer next to. Empty when the question has no interrogative."""
    words = list(asked.words)
    slot = next((i for i, word in enumerate(words) if word in INTERROGATIVES), None)
    if slot is None:
        return []
    content = set(asked.content_words)
    before = next((words[i] for i in range(slot - 1, -1, -1) if words[i] in content), None)
    after = next((words[i] for i in range(slot + 1, len(words)) if words[i] in content), None)
    return [word for word in (before, after) if word]


def _followed_by(text: str, word: str, characters: str) -> bool:
    """True when some occurrence of `word` in `text` is followed by one of `characters`."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if end < len(text) and text[end] in characters:
            return True
        start = text.find(word, start + 1)
    return False


def _share(pieces: list[str], text: str) -> float:
    """The share of `pieces` that occur in `text` (0 when there are none)."""
    return sum(1 for piece in pieces if piece in text) / len(pieces) if pieces else 0.0


def _longest_common_substring(a: str, b: str) -> tuple[int, int]:
    """(start in b, length) of the longest common substring of a and b."""
    if not a or not b:
        return 0, 0
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.b, match.size


def _idf(terms: list[str], texts: list[str], count: int) -> dict[str, float]:
    """BM25's IDF of each term over the document's sentences (a term is in a
    sentence when the sentence's text contains it)."""
    idf = {}
    for term in terms:
        frequency = sum(1 for text in texts if term in text)
        idf[term] = math.log(1.0 + (count - frequency + 0.5) / (frequency + 0.5))
    return idf


def _bm25(terms: list[str], documents: list[list[str]]) -> list[float]:
    """Okapi BM25 of each sentence (a list of terms) for the query `terms`, the
    document's sentences being the collection. Written here because the
    collection is one document of at most a few dozen sentences: a retrieval
    library's index would cost more than the 10 lines of the formula."""
    count = len(documents)
    if not count or not terms:
        return [0.0] * count
    average = math.fsum(len(terms_of) for terms_of in documents) / count or 1.0
    counts = [Counter(terms_of) for terms_of in documents]
    frequency = {term: sum(1 for c in counts if term in c) for term in terms}
    scores = []
    for terms_of, term_counts in zip(documents, counts):
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(terms_of) / average)
        parts = []
        for term in terms:
            tf = term_counts.get(term, 0)
            if tf:
                idf = math.log(1.0 + (count - frequency[term] + 0.5) / (frequency[term] + 0.5))
                parts.append(idf * tf * (BM25_K1 + 1.0) / (tf + norm))
        scores.append(math.fsum(parts))
    return scores


def _relative(rows: list[dict[str, float]], name: str, gap: str = "", share: str = "", rank: str = "") -> None:
    """Add to each row its `name` feature against the document's best: the
    difference (`gap`), the ratio (`share`), the count of sentences above (`rank`)."""
    values = [row[name] for row in rows]
    best = max(values, default=0.0)
    for row, value in zip(rows, values):
        if gap:
            row[gap] = value - best
        if share:
            row[share] = value / best if best > 0 else 0.0
        if rank:
            row[rank] = float(sum(1 for other in values if other > value))
