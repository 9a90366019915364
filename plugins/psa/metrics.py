"""Best-k, the target-space quality metric of Pruner (appendix A, equation 6).

    Best_k = sum_i L*_i w_i / sum_i Lhat_{i,k} w_i

``L*_i`` is the lowest measured latency of task i over its whole space, ``Lhat_{i,k}``
the k-th lowest measured latency in the target (pruned) space, ``w_i`` how often task i
appears in the model. 1.0 means the target space holds k programs as fast as the best
of the whole space. Failed measurements (inf, nan) are ignored. When the whole space was
measured only on a sample, ``L*`` is the best of that sample and of the target space (the
target space is part of the whole space), so Best-k stays <= 1. Both sums run over the
tasks whose target space has at least k measured latencies (the paper's
``L_{i,k} in M``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.errors import OrchestratorError


class MetricError(OrchestratorError):
    """Latencies that cannot give a Best-k."""


@dataclass(frozen=True)
class TaskLatencies:
    """Measured seconds of one task: the whole space (or a sample) and the target space."""

    full: tuple[float, ...]
    target: tuple[float, ...]
    weight: float = 1.0


def _finite(values: Sequence[float]) -> list[float]:
    return sorted(v for v in values if math.isfinite(v) and v > 0)


def kth_best(latencies: Sequence[float], k: int) -> float | None:
    """The k-th lowest finite latency, or None when there are fewer than k."""
    if k < 1:
        raise MetricError(f"Best-k needs k >= 1, got {k}")
    ok = _finite(latencies)
    return ok[k - 1] if len(ok) >= k else None


def best_latency(full: Sequence[float], target: Sequence[float]) -> float | None:
    """L*: the lowest finite latency of the whole space (target space included)."""
    ok = _finite([*full, *target])
    return ok[0] if ok else None


def best_k(tasks: Sequence[TaskLatencies], k: int = 1) -> float:
    """Equation 6 over ``tasks``; MetricError when no task has k measured target configs."""
    num = den = 0.0
    for t in tasks:
        kth = kth_best(t.target, k)
        if kth is None:
            continue
        star = best_latency(t.full, t.target)
        assert star is not None  # kth exists, so target has a finite latency
        num += star * t.weight
        den += kth * t.weight
    if den == 0.0:
        raise MetricError(f"no task has {k} successful measurements in its target space")
    return num / den


def best_k_one(full: Sequence[float], target: Sequence[float], k: int = 1) -> float:
    """Best-k of a single task (weight 1): L* / k-th best of the target space."""
    return best_k([TaskLatencies(tuple(full), tuple(target))], k)
