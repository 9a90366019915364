"""Loss of performance (equation 5) and trial counts by hand-computed examples."""

from __future__ import annotations

import math

import pytest

from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.metrics import lop, top_n_lop, trials_to_fraction


def test_lop_is_relative_slowdown_of_the_pick():
    assert lop(1.0, 1.0) == 0.0
    assert lop(1.1, 1.0) == pytest.approx(0.1)
    assert lop(3.0, 2.0) == pytest.approx(0.5)
    with pytest.raises(CnnoptError):
        lop(1.0, 0.0)


def test_top_n_lop_takes_the_best_measured_among_the_predicted_top_n():
    predicted = [3.0, 1.0, 2.0, 4.0]
    measured = [1.0, 2.0, 1.5, 0.9]
    # top-1: config 1 (measured 2.0) vs best 0.9 -> 1.1/0.9
    assert top_n_lop(predicted, measured, 1) == pytest.approx((2.0 - 0.9) / 0.9)
    # top-2: configs 1, 2 -> 1.5
    assert top_n_lop(predicted, measured, 2) == pytest.approx((1.5 - 0.9) / 0.9)
    # top-3 adds config 0 (1.0)
    assert top_n_lop(predicted, measured, 3) == pytest.approx((1.0 - 0.9) / 0.9)
    assert top_n_lop(predicted, measured, 4) == 0.0
    assert top_n_lop(predicted, measured, 30) == 0.0


def test_top_n_lop_with_failed_measurements():
    assert top_n_lop([1.0, 2.0], [math.inf, 2.0], 1) == math.inf
    assert top_n_lop([1.0, 2.0], [math.inf, 2.0], 2) == 0.0


def test_trials_to_95_percent_of_the_best():
    predicted = [1.0, 2.0, 3.0, 4.0]
    measured = [2.0, 1.2, 1.04, 1.0]
    # 1/2.0 = 0.5, 1/1.2 = 0.83, 1/1.04 = 0.96 >= 0.95 -> third trial
    assert trials_to_fraction(predicted, measured, 0.95) == 3
    assert trials_to_fraction(predicted, measured, 1.0) == 4
    assert trials_to_fraction([4.0, 1.0], [1.0, 5.0], 0.95) == 2


def test_metrics_refuse_mismatched_inputs():
    with pytest.raises(CnnoptError):
        top_n_lop([1.0], [1.0, 2.0], 1)
    with pytest.raises(CnnoptError):
        top_n_lop([1.0], [1.0], 0)
