"""The linker's trained part and how it is fitted: the keyphraseness table
of the training questions' mentions and the boosted scorers of link candidates."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from coqa.boosting import BoostedScorer, fit_scorer
from coqa.booster_settings import BoosterSettings

KEYPHRASENESS_FILE = "keyphraseness.json"
SCORER_FILE = "linker.txt"
ORDER_FILE = "linker_order.txt"


@dataclass
class LinkerModel:
    """The linker's trained part. `keyphraseness` maps a normalized surface to
    (times it was a gold mention, times it was matched) in the training
    questions; `scorer` gives each link candidate the probability that it is
    right (the linked node's score, which query ranking reads; None while
    training builds it); `order_scorer`, when there is one, a listwise score
    that orders a question's terms (the logistic of a ranking score, no
    probability); without it the terms are ordered by `scorer`."""

    keyphraseness: dict[str, tuple[int, int]]
    scorer: BoostedScorer | None = None
    order_scorer: BoostedScorer | None = None

    def save(self, directory: Path) -> list[str]:
        """Write the part into a model directory; return the file names."""
        table = {surface: list(counts) for surface, counts in sorted(self.keyphraseness.items())}
        (directory / KEYPHRASENESS_FILE).write_text(json.dumps(table, ensure_ascii=False), encoding="utf-8")
        assert self.scorer is not None, "a linker model is saved after training"
        files = [KEYPHRASENESS_FILE] + self.scorer.save(directory / SCORER_FILE)
        if self.order_scorer is None:
            return files
        return files + self.order_scorer.save(directory / ORDER_FILE)

    @classmethod
    def load(cls, directory: Path) -> "LinkerModel":
        table = json.loads((directory / KEYPHRASENESS_FILE).read_text(encoding="utf-8"))
        keyphraseness = {surface: (int(linked), int(seen)) for surface, (linked, seen) in table.items()}
        order_scorer = BoostedScorer.load(directory / ORDER_FILE) if (directory / ORDER_FILE).exists() else None
        return cls(keyphraseness, BoostedScorer.load(directory / SCORER_FILE), order_scorer)


def fit_keyphraseness(observations: Sequence[tuple[int, set[str], set[str]]], folds: int) -> list[dict[str, tuple[int, int]]]:
    """Per fold (and, at index `folds`, over all): surface -> (gold mention count,
    match count), from each training question's (fold, surfaces matched in it,
    those of them that were a gold mention). A fold's table leaves its own
    questions out, so that their linking features are cross-fitted."""
    linked_by_fold: list[Counter[str]] = [Counter() for _ in range(folds)]
    seen_by_fold: list[Counter[str]] = [Counter() for _ in range(folds)]
    for fold, seen, linked in observations:
        for surface in seen:
            seen_by_fold[fold][surface] += 1
        for surface in linked:
            linked_by_fold[fold][surface] += 1
    linked_total, seen_total = sum(linked_by_fold, Counter()), sum(seen_by_fold, Counter())
    tables = []
    for fold in range(folds + 1):
        linked_counts = linked_total - linked_by_fold[fold] if fold < folds else linked_total
        seen_counts = seen_total - seen_by_fold[fold] if fold < folds else seen_total
        tables.append({surface: (linked_counts.get(surface, 0), count) for surface, count in seen_counts.items() if count > 0})
    return tables


def fit_link_scorers(
    rows: Sequence[dict[str, float]], labels: Sequence[int], groups: Sequence[int], names: Sequence[str], settings: BoosterSettings, seed: int
) -> tuple[BoostedScorer, BoostedScorer | None]:
    """The linker's pointwise scorer (the probability that a term is right:
    the score query ranking reads) and, when `settings.objective` is
    lambdarank, a listwise scorer with the same tree settings that orders
    a question's terms (its score is no probability, so it orders and does
    not score); None otherwise."""
    scorer = fit_scorer(rows, labels, groups, names, replace(settings, objective="binary"), seed)
    if settings.objective != "lambdarank":
        return scorer, None
    return scorer, fit_scorer(rows, labels, groups, names, settings, seed)
