"""`ordered_map` keeps the input's order over spawned children, reports a
child that died, and leaves no child behind when the iteration stops early."""

from __future__ import annotations

import os
import time

import pytest

from coqa.child_process import ChildDied, ordered_map


def _no_setup() -> None:
    pass


def _square_slowly(number: int) -> int:
    time.sleep(0.001 * (number % 7))  # children finish out of order
    return number * number


def _pid(_item: int) -> int:
    return os.getpid()


def _fail_on_five(number: int) -> int:
    if number == 5:
        raise ValueError("five")
    return number


def test_results_come_in_the_order_of_the_items() -> None:
    assert list(ordered_map(_square_slowly, list(range(100)), 3, _no_setup, chunk_size=3)) == [n * n for n in range(100)]


def test_no_items_start_no_child() -> None:
    assert list(ordered_map(_square_slowly, [], 2, _no_setup)) == []


def test_a_child_that_ends_is_reported() -> None:
    with pytest.raises(ChildDied, match=r"process \d+ ended with exit code 1"):
        list(ordered_map(_fail_on_five, list(range(20)), 2, _no_setup, chunk_size=2))


def test_closing_the_iteration_early_ends_the_children() -> None:
    results = ordered_map(_pid, list(range(1000)), 2, _no_setup, chunk_size=1)
    child = next(results)
    assert child != os.getpid()
    results.close()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
