"""Loss of performance (equation 5) and the trial counts of section 4.2."""

from __future__ import annotations

import math
from collections.abc import Sequence

from plugins.cnnopt.errors import CnnoptError


def lop(t_pred: float, t_best: float) -> float:
    """Equation (5): ``(Tpred - Tbest) / Tbest`` (0 when the model found the best)."""
    if not (t_best > 0 and math.isfinite(t_best)):
        raise CnnoptError(f"LoP needs a positive finite best time, got {t_best}")
    return (t_pred - t_best) / t_best


def top_n_order(predicted: Sequence[float]) -> list[int]:
    """Indices sorted by predicted time, fastest first (ties keep their order)."""
    return sorted(range(len(predicted)), key=lambda i: predicted[i])


def top_n_lop(predicted: Sequence[float], measured: Sequence[float], n: int) -> float:
    """LoP of a model's top-n: the best measured time among the ``n`` configs with the
    lowest predicted time, against the best measured time of all configs.

    ``predicted`` and ``measured`` are seconds per config, in the same order; failed
    measurements are ``inf``.
    """
    if len(predicted) != len(measured) or not measured:
        raise CnnoptError("top_n_lop needs one prediction per measured config")
    if n < 1:
        raise CnnoptError(f"top-n needs n >= 1, got {n}")
    best = min(measured)
    chosen = min(measured[i] for i in top_n_order(predicted)[:n])
    return lop(chosen, best)


def trials_to_fraction(predicted: Sequence[float], measured: Sequence[float],
                       fraction: float = 0.95) -> int:
    """Trials, in the model's order, until a config reaches ``fraction`` of the best
    performance (``best / t >= fraction``); Table 8 uses 0.95 and 1.0."""
    if len(predicted) != len(measured) or not measured:
        raise CnnoptError("trials_to_fraction needs one prediction per measured config")
    best = min(measured)
    for trial, i in enumerate(top_n_order(predicted), start=1):
        if measured[i] > 0 and best / measured[i] >= fraction - 1e-12:
            return trial
    return len(measured)
