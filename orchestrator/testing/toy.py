"""A small synthetic space with a known latency landscape, for testing searchers and
cost models without TVM. The latencies are SYNTHETIC (a formula, not a measurement)."""

from __future__ import annotations

import math
import random

from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob
from orchestrator.task import Task

TOY_TASK = Task.create("dense", {"M": 64, "K": 64, "N": 64}, name="toy_dense")


def toy_space(task: Task = TOY_TASK) -> Space:
    """Split knobs over M, N, K plus an unroll choice (a few thousand configs)."""
    p = task.params
    knobs = (
        SplitKnob.perfect("tile_m", p["M"], 3),
        SplitKnob.perfect("tile_n", p["N"], 3),
        SplitKnob.perfect("tile_k", p["K"], 2),
        ChoiceKnob("unroll", (0, 16, 64)),
    )

    def check(cfg: Config) -> str | None:
        return "inner tile too large" if cfg["tile_m"][-1] * cfg["tile_n"][-1] > 256 else None

    return Space(task, "toy", knobs, "orchestrator.testing.toy:no_schedule", check=check)


def toy_latency(cfg: Config) -> float:
    """A smooth synthetic landscape: best near inner tiles (4, 16), k inner 8, unroll 16."""
    m, n, k = cfg["tile_m"][-1], cfg["tile_n"][-1], cfg["tile_k"][-1]
    cost = (math.log2(m) - 2) ** 2 + (math.log2(n) - 4) ** 2 + 0.5 * (math.log2(k) - 3) ** 2
    cost += {0: 0.6, 16: 0.0, 64: 0.3}[cfg["unroll"]]
    return 1e-4 * (1.0 + cost)


def toy_results(space: Space | None = None, n: int | None = None, seed: int = 0) -> list[MeasureResult]:
    """Synthetic results for ``n`` random configs (all valid configs when ``n`` is None)."""
    space = space or toy_space()
    configs = list(space)
    if n is not None:
        configs = random.Random(seed).sample(configs, min(n, len(configs)))
    return [MeasureResult(c, MeasureStatus.OK, (toy_latency(c),) * 3, measurer="synthetic")
            for c in configs]


def no_schedule(task: Task, config: Config, target: object) -> object:
    raise NotImplementedError("the toy space is synthetic and cannot be built")
