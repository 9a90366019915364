"""Best-k (Pruner, equation 6) by hand."""

from __future__ import annotations

import math

import pytest

from plugins.psa.metrics import MetricError, TaskLatencies, best_k, best_k_one, kth_best


def test_best_1_is_whole_space_best_over_target_space_best() -> None:
    full = [1.0, 2.0, 3.0, 4.0]
    assert best_k_one(full, [2.0, 3.0], 1) == 0.5
    assert best_k_one(full, [1.0, 3.0], 1) == 1.0


def test_best_k_uses_the_kth_best_of_the_target_space() -> None:
    assert best_k_one([1.0, 5.0], [4.0, 1.0, 2.0], 2) == 0.5      # 1 / 2
    assert best_k_one([1.0], [4.0, 1.0, 2.0], 3) == 0.25          # 1 / 4


def test_sampled_whole_space_counts_the_target_space_too() -> None:
    # the sample missed the best program, which the target space holds
    assert best_k_one([2.0, 3.0], [1.0, 5.0], 1) == 1.0


def test_failed_measurements_are_ignored() -> None:
    assert best_k_one([1.0, math.inf], [math.nan, 2.0, math.inf], 1) == 0.5
    assert kth_best([math.inf, 3.0], 2) is None


def test_weighted_over_tasks() -> None:
    tasks = [TaskLatencies((1.0,), (2.0,), weight=2.0),       # 2 x 1 / 2 x 2
             TaskLatencies((3.0,), (3.0,), weight=1.0)]       # 1 x 3 / 1 x 3
    assert best_k(tasks, 1) == pytest.approx((2 * 1 + 3) / (2 * 2 + 3))


def test_tasks_without_k_target_measurements_are_left_out() -> None:
    tasks = [TaskLatencies((1.0,), (1.0, 2.0)), TaskLatencies((1.0,), (5.0,))]
    assert best_k(tasks, 2) == 0.5           # only the first task has a 2nd best
    with pytest.raises(MetricError):
        best_k([TaskLatencies((1.0,), (2.0,))], 2)
    with pytest.raises(MetricError):
        best_k_one([1.0], [1.0], 0)
