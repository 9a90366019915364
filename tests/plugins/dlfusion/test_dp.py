"""The DP planner is optimal (exhaustive enumeration) and the reduced oracle is exact."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from plugins.dlfusion.dp import ORACLE_MPS, optimal_plan, reduced_oracle_plan
from plugins.dlfusion.models import BUILTIN_MODELS
from plugins.dlfusion.plan import Block, Plan
from plugins.dlfusion.strategies import STRATEGY_NAMES, compare_strategies
from tests.plugins.dlfusion.helpers import small_cnn, tiny_accelerator


def _compositions(n: int, cuts_allowed: list[int]):
    for k in range(len(cuts_allowed) + 1):
        for cuts in itertools.combinations(cuts_allowed, k):
            bounds = (0, *cuts, n)
            yield list(zip(bounds, bounds[1:]))


def _exhaustive(acc, net, mps, cuts_allowed):
    best = np.inf
    for spans in _compositions(len(net), cuts_allowed):
        for mp_choice in itertools.product(mps, repeat=len(spans)):
            blocks = tuple(Block(a, b, m) for (a, b), m in zip(spans, mp_choice))
            plan = Plan("enum", net.name, blocks)
            best = min(best, acc.measure_plan(net, plan).latency_s)
    return best


@pytest.mark.parametrize("n_convs", [2, 3])
def test_dp_is_optimal_by_enumeration(tmp_path, n_convs):
    acc = tiny_accelerator(tmp_path, cores=4)
    net = small_cnn(n_convs)  # n_convs + 2 layers
    plan, latency = optimal_plan(acc, net)
    enum = _exhaustive(acc, net, range(1, 5), list(range(1, len(net))))
    assert latency == pytest.approx(enum, rel=1e-12)
    assert acc.measure_plan(net, plan).latency_s == pytest.approx(latency, rel=1e-12)


def test_reduced_oracle_matches_its_brute_force(tmp_path):
    acc = tiny_accelerator(tmp_path, cores=8)
    net = small_cnn(7)  # 9 layers: blocks may end at 4 and 8, the last holds the remainder
    plan, latency = reduced_oracle_plan(acc, net)
    mps = [m for m in ORACLE_MPS if m <= 8]
    enum = _exhaustive(acc, net, mps, [4, 8])
    assert latency == pytest.approx(enum, rel=1e-12)
    assert all(b.start % 4 == 0 for b in plan.blocks)
    assert all(b.mp in mps for b in plan.blocks)


def test_incremental_costs_equal_plain_block_costs():
    from plugins.dlfusion.accelerator import SimulatedAccelerator
    acc = SimulatedAccelerator.load("mlu100")
    rng = random.Random(1)
    mps = np.arange(1, 33)
    for make in BUILTIN_MODELS.values():
        net = make()
        for _ in range(25):
            j = rng.randrange(len(net))
            table = acc.latencies_ending_at(net, j, mps)
            for _ in range(4):
                i, m = rng.randrange(j + 1), rng.randrange(1, 33)
                plain = acc.block_cost(net, Block(i, j + 1, m)).latency_s
                assert table[i, m - 1] == pytest.approx(plain, rel=1e-12)


@pytest.mark.parametrize("model", sorted(BUILTIN_MODELS))
def test_dp_beats_every_strategy(model):
    from plugins.dlfusion.accelerator import SimulatedAccelerator
    acc = SimulatedAccelerator.load("mlu100")
    results = dict(zip(STRATEGY_NAMES, compare_strategies(BUILTIN_MODELS[model](), acc)))
    dp = results["optimal-dp"].latency_s
    assert all(dp <= r.latency_s * (1 + 1e-12) for r in results.values())
    assert results["oracle"].latency_s <= results["none"].latency_s
