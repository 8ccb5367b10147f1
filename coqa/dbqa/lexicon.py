"""What DBQA learns about words from the text it is trained on: how rare each
word is in a corpus of many documents (IDF) and a vector per word for
similarity beyond literal overlap.

The vectors are the truncated SVD of the positive pointwise mutual
information (PPMI) matrix of words and their neighbours within WINDOW words,
with the context distribution smoothed by CONTEXT_POWER (Levy, Goldberg and
Dagan 2015: on corpora of this size as good as word2vec's): deterministic,
CPU-only, and no dependency beyond numpy and scipy. The corpus is what
training has at hand: the sentences and questions of the training file, and
the text given with `coqa train --lexicon-text` (coqa.dbqa.corpus).

`Lexicon.fit(texts)` learns it; `save`/`load` write and read two portable
parts, a JSON vocabulary with each word's IDF and a float16 .npy matrix of
unit vectors (read with allow_pickle=False).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy.sparse import coo_matrix, csr_matrix

from coqa.dbqa.text import Segmented

VOCABULARY_FILE = "lexicon.json"
VECTORS_FILE = "vectors.npy"
WINDOW = 4
CONTEXT_POWER = 0.75
DIMENSIONS = 100
MIN_COUNT = 2
MAX_WORDS = 40_000
SVD_SEED = 0
POWER_ITERATIONS = 3
OVERSAMPLING = 20


@dataclass
class Lexicon:
    """Words (`index`: word -> row), their IDF over the corpus's texts
    (`idf`; `unknown_idf` for a word never seen) and unit vectors (`vectors`,
    one row per word; zero rows for words too rare to have one)."""

    index: dict[str, int]
    idf: np.ndarray
    unknown_idf: float
    vectors: np.ndarray

    @classmethod
    def fit(cls, texts: Sequence[Segmented]) -> "Lexicon":
        """Learn IDF and vectors from segmented texts (each text is one
        document for IDF, punctuation left out). Deterministic."""
        token_lists = [[word for word, tag in zip(text.words, text.tags) if tag != "x"] for text in texts]
        counts: dict[str, int] = {}
        for tokens in token_lists:
            for word in tokens:
                counts[word] = counts.get(word, 0) + 1
        kept = sorted((word for word, count in counts.items() if count >= MIN_COUNT), key=lambda word: (-counts[word], word))
        index = {word: row for row, word in enumerate(kept[:MAX_WORDS])}
        frequency = np.zeros(len(index))
        for tokens in token_lists:
            for row in {index[word] for word in tokens if word in index}:
                frequency[row] += 1
        total = len(texts)
        idf = np.log((total + 1.0) / (frequency + 1.0)).astype(np.float32)
        vectors = _ppmi_svd([[index[word] for word in tokens if word in index] for tokens in token_lists], len(index))
        return cls(index, idf, float(np.float32(math.log(total + 1.0))), vectors)

    def word_idf(self, word: str) -> float:
        row = self.index.get(word)
        return float(self.idf[row]) if row is not None else self.unknown_idf

    def rows(self, words: Sequence[str]) -> np.ndarray:
        """The vectors of `words` (a zero row for a word without one)."""
        matrix = np.zeros((len(words), self.vectors.shape[1]), dtype=np.float32)
        for position, word in enumerate(words):
            row = self.index.get(word)
            if row is not None:
                matrix[position] = self.vectors[row]
        return matrix

    def save(self, directory: Path) -> list[str]:
        """Write the vocabulary with IDF (JSON) and the vectors (.npy); their names."""
        words = sorted(self.index, key=self.index.__getitem__)
        vocabulary = {"words": words, "idf": [float(value) for value in self.idf], "unknown_idf": self.unknown_idf}
        (directory / VOCABULARY_FILE).write_text(json.dumps(vocabulary, ensure_ascii=False), encoding="utf-8")
        np.save(directory / VECTORS_FILE, self.vectors.astype(np.float16), allow_pickle=False)
        return [VOCABULARY_FILE, VECTORS_FILE]

    @classmethod
    def load(cls, directory: Path) -> "Lexicon":
        """The lexicon saved in `directory`; ValueError when its parts disagree."""
        vocabulary = json.loads((directory / VOCABULARY_FILE).read_text(encoding="utf-8"))
        vectors = np.load(directory / VECTORS_FILE, allow_pickle=False).astype(np.float32)
        words, idf = vocabulary["words"], vocabulary["idf"]
        if vectors.ndim != 2 or len(words) != vectors.shape[0] or len(idf) != len(words):
            raise ValueError("its vocabulary and vectors have different numbers of words")
        return cls({word: row for row, word in enumerate(words)}, np.asarray(idf, dtype=np.float32), float(vocabulary["unknown_idf"]), vectors)


def _ppmi_svd(id_lists: list[list[int]], size: int) -> np.ndarray:
    """Unit word vectors (size x DIMENSIONS, float32) from the PPMI of words
    and their neighbours within WINDOW, reduced by truncated SVD."""
    dimensions = min(DIMENSIONS, size - 1)
    if dimensions < 1:
        return np.zeros((size, max(dimensions, 1)), dtype=np.float32)
    ids = np.array([word for id_list in id_lists for word in id_list], dtype=np.int64)
    owner = np.repeat(np.arange(len(id_lists)), [len(id_list) for id_list in id_lists])
    left, right = [], []
    for distance in range(1, WINDOW + 1):
        same_text = owner[:-distance] == owner[distance:]
        left += [ids[:-distance][same_text], ids[distance:][same_text]]
        right += [ids[distance:][same_text], ids[:-distance][same_text]]
    rows, columns = np.concatenate(left), np.concatenate(right)
    pairs = coo_matrix((np.ones(len(rows)), (rows, columns)), shape=(size, size))
    counts = csr_matrix(pairs)  # duplicate pairs summed
    total = counts.sum()
    word_totals = np.asarray(counts.sum(axis=1)).ravel()
    context = np.asarray(counts.sum(axis=0)).ravel() ** CONTEXT_POWER
    context_share = context / context.sum()
    coo = counts.tocoo()
    pmi = np.log(coo.data * 1.0 / (word_totals[coo.row] / total * context_share[coo.col] * total))
    positive = pmi > 0
    ppmi = csr_matrix((pmi[positive], (coo.row[positive], coo.col[positive])), shape=(size, size))
    vectors = _truncated_svd(ppmi, dimensions)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # Rounded as saved (float16), so training reads the vectors scoring will read.
    return (vectors / np.where(norms > 0, norms, 1.0)).astype(np.float16).astype(np.float32)


def _truncated_svd(matrix: csr_matrix, dimensions: int) -> np.ndarray:
    """The first `dimensions` left singular vectors of a sparse matrix, each
    scaled by the square root of its singular value: the randomized range
    finder with power iterations (Halko, Martinsson and Tropp 2011), seeded.
    Written here because scipy's svds (ARPACK) took 87 s for 40,000 words on
    the loaded 2-core machine where this takes a few seconds, and the library
    that has it (scikit-learn) is a large dependency for ten lines."""
    size = matrix.shape[1]
    probe = np.random.default_rng(SVD_SEED).standard_normal((size, min(size, dimensions + OVERSAMPLING)))
    basis, _ = np.linalg.qr(matrix @ probe)
    for _ in range(POWER_ITERATIONS):
        basis, _ = np.linalg.qr(matrix.T @ basis)
        basis, _ = np.linalg.qr(matrix @ basis)
    small_left, singular, _ = np.linalg.svd(np.asarray((matrix.T @ basis).T), full_matrices=False)
    return (basis @ small_left[:, :dimensions]) * np.sqrt(singular[:dimensions])
