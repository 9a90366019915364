"""scripts/deployed_states.py: whether the machine's state, read from the other reported
configs of each round, changes the per-round ratio of two configs."""

from __future__ import annotations

import dataclasses
import math

import pytest

from tests.plugins.gga.test_reproduce_script import toy_experiment
from tests.scripts_under_test import load_script


def test_a_rounds_state_is_the_others_median_speed_over_their_own_median():
    ds = load_script("deployed_states")
    # round 2 ran 10% fast for both others; round 3 lost one timing
    states = ds.round_states([[100.0, 110.0, 100.0, 100.0], [50.0, 55.0, None, 50.0]])
    assert states == pytest.approx([1.0, 1.1, 1.0, 1.0])
    assert ds.round_states([[None, None]]) == [None, None]


def test_rounds_are_split_at_the_median_state_leaving_the_middle_one_out():
    ds = load_script("deployed_states")
    states = [1.3, 0.9, 1.0, None, 1.2, 0.8, 1.1, 0.95]
    ratios = [1.0, 1.0, 1.0, 1.0, None, 1.0, 1.0, 1.0]
    # every round with a state and a ratio (not 3, not 4), slowest state first
    assert ds.split_rounds(states, ratios) == [5, 1, 7, 2, 6, 0]
    # a seventh round (1.05): the middle one, 1.0 (round 2), is left out
    with_seventh = [1.3, 0.9, 1.0, 1.05, 1.2, 0.8, 1.1, 0.95]
    assert ds.split_rounds(with_seventh, ratios) == [5, 1, 7, 3, 6, 0]
    assert ds.split_rounds(states[:5], ratios[:5]) is None  # fewer than MIN_ROUNDS


def test_a_ratio_that_follows_the_state_is_told_apart_from_one_that_does_not():
    ds = load_script("deployed_states")
    states = [0.90, 0.92, 0.94, 0.96, 1.04, 1.06, 1.08, 1.10]
    follows = [0.94, 0.95, 0.96, 0.97, 1.03, 1.04, 1.05, 1.06]  # faster rounds, higher
    kept = ds.split_rounds(states, follows)
    assert kept == list(range(8))
    h = ds.halves(follows, kept)
    assert h.slow == pytest.approx(0.955) and h.fast == pytest.approx(1.045)
    # as far apart: this split, the one swapping 0.97 and 1.03 (a half's median is its
    # middle two), and their mirrors: 4 of C(8, 4) = 70
    assert h.p == pytest.approx(4 / 70) and h.rounds == 8
    steady = [1.0, 1.05, 0.95, 1.02, 1.0, 0.95, 1.05, 1.02]  # the same spread, any state
    assert ds.halves(steady, kept).p == pytest.approx(1.0)
    layer = ds.LayerRounds(0, "l", tuple(states), {"gga": tuple(follows)})
    observed, p = ds.pooled_p([layer] * 3)
    assert observed == pytest.approx(3 * math.log(1.045 / 0.955))
    assert p < 0.005  # three layers as far apart by chance: (4/70)^3, about 0.0002
    observed, p = ds.pooled_p([ds.LayerRounds(0, "l", tuple(states), {"gga": tuple(steady)})])
    assert observed == 0.0 and p == 1.0


def test_rho_is_spearmans_and_zero_where_a_series_is_constant():
    ds = load_script("deployed_states")
    assert ds.rho([1, 2, 3, 4], [10, 20, 300, 4000]) == pytest.approx(1.0)
    assert ds.rho([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert ds.rho([1, 2, 3, 4], [5, 5, 5, 5]) == 0.0
    # 1-2-3-4 against 1-3-2-4: 1 - 6 * (0 + 1 + 1 + 0) / (4 * 15) = 0.8
    assert ds.rho([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)


def test_the_rank_test_keeps_every_round_and_tells_a_ratio_that_follows_the_state():
    ds = load_script("deployed_states")
    states = (0.90, 1.10, 0.92, 1.08, 0.94, 1.06, 0.96, 1.04, 1.00)  # nine rounds
    follows = tuple(0.5 + s / 2 for s in states)  # higher in every faster round
    steady = (1.0, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0)
    layer = ds.LayerRounds(0, "l", states, {"gga": follows})
    assert ds.rank_rounds(layer) == list(range(9))  # the middle round kept
    assert ds.split_rounds(states, follows) is not None and len(layer.rounds) == 8
    observed, p = ds.pooled_rank_p([layer] * 2)
    assert observed == pytest.approx(2.0)
    assert p < 0.001  # two layers in order by chance: (2 / 9!)^2
    lost = ds.LayerRounds(0, "l", states[:5] + (None,) * 4, {"gga": follows})
    assert ds.rank_rounds(lost) is None and ds.pooled_rank_p([lost]) == (0.0, 1.0)
    observed, p = ds.pooled_rank_p([ds.LayerRounds(0, "l", states, {"gga": steady})])
    assert observed < 0.5 and p > 0.1


def test_the_layer_rounds_of_real_deployed_timings_and_their_report(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    ds = load_script("deployed_states")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=12,
                         budgets={"xgb": 12, "gga": 12, "ga": 12}, pruned=False, deployed=6)
    rg.run_all(dataclasses.replace(exp, deployed=0), history_only=True)
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    res = gt.layer_turns(exp, job.task)
    lr = ds.layer_rounds(exp, 0, res)
    assert lr is not None and lr.layer == "r18_l4ds" and len(lr.states) == 6
    finals = {n: res.curves[n].reported_at()[-1].key for n in ("xgb", "gga", "ga")}
    expected = {n for n in ("gga", "ga") if finals[n] != finals["xgb"]}
    if finals["ga"] == finals["gga"]:
        expected.discard("ga")
    assert set(lr.ratios) == expected
    # the synthetic measurer times a config alike in every round: every ratio is the
    # ratio of the two configs' speeds, the same in both halves
    for name, ratios in lr.ratios.items():
        assert len(set(round(r, 9) for r in ratios)) == 1
    text = ds.report([lr], "header", "cmd", 6)
    assert text.startswith("# Does the machine's state change two configs' speed ratio?")
    assert "Read from the 6-round timings" in text
    assert f"Pairs told: {len(expected) if lr.rounds else 0}" in text
    assert "By ranks over every round, the summed |rho| is" in text
    assert ds.layer_rounds(dataclasses.replace(exp, deployed_rounds=9), 0, res) is None


@pytest.mark.parametrize("args, message", [
    ([], "give one or more --turns SEED=DIR"),
    (["--turns", "0=/nowhere"], "no turns directory /nowhere"),
])
def test_bad_input_is_a_one_line_usage_error(capsys, args, message):
    ds = load_script("deployed_states")
    with pytest.raises(SystemExit) as exc:
        ds.main(["--db", "/nowhere.db", *args])
    assert exc.value.code == 2 and message in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_pairs_own_rank_test_tells_a_ratio_in_the_states_order_from_a_steady_one():
    ds = load_script("deployed_states")
    states = [0.90, 1.10, 0.92, 1.08, 0.94, 1.06, 0.96, 1.04, 1.00]
    follows = [0.5 + s / 2 for s in states]
    # |rho| = 1 in 2 of 9! orders: about 0.11 of the 20,000 draws reach it by chance
    assert ds.rank_p(states, follows) < 0.001
    against = [2.0 - f for f in follows]  # a ratio that falls as the state rises
    assert ds.rho(states, against) == pytest.approx(-1.0)
    assert ds.rank_p(states, against) < 0.001
    steady = [1.0, 1.0, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.0]
    assert ds.rank_p(states, steady) > 0.1
    assert ds.rank_p(states, [1.0] * 9) == 1.0  # constant: rho 0, nothing to tell


def test_the_rank_tests_draws_are_spearmans_on_the_relabelled_ratios(monkeypatch):
    import random

    ds = load_script("deployed_states")
    monkeypatch.setattr(ds, "PERMUTATIONS", 400)
    states = [0.90, 1.10, 0.92, 1.08, 0.94, 1.06, 0.96, 1.04, 1.00]
    ratios = [1.00, 1.03, 0.99, 1.01, 1.00, 1.02, 0.97, 1.01, 1.00]  # ties included
    observed = abs(ds.rho(states, ratios))
    # the same shuffles applied to the ratios themselves, spearman taken from scratch
    rng, series, hits = random.Random(5), list(ratios), 0
    for _ in range(400):
        rng.shuffle(series)
        hits += abs(ds.rho(states, series)) >= observed - 1e-12
    assert 0 < hits < 400
    assert ds.rank_p(states, ratios, seed=5) == hits / 400


def test_layer_rounds_are_split_once():
    ds = load_script("deployed_states")
    states = (0.90, 1.10, 0.92, 1.08, 0.94, 1.06, 0.96, 1.04)
    layer = ds.LayerRounds(0, "l", states, {"gga": (1.0,) * 8})
    assert layer.rounds is layer.rounds and layer.rounds == [0, 2, 4, 6, 7, 5, 3, 1]
