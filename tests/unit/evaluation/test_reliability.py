"""The reliability table puts questions in 10 equal-width confidence bins;
the ECE weighs each bin's gap between mean confidence and mean F1 by its size."""

from __future__ import annotations

import pytest

from coqa.evaluation.reliability import expected_calibration_error, reliability_lines, reliability_table


def test_bins_and_expected_calibration_error() -> None:
    table = reliability_table([0.05, 0.05, 0.95, 1.0], [0.0, 1.0, 1.0, 0.0])
    assert len(table) == 10 and [b.questions for b in table] == [2, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    assert table[0].mean_confidence == pytest.approx(0.05) and table[0].mean_f1 == pytest.approx(0.5)
    assert table[9].mean_confidence == pytest.approx(0.975) and table[9].mean_f1 == pytest.approx(0.5)
    assert expected_calibration_error(table) == pytest.approx(0.5 * 0.45 + 0.5 * 0.475)


def test_perfect_calibration_has_zero_error_and_no_questions_too() -> None:
    assert expected_calibration_error(reliability_table([0.25, 0.25, 0.25, 0.25], [0.0, 0.0, 1.0, 0.0])) == pytest.approx(0.0)
    assert expected_calibration_error(reliability_table([], [])) == 0.0
    lines = reliability_lines(reliability_table([0.3], [1.0]))
    assert lines[-1].startswith("expected calibration error 0.7000") and "[0.9, 1.0]" in lines[-2]
