"""Training questions as TF-IDF vectors, indexed by the predicates and shape of
their gold query: how similar a question is to those that used a predicate."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import sparse

from coqa.ranking.keys import is_predicate_key


class CharTfidf:
    """TF-IDF over character 1-3 grams, L2-normalised, sublinear tf, smoothed idf
    (the definitions of scikit-learn's TfidfVectorizer(analyzer="char",
    ngram_range=(1, 3), sublinear_tf=True)). Written here so that the fitted
    statistic is a vocabulary and an idf array saved as NPZ, never a pickle."""

    _WHITE_SPACE = re.compile(r"\s\s+")

    def __init__(self, vocabulary: Sequence[str], idf: np.ndarray) -> None:
        self.vocabulary = list(vocabulary)
        self.index = {gram: i for i, gram in enumerate(self.vocabulary)}
        self.idf = idf

    @classmethod
    def _grams(cls, text: str) -> Counter[str]:
        text = cls._WHITE_SPACE.sub(" ", text.lower())
        return Counter(text[i : i + n] for n in (1, 2, 3) for i in range(len(text) - n + 1))

    @classmethod
    def fit(cls, texts: Sequence[str]) -> tuple["CharTfidf", sparse.csr_matrix]:
        """The vectorizer fitted on `texts` and their matrix."""
        counts = [cls._grams(text) for text in texts]
        vocabulary = sorted({gram for row in counts for gram in row})
        document_frequency = Counter(gram for row in counts for gram in row)
        df = np.array([document_frequency[gram] for gram in vocabulary], dtype=np.float64)
        idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
        vectorizer = cls(vocabulary, idf)
        return vectorizer, vectorizer._matrix(counts)

    def vector(self, text: str) -> np.ndarray:
        """The row `fit` makes of `text`, dense: the same bits as `_matrix`
        computes (the squares summed in column order by the reduction scipy
        uses, then scaled by the inverse norm), without building sparse
        matrices for one row, which took most of a question's similarity time."""
        entries = sorted(
            (column, (1.0 + math.log(count)) * self.idf[column])
            for gram, count in self._grams(text).items()
            if (column := self.index.get(gram)) is not None
        )
        dense = np.zeros(len(self.vocabulary), dtype=np.float64)
        if entries:
            columns = np.array([column for column, _ in entries], dtype=np.intp)
            values = np.array([value for _, value in entries], dtype=np.float64)
            dense[columns] = (1.0 / np.sqrt(np.add.reduceat(values * values, [0]))) * values
        return dense

    def _matrix(self, counts: Sequence[Counter[str]]) -> sparse.csr_matrix:
        rows, columns, values = [], [], []
        for row, grams_of_row in enumerate(counts):
            for gram, count in grams_of_row.items():
                column = self.index.get(gram)
                if column is not None:
                    rows.append(row)
                    columns.append(column)
                    values.append((1.0 + math.log(count)) * self.idf[column])
        matrix = sparse.csr_matrix((values, (rows, columns)), shape=(len(counts), len(self.vocabulary)), dtype=np.float64)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        norms[norms == 0.0] = 1.0
        return sparse.csr_matrix(sparse.diags(1.0 / norms) @ matrix)


class PredicateNeighbours:
    """Training questions indexed by the predicates of their gold query.

    A predicate scores by how similar the question is to the training
    questions that used it (cosine of TF-IDF over character 1-3 grams).
    `folds` (training only) lets a cross-fitting fold hide its own questions.
    """

    def __init__(
        self, vectorizer: CharTfidf, matrix: sparse.csr_matrix, rows: Mapping[str, np.ndarray], folds: np.ndarray | None
    ) -> None:
        self.vectorizer = vectorizer
        self.matrix = matrix
        self.rows = dict(rows)
        self.folds = folds
        gold: dict[int, list[str]] = defaultdict(list)
        for name, indices in self.rows.items():
            if is_predicate_key(name):
                for row in indices:
                    gold[int(row)].append(name)
        self.gold_predicates = {row: tuple(names) for row, names in gold.items()}

    @classmethod
    def fit(cls, texts: Sequence[str], predicates: Sequence[Iterable[str]], folds: Sequence[int]) -> "PredicateNeighbours":
        vectorizer, matrix = CharTfidf.fit(texts)
        rows: dict[str, list[int]] = defaultdict(list)
        for row, names in enumerate(predicates):
            for name in sorted(set(names)):
                rows[name].append(row)
        return cls(vectorizer, matrix, {name: np.array(indices) for name, indices in rows.items()}, np.array(folds))

    def similarities(self, text: str, fold: int | None) -> np.ndarray:
        """Similarity of `text` to every training question (0 for the hidden fold)."""
        # A sparse matrix times a dense vector: one pass over the matrix, where a
        # sparse-sparse product takes two and builds a sparse result (same sums, same order).
        sims = self.matrix @ self.vectorizer.vector(text)
        if fold is not None and self.folds is not None:
            sims[self.folds == fold] = 0.0
        return sims

    def score(self, predicate: str, sims: np.ndarray) -> tuple[float, float]:
        """(best similarity, mean of the three best) over the questions that used `predicate`."""
        rows = self.rows.get(predicate)
        if rows is None:
            return 0.0, 0.0
        values = np.sort(sims[rows])[::-1]
        return float(values[0]), float(values[:3].sum() / 3.0)

    def nearest(self, sims: np.ndarray, count: int) -> list[tuple[float, tuple[str, ...]]]:
        """The `count` training questions most similar to the question of `sims`
        (those with a positive similarity), each as (similarity, its gold predicates)."""
        count = min(count, len(sims))
        if count == 0:
            return []
        top = np.argpartition(-sims, count - 1)[:count]
        return [(float(sims[row]), self.gold_predicates.get(int(row), ())) for row in top if sims[row] > 0.0]

    def save(self, path: Path) -> None:
        """Arrays only (loaded with allow_pickle=False); the training folds are not kept."""
        names = sorted(self.rows)
        np.savez_compressed(
            path,
            vocabulary=np.array(self.vectorizer.vocabulary, dtype=str),
            idf=self.vectorizer.idf,
            data=self.matrix.data,
            indices=self.matrix.indices,
            indptr=self.matrix.indptr,
            shape=np.array(self.matrix.shape),
            predicates=np.array(names, dtype=str),
            predicate_offsets=np.cumsum([0] + [len(self.rows[name]) for name in names]),
            predicate_rows=np.concatenate([self.rows[name] for name in names]) if names else np.array([], dtype=int),
        )

    @classmethod
    def load(cls, path: Path) -> "PredicateNeighbours":
        with np.load(path, allow_pickle=False) as arrays:
            vectorizer = CharTfidf([str(gram) for gram in arrays["vocabulary"]], arrays["idf"])
            matrix = sparse.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]), shape=tuple(arrays["shape"]))
            offsets, all_rows = arrays["predicate_offsets"], arrays["predicate_rows"]
            rows = {str(name): all_rows[offsets[i] : offsets[i + 1]] for i, name in enumerate(arrays["predicates"])}
        return cls(vectorizer, matrix, rows, None)
