"""Predicate paraphrases: how question wording translates into predicate names, learned from training.

A question often asks for a predicate in other words than its name (`多少钱`
for `价格`, `哪一年` for `建造时间`). Training pairs the wording of each
question (its characters outside the gold subject's mention) with the name
of its gold predicate; IBM model 1 (Brown et al. 1993), fitted on these pairs
by expectation-maximisation, learns from them which characters of a wording
stand for which characters of a name, each direction with an empty word that
absorbs what translates to nothing (`请问`, `吗`). A candidate's predicate
then scores by how well its name and the question's wording translate into
each other (`PredicateParaphrases.scores`), also for names training never
saw, since the tables are over characters. Written here rather than taken
from a library: model 1 over a few thousand characters is forty lines, and
the tables are saved as JSON, never pickled.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

PARAPHRASES_FILE = "paraphrases.json"
EMPTY = ""  # model 1's empty word: what a unit is translated from when nothing else explains it
ITERATIONS = 8
# Translation probabilities below this are dropped when a table is fitted (they
# change no score by much and are most of its entries); an unexplained unit
# scores as if translated with probability FLOOR.
PRUNED_BELOW = 1e-3
FLOOR = 1e-6
# Characters that carry no wording: the mark `remove_spans` leaves for a mention, punctuation, 的.
_SKIPPED = frozenset("|?,.!;:。,、 的")


def running_sum(values: Iterable[float]) -> float:
    """The floats added left to right. Not `sum`, which compensates rounding
    from Python 3.12 on: the tables and scores must be the same bits on every
    supported Python (a model is compared byte for byte)."""
    total = 0.0
    for value in values:
        total += value
    return total


def units(text: str) -> list[str]:
    """The characters of a wording or a name that translation counts (`_SKIPPED` left out)."""
    return [char for char in text if char not in _SKIPPED]


@dataclass(frozen=True)
class TranslationTable:
    """IBM model 1: `probabilities[source][target]` is P(target unit | source unit)."""

    probabilities: Mapping[str, Mapping[str, float]]

    @classmethod
    def fit(cls, pairs: Sequence[tuple[Sequence[str], Sequence[str]]], iterations: int = ITERATIONS) -> "TranslationTable":
        """Model 1 fitted on (source units, target units) pairs by `iterations` EM
        steps from uniform probabilities, then pruned (PRUNED_BELOW)."""
        table: dict[tuple[str, str], float] = defaultdict(lambda: 1.0)
        for _ in range(iterations):
            counts: dict[tuple[str, str], float] = defaultdict(float)
            totals: dict[str, float] = defaultdict(float)
            for source, target in pairs:
                sources = [*source, EMPTY]
                for unit in target:
                    weights = [table[(unit, word)] for word in sources]
                    norm = running_sum(weights)
                    for word, weight in zip(sources, weights):
                        counts[(unit, word)] += weight / norm
                        totals[word] += weight / norm
            table = defaultdict(float, {key: count / totals[key[1]] for key, count in counts.items()})
        probabilities: dict[str, dict[str, float]] = defaultdict(dict)
        for (unit, word), probability in sorted(table.items()):
            if probability >= PRUNED_BELOW:
                probabilities[word][unit] = probability
        return cls(dict(probabilities))

    def score(self, source: Sequence[str], target: Sequence[str]) -> float:
        """The mean over the target units of log P(unit | source) under model 1
        (0 for an empty target)."""
        if not target:
            return 0.0
        rows = [self.probabilities.get(word, {}) for word in [*source, EMPTY]]
        total = running_sum(math.log(max(running_sum(row.get(unit, 0.0) for row in rows) / len(rows), FLOOR)) for unit in target)
        return total / len(target)


@dataclass(frozen=True)
class PredicateParaphrases:
    """Model 1 in both directions between question wording and predicate names."""

    name_from_wording: TranslationTable  # P(name unit | wording unit)
    wording_from_name: TranslationTable  # P(wording unit | name unit)

    @classmethod
    def fit(cls, pairs: Sequence[tuple[str, str]]) -> "PredicateParaphrases":
        """Fitted on (wording, predicate name in its matching form) pairs."""
        unit_pairs = [(units(wording), units(name)) for wording, name in pairs]
        return cls(TranslationTable.fit(unit_pairs), TranslationTable.fit([(name, wording) for wording, name in unit_pairs]))

    def scores(self, wording: str, name: str) -> tuple[float, float]:
        """(how well the wording explains the name, how well the name explains the wording)."""
        wording_units, name_units = units(wording), units(name)
        return self.name_from_wording.score(wording_units, name_units), self.wording_from_name.score(name_units, wording_units)

    def against(self, wording: str) -> "WordingParaphrases":
        """`scores` of many names against one wording (a question's candidates share it)."""
        return WordingParaphrases(self, wording)

    def to_json(self) -> dict[str, Mapping[str, Mapping[str, float]]]:
        return {"name_from_wording": self.name_from_wording.probabilities, "wording_from_name": self.wording_from_name.probabilities}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> "PredicateParaphrases":
        return cls(TranslationTable(data["name_from_wording"]), TranslationTable(data["wording_from_name"]))  # type: ignore[arg-type]

    def save(self, directory: Path) -> str:
        (directory / PARAPHRASES_FILE).write_text(json.dumps(self.to_json(), ensure_ascii=False, sort_keys=True), encoding="utf-8")
        return PARAPHRASES_FILE

    @classmethod
    def load(cls, directory: Path) -> "PredicateParaphrases":
        return cls.from_json(json.loads((directory / PARAPHRASES_FILE).read_text(encoding="utf-8")))


class WordingParaphrases:
    """`PredicateParaphrases` against one wording, with the same figures as
    `TranslationTable.score`, memoised by name, by unit and by path prefix:
    the candidates of a question share its wording, their predicates and most
    characters of their names, and scoring each (wording, name) pair afresh
    cost half of a question's ranking time."""

    def __init__(self, paraphrases: PredicateParaphrases, wording: str) -> None:
        self.wording = units(wording)
        self.rows = [paraphrases.name_from_wording.probabilities.get(word, {}) for word in [*self.wording, EMPTY]]
        self.backward = paraphrases.wording_from_name.probabilities
        self.unit_probabilities: dict[str, float] = {}  # name unit -> P(unit | wording)
        self.columns: dict[str, list[float]] = {}  # name unit -> P(wording unit | it) for each wording unit
        self.memo: dict[tuple[str, bool], float] = {}  # (name, wording direction) -> score
        # names of a path's first predicates -> the column sums of their units, and how many units they have
        self.prefix_sums: dict[tuple[str, ...], tuple[list[float], int]] = {(): ([0.0] * len(self.wording), 0)}

    def name_score(self, name: str) -> float:
        """How well the wording explains the name: `scores(wording, name)[0]`."""
        if (name, False) not in self.memo:
            self.memo[(name, False)] = self._name_score(name)
        return self.memo[(name, False)]

    def path_wording_score(self, names: tuple[str, ...]) -> float:
        """How well the names of a path's predicates together explain the
        wording: `scores(wording, "".join(names))[1]`, the same bits. Paths
        share their first predicates (a chain's first hop is also a one-hop
        candidate), so the sums over the units of each prefix of `names` are
        kept and the sums go on from there, adding the same values in the
        same order."""
        joined = "".join(names)
        if (joined, True) not in self.memo:
            self.memo[(joined, True)] = self._wording_score(names)
        return self.memo[(joined, True)]

    def _name_score(self, name: str) -> float:
        target = units(name)
        if not target:
            return 0.0
        total = 0.0
        for unit in target:
            if unit not in self.unit_probabilities:
                probability = 0.0  # running_sum's order, written out: a new unit for each of many names
                for row in self.rows:
                    probability += row.get(unit, 0.0)
                self.unit_probabilities[unit] = probability / len(self.rows)
            total += math.log(max(self.unit_probabilities[unit], FLOOR))
        return total / len(target)

    def _wording_score(self, names: tuple[str, ...]) -> float:
        if not self.wording:
            return 0.0
        sums, count = self._unit_sums(names)
        sums = [total + value for total, value in zip(sums, self._column(EMPTY))]
        sources = count + 1
        # running_sum's order, written out: this runs for most candidates of a question.
        score = 0.0
        for total in sums:
            score += math.log(max(total / sources, FLOOR))
        return score / len(self.wording)

    def _unit_sums(self, names: tuple[str, ...]) -> tuple[list[float], int]:
        """The columns of the units of `names`, added left to right from
        zeros, and how many units they have (memoised per prefix)."""
        if names not in self.prefix_sums:
            sums, count = self._unit_sums(names[:-1])
            for word in units(names[-1]):
                sums = [total + value for total, value in zip(sums, self._column(word))]
                count += 1
            self.prefix_sums[names] = (sums, count)
        return self.prefix_sums[names]

    def _column(self, word: str) -> list[float]:
        """P(wording unit | `word`) for each unit of the wording."""
        if word not in self.columns:
            row = self.backward.get(word, {})
            self.columns[word] = [row.get(unit, 0.0) for unit in self.wording]
        return self.columns[word]
