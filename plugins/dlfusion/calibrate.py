"""Calibrating Algorithm 1's two hardware-tuned parameters for an accelerator.

The paper calls OpCount_critical "a tunable parameter" and equation 5 a proportionality
with "hardware-tuned scaling factors", and it tuned both on synthesized layers, not on the
networks it evaluated. We do the same on the accelerator's cost model: random CNN chains
(:func:`synthetic_network`; shapes drawn from a seed, none of them the built-in networks)
are planned by Algorithm 1 for every pair (threshold, MP scale) of a grid, and the pair
with the best geometric-mean FPS relative to the exact optimum (the DP planner) wins.

The result goes into the accelerator file's ``algorithm1`` entry, which the ``dlfusion``
strategy reads; ``dlfusion-published`` keeps the paper's literal constants.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from plugins.dlfusion.dp import optimal_plan
from plugins.dlfusion.layers import Network
from plugins.dlfusion.models import NetBuilder
from plugins.dlfusion.plan import Plan
from plugins.dlfusion.planner import joint_opt_fusion_and_mp, layer_mp

# log10 of OpCount_critical in the accelerator's GOP unit, and MP multipliers, tried
CRITICAL_EXPONENTS: tuple[float, ...] = tuple(x / 4 for x in range(-12, 6))   # 10^-3 .. 10^1.25
MP_SCALES: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)


@dataclass(frozen=True)
class Alg1Params:
    """Algorithm 1's threshold (ops per core) and the factor applied to equation 5's MP."""

    opcount_critical: float
    mp_scale: float = 1.0


@dataclass(frozen=True)
class Calibration:
    """The chosen parameters and the score of every grid point (geo-mean FPS / optimum)."""

    params: Alg1Params
    score: float
    networks: int
    seed: int
    grid: tuple[tuple[float, float, float], ...]   # (log10 critical in unit, scale, score)
    gops_unit: float

    def to_json(self) -> dict[str, object]:
        return {"opcount_critical_gops": round(self.params.opcount_critical / self.gops_unit, 6),
                "mp_scale": self.params.mp_scale,
                "source": f"calibrated on {self.networks} synthetic CNN chains (seed "
                          f"{self.seed}; none of the evaluated networks): geometric-mean "
                          f"FPS {self.score:.3f} of the exact DP optimum"}


def synthetic_network(rng: random.Random, index: int) -> Network:
    """A random CNN chain at 224/160/112 pixels: a stem (stride 1 or 2), 3 to 5 stages of
    3x3/1x1 convolutions that downsample by a strided convolution or by pooling, optional
    residual adds, global pooling and a dense layer."""
    size = rng.choice((224, 160, 112))
    b = NetBuilder(f"synthetic-{index}", (1, 3, size, size))
    channels = rng.choice((16, 24, 32, 48, 64))
    x = b.conv("stem", -1, channels, rng.choice((3, 5, 7)), s=rng.choice((1, 2)))
    if rng.random() < 0.5:
        x = b.pool("stem_pool", x, 3, 2, 1)
    pool_down = rng.random() < 0.5
    for stage in range(rng.randint(3, 5)):
        if stage:
            channels = min(1024, int(channels * rng.choice((1.5, 2.0, 2.0))))
        down = stage > 0 and b.shape(x)[2] > 7
        if down and pool_down:
            x = b.pool(f"s{stage}pool", x, 2, 2)
        for j in range(rng.randint(1, 4)):
            stride = 2 if (j == 0 and down and not pool_down) else 1
            k = rng.choice((3, 3, 3, 1))
            y = b.conv(f"s{stage}c{j}", x, channels, k, s=stride)
            if rng.random() < 0.3 and b.shape(y) == b.shape(x):
                y = b.add(f"s{stage}a{j}", y, x)
            x = y
    x = b.global_pool("gap", x)
    b.dense("fc", x, rng.choice((10, 100, 1000)))
    return b.build()


def synthetic_networks(count: int, seed: int) -> list[Network]:
    rng = random.Random(seed)
    return [synthetic_network(rng, i) for i in range(count)]


def alg1_plan(net: Network, cores: int, params: Alg1Params, name: str = "dlfusion") -> Plan:
    """Algorithm 1 with equation 5's MP multiplied by ``params.mp_scale``."""
    mps = tuple(layer_mp(layer, cores, params.mp_scale) if layer.is_compute else 0
                for layer in net.layers)
    res = joint_opt_fusion_and_mp(net, params.opcount_critical, cores, layer_mps=mps)
    return Plan(name, net.name, res.blocks())


def calibrate(acc: object, *, count: int = 24, seed: int = 0,
              exponents: Sequence[float] = CRITICAL_EXPONENTS,
              scales: Sequence[float] = MP_SCALES, gops_unit: float = 2**30) -> Calibration:
    """Grid-search Algorithm 1's parameters on ``count`` synthetic networks for ``acc``
    (a SimulatedAccelerator or any model offering ``measure_plan`` and ``block_latency``)."""
    nets = synthetic_networks(count, seed)
    best_lat = [optimal_plan(acc, net)[1] for net in nets]  # type: ignore[arg-type]
    cores = int(acc.cores)  # type: ignore[attr-defined]
    grid: list[tuple[float, float, float]] = []
    for e in exponents:
        for s in scales:
            params = Alg1Params(10 ** e * gops_unit, s)
            logs = [math.log(opt / acc.measure_plan(net, alg1_plan(net, cores, params)).latency_s)  # type: ignore[attr-defined]
                    for net, opt in zip(nets, best_lat)]
            grid.append((e, s, math.exp(sum(logs) / len(logs))))
    e, s, score = max(grid, key=lambda g: (round(g[2], 6), g[0], -g[1]))
    return Calibration(Alg1Params(10 ** e * gops_unit, s), score, count, seed, tuple(grid),
                       gops_unit)
