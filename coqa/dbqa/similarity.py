"""Features of a sentence from the lexicon (coqa.dbqa.lexicon): how much of
the question it says in other words, and how rare (over the training corpus,
not only the question's document) the question words it leaves out are.

`lexicon_features(lexicon, asked, document)` returns one row per sentence
with exactly LEXICON_FEATURE_NAMES. A question word counts as said when the
sentence's text contains it (1.0), else by its best cosine with a word of the
sentence (0 when either has no vector, negative cosines as 0).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from coqa.dbqa.lexicon import Lexicon
from coqa.dbqa.text import Segmented

LEXICON_FEATURE_NAMES: tuple[str, ...] = (
    "corpus_idf_overlap",
    "corpus_missing_idf",
    "corpus_missing_max_idf",
    "soft_alignment",
    "soft_alignment_idf",
    "soft_alignment_idf_gap",
    "soft_missing",
    "vector_cosine",
    "vector_cosine_gap",
)


def lexicon_features(lexicon: Lexicon, asked: Segmented, document: Sequence[Segmented]) -> list[dict[str, float]]:
    """One row of LEXICON_FEATURE_NAMES per sentence of the document, in order."""
    words = list(dict.fromkeys(asked.content_words))
    idf = [lexicon.word_idf(word) for word in words]
    total_idf = math.fsum(idf)
    asked_vectors = lexicon.rows(words)
    asked_mean = _unit(np.asarray(idf, dtype=np.float32) @ asked_vectors)
    # The document's words once: their vectors, IDF and cosines with the question's words.
    sentence_words = [list(dict.fromkeys(sentence.content_words)) for sentence in document]
    column = {word: position for position, word in enumerate(dict.fromkeys(w for ws in sentence_words for w in ws))}
    document_vectors = lexicon.rows(list(column))
    document_idf = np.asarray([lexicon.word_idf(word) for word in column], dtype=np.float32)
    cosines = np.maximum(asked_vectors @ document_vectors.T, 0.0)
    rows = []
    for sentence, own in zip(document, sentence_words):
        columns = [column[word] for word in own]
        found = [word in sentence.text for word in words]
        best = cosines[:, columns].max(axis=1).tolist() if columns else [0.0] * len(words)
        said = [1.0 if hit else cosine for hit, cosine in zip(found, best)]
        missing = [cosine for hit, cosine in zip(found, best) if not hit]
        sentence_mean = _unit(document_idf[columns] @ document_vectors[columns])
        rows.append(
            {
                "corpus_idf_overlap": math.fsum(w for w, hit in zip(idf, found) if hit) / total_idf if total_idf else 0.0,
                "corpus_missing_idf": math.fsum(w for w, hit in zip(idf, found) if not hit),
                "corpus_missing_max_idf": max((w for w, hit in zip(idf, found) if not hit), default=0.0),
                "soft_alignment": math.fsum(said) / len(said) if said else 0.0,
                "soft_alignment_idf": math.fsum(w * s for w, s in zip(idf, said)) / total_idf if total_idf else 0.0,
                "soft_missing": math.fsum(missing) / len(missing) if missing else -1.0,
                "vector_cosine": float(asked_mean @ sentence_mean),
            }
        )
    for name in ("soft_alignment_idf", "vector_cosine"):
        best_value = max((row[name] for row in rows), default=0.0)
        for row in rows:
            row[name + "_gap"] = row[name] - best_value
    return rows


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
