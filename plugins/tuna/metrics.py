"""How well predicted latencies rank configs: Spearman correlation and the paper's
top-k performance ratio."""

from __future__ import annotations

import math
from collections.abc import Sequence


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks starting at 1, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (nan for fewer than 3 pairs or constant input)."""
    if len(a) != len(b) or len(a) < 3:
        return math.nan
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(va * vb) if va > 0 and vb > 0 else math.nan


def top_k_ratio(predicted: Sequence[float], measured: Sequence[float], k: int) -> float:
    """Section V-B: the summed measured latency of the ``k`` truly fastest configs over
    that of the ``k`` configs the model ranks fastest (1 = the model's top k is the true
    top k; lower is worse). Both lists are latencies, lower is better."""
    n = len(measured)
    if n == 0 or len(predicted) != n:
        return math.nan
    k = min(k, n)
    best = sorted(measured)[:k]
    chosen = sorted(range(n), key=lambda i: (predicted[i], i))[:k]
    return sum(best) / sum(measured[i] for i in chosen)
