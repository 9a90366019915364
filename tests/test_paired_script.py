"""scripts/paired.py: per-round speed ratios, their median and its confidence interval."""

from __future__ import annotations

import math
import random

import pytest

from tests.scripts_under_test import load_script


def test_the_interval_is_the_order_statistics_the_binomial_allows():
    paired = load_script("paired")
    values = [float(v) for v in range(1, 12)]  # 11 values
    low, high, level = paired.median_interval(values, 0.95)
    # [x_(3), x_(9)] would cover only 1 - 2 * 67 / 2048 = 93.5%; [x_(2), x_(10)] covers 98.8%
    assert (low, high) == (2.0, 10.0)
    assert level == pytest.approx(1 - 2 * 12 / 2048)
    low, high, level = paired.median_interval(values, 0.90)
    assert (low, high) == (3.0, 9.0) and level == pytest.approx(1 - 2 * 67 / 2048)
    # Three rounds allow no more than [min, max], at 75%.
    assert paired.median_interval([3.0, 1.0, 2.0]) == (1.0, 3.0, pytest.approx(0.75))
    with pytest.raises(ValueError):
        paired.median_interval([])


def test_the_interval_covers_the_median_as_often_as_it_says():
    paired = load_script("paired")
    rng = random.Random(0)
    hits, trials = 0, 2000
    for _ in range(trials):
        low, high, level = paired.median_interval([rng.gauss(1.0, 0.1) for _ in range(11)])
        hits += low <= 1.0 <= high
    assert level == pytest.approx(0.988, abs=1e-3)
    assert abs(hits / trials - level) < 0.02


def test_paired_ratio_is_round_by_round_and_skips_failed_rounds():
    paired = load_script("paired")
    # The machine slows down in round 2 for both configs: the ratio stays 1.25.
    p = paired.paired_ratio([0.8, 1.6, 0.8, None], [1.0, 2.0, 1.0, 1.0])
    assert p.rounds == 3 and p.median == pytest.approx(1.25)
    assert p.low == pytest.approx(1.25) and p.high == pytest.approx(1.25)
    assert paired.paired_ratio([None, None], [1.0, 1.0]) is None


def test_the_verdict_is_open_while_the_interval_straddles_the_target():
    paired = load_script("paired")
    make = paired.PairedRatio
    assert make(1.0, 0.985, 1.02, 0.95, 11).verdict(0.98) == "met"
    assert make(0.95, 0.93, 0.97, 0.95, 11).verdict(0.98) == "not met"
    assert make(0.99, 0.96, 1.01, 0.95, 11).verdict(0.98) == "undecided"
    assert make(0.99, 0.96, 1.01, 0.95, 11).text() == "0.990 [0.960, 1.010]"
    assert math.isclose(make(1.0, 0.98, 1.0, 0.95, 3).low, 0.98)
