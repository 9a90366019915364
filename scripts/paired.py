"""How much faster one config runs than another, from timings taken side by side in
rounds: the median of the per-round speed ratios and a distribution-free confidence
interval for it, so that a verdict such as "within 0.98x" can be told apart from one the
machine's noise leaves open."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95


@dataclass(frozen=True)
class PairedRatio:
    """Speed of a config over a reference's: ``median`` of the per-round ratios, and the
    interval [``low``, ``high``] that holds the true median with probability ``level``
    (at least the confidence asked for, or the most that ``rounds`` ratios allow)."""

    median: float
    low: float
    high: float
    level: float
    rounds: int

    def verdict(self, threshold: float) -> str:
        """``met`` when the whole interval is at or above ``threshold``, ``not met`` when
        it is all below, ``undecided`` when the interval straddles it."""
        if self.low >= threshold:
            return "met"
        if self.high < threshold:
            return "not met"
        return "undecided"

    def text(self) -> str:
        return f"{self.median:.3f} [{self.low:.3f}, {self.high:.3f}]"


def _binomial_tail(n: int, k: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE
                    ) -> tuple[float, float, float]:
    """(low, high, level): the narrowest order-statistic interval [x_(k), x_(n+1-k)] of
    ``values`` whose coverage of the median, 1 - 2 P(X <= k - 1) with X ~ Bin(n, 1/2), is
    at least ``confidence``; with too few values, [min, max] and its own lower level."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("median_interval needs at least one value")
    k = 1
    while k + 1 <= (n + 1) // 2 and 1 - 2 * _binomial_tail(n, k) >= confidence:
        k += 1
    level = 1 - 2 * _binomial_tail(n, k - 1) if n > 1 else 0.0
    return xs[k - 1], xs[n - k], level


def paired_ratio(latencies: Sequence[float | None], reference: Sequence[float | None],
                 confidence: float = CONFIDENCE) -> PairedRatio | None:
    """Speed of the config timed ``latencies`` over the one timed ``reference``, round by
    round (``reference[i] / latencies[i]``; above 1 = faster). A round where either
    timing failed (None) is left out; None when no round has both."""
    ratios = [ref / lat for lat, ref in zip(latencies, reference, strict=False)
              if lat and ref]
    if not ratios:
        return None
    low, high, level = median_interval(ratios, confidence)
    return PairedRatio(statistics.median(ratios), low, high, level, len(ratios))


def round_states(speeds: Sequence[Sequence[float | None]]) -> list[float | None]:
    """Each round's state from configs' speeds timed side by side, round by round (None
    where a round failed): the median over the configs of the round's speed over the
    config's own median speed, what the machine did to every config of the round (None
    for a round where none of them has a timing)."""
    rounds = max((len(s) for s in speeds), default=0)
    rel: list[list[float]] = [[] for _ in range(rounds)]
    for s in speeds:
        timed = [v for v in s if v]
        if not timed:
            continue
        mid = statistics.median(timed)
        for i, v in enumerate(s):
            if v:
                rel[i].append(v / mid)
    return [statistics.median(r) if r else None for r in rel]
