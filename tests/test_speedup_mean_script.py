"""scripts/speedup_mean.py: speed-ups averaged over layers, with a bootstrap interval."""

from __future__ import annotations

import math

import pytest

from tests.scripts_under_test import load_script


def test_the_three_averages_of_exact_speedups():
    sm = load_script("speedup_mean")
    items = [sm.LayerSpeedup("a", 2.0, 8.0), sm.LayerSpeedup("b", 8.0, 2.0),
             sm.LayerSpeedup("c", 1.0, 16.0)]  # 4x, 0.25x, 16x
    m = sm.mean_speedup(items)
    assert m.layers == 3
    assert m.geometric == pytest.approx(math.exp((math.log(4) + math.log(0.25)
                                                  + math.log(16)) / 3))  # 16 ** (1/3)
    assert m.arithmetic == pytest.approx((4 + 0.25 + 16) / 3)
    assert m.summed == pytest.approx(26 / 11)
    assert m.bound == ""
    # resampled layers' means lie within the layers' own range, around the mean
    assert 0.25 <= m.low <= m.geometric <= m.high <= 16
    assert sm.mean_speedup(items) == m  # seeded: the same interval every time


def test_a_searcher_that_never_reached_the_mark_bounds_the_means():
    sm = load_script("speedup_mean")
    exact = [sm.LayerSpeedup("a", 1.0, 10.0), sm.LayerSpeedup("b", 1.0, 12.0)]
    gga_never = sm.mean_speedup(exact + [sm.LayerSpeedup("c", 100.0, 10.0, never=True)])
    assert gga_never.bound == sm.UPPER  # gga needed more than its whole run: at most this
    other_never = sm.mean_speedup(exact + [sm.LayerSpeedup("c", 1.0, 10.0, other_never=True)])
    assert other_never.bound == sm.LOWER
    both = sm.mean_speedup(exact + [sm.LayerSpeedup("c", 100.0, 10.0, never=True),
                                    sm.LayerSpeedup("d", 1.0, 10.0, other_never=True)])
    assert both.bound == sm.BOTH
    line = sm.describe(gga_never, 5, "v", "xgb")
    assert "<= " in line and "(v never reached the mark on some layer: each figure is at most" in line
    assert "(xgb never reached it" in sm.describe(other_never, 5, "v", "xgb")


def test_the_verdict_needs_the_whole_interval_on_one_side_and_a_bound_the_right_way():
    sm = load_script("speedup_mean")

    def m(low, high, bound=""):
        return sm.MeanSpeedup(4, (low + high) / 2, low, high, 0.95, 1.0, 1.0, bound)

    assert m(5.5, 9.0).verdict(5) == "met"
    assert m(1.0, 4.9).verdict(5) == "not met"
    assert m(3.0, 7.0).verdict(5) == "undecided"
    assert m(5.5, 9.0, sm.UPPER).verdict(5) == "undecided"  # at most 5.5-9: could be less
    assert m(1.0, 4.9, sm.UPPER).verdict(5) == "not met"
    assert m(5.5, 9.0, sm.LOWER).verdict(5) == "met"
    assert m(1.0, 4.9, sm.LOWER).verdict(5) == "undecided"
    assert m(1.0, 4.9, sm.BOTH).verdict(5) == "undecided"


def test_nothing_to_average():
    sm = load_script("speedup_mean")
    assert sm.mean_speedup([]) is None
    assert sm.describe(None, 5) == "no layer to average"


def test_the_interval_does_not_depend_on_the_order_of_the_layers():
    sm = load_script("speedup_mean")
    items = [sm.LayerSpeedup(f"l{i}", 1.0, r) for i, r in enumerate((0.3, 29, 5, 2, 1.2, 35))]
    assert sm.mean_speedup(items) == sm.mean_speedup(items[::-1])


def test_over_seeds_gives_each_layer_the_geometric_mean_of_its_seeds():
    sm = load_script("speedup_mean")
    seed0 = [sm.LayerSpeedup("a", 1.0, 16.0), sm.LayerSpeedup("b", 2.0, 2.0)]  # 16x, 1x
    seed1 = [sm.LayerSpeedup("a", 4.0, 16.0),  # 4x
             sm.LayerSpeedup("b", 1.0, 9.0, other_never=True),  # at least 9x
             sm.LayerSpeedup("c", 3.0, 6.0)]  # only on this seed: 2x
    items = {i.layer: i for i in sm.over_seeds([seed0, seed1])}
    assert sorted(items) == ["a", "b", "c"]
    assert items["a"].ratio == pytest.approx(8.0)  # sqrt(16 * 4)
    assert items["a"].seconds == pytest.approx(2.0) and items["a"].other == pytest.approx(16.0)
    assert items["b"].ratio == pytest.approx(3.0) and items["b"].other_never
    assert not items["b"].never
    assert items["c"].ratio == pytest.approx(2.0)
    m = sm.mean_speedup(sm.over_seeds([seed0, seed1]))
    assert m.layers == 3  # a layer counts once, however many seeds it has
    assert m.geometric == pytest.approx((8 * 3 * 2) ** (1 / 3))
    assert m.bound == sm.LOWER
    assert sm.over_seeds([]) == []


def test_a_ceiling_says_whether_the_target_was_within_reach_and_the_share_reached():
    sm = load_script("speedup_mean")
    items = [sm.LayerSpeedup("a", 1.0, 8.0), sm.LayerSpeedup("b", 2.0, 4.0)]  # 8x, 2x
    achieved = sm.mean_speedup([sm.LayerSpeedup("a", 2.0, 8.0), sm.LayerSpeedup("b", 2.0, 4.0)])
    line = sm.ceiling_line(items, "xgb", 5.0, achieved, "v")
    # ceiling sqrt(16) = 4x, under 5x; v's own mean sqrt(4 * 2) = 2.83x, 0.71 of it
    assert "geometric mean 4.00x [" in line
    assert "5x out of reach of any searcher on these runs; 1 of 2 layers at 5x or more; " \
        "v's geometric mean is 0.71 of it." in line
    assert "within reach" in sm.ceiling_line(items, "ga", 3.0)
    assert sm.ceiling_line([], "xgb", 5.0) == "- ceiling over xgb: no layer to average."
