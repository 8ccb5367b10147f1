"""Reads of a knowledge base that do not depend on each other, sent side by
side where the knowledge base takes several queries at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence, TypeVar

from coqa.kb.base import KnowledgeBase

_Task = TypeVar("_Task")
_Result = TypeVar("_Result")


class SideBySide:
    """A bounded pool of `kb.parallel_queries` threads (none when the
    knowledge base takes one query at a time, the default, or when there is
    no knowledge base: reads then go one after the other)."""

    def __init__(self, kb: KnowledgeBase | None = None) -> None:
        parallel = getattr(kb, "parallel_queries", 1)
        self._pool = ThreadPoolExecutor(parallel, thread_name_prefix="coqa-kb") if parallel > 1 else None

    def map(self, function: Callable[[_Task], _Result], tasks: Sequence[_Task]) -> list[_Result]:
        """`function` of each task, in order: side by side in the pool where
        there is one, else one after the other. The tasks only read the
        knowledge base and return what they found; none may call `map` again
        (a task waiting for the pool it runs in could wait for ever)."""
        if self._pool is None or len(tasks) < 2:
            return [function(task) for task in tasks]
        return list(self._pool.map(function, tasks))

    def close(self) -> None:
        """Stop the pool's threads, if there is a pool."""
        if self._pool is not None:
            self._pool.shutdown()
