"""Speed-ups averaged over layers, with an interval: the paper's time figures are averages
over the layers of ResNet-18 and VGG ("an average of 8.96x and 4.58x acceleration"),
where ``gga_turns.py`` judges each layer on its own.

Per layer, a speed-up is the other searcher's seconds to the mark over gga's. Where one of
the two never reached the mark, its seconds in all stand in, which bounds the ratio on one
side: gga that never got there makes it an upper bound, the other searcher a lower one.
Three averages are given. The geometric mean (a ratio's natural mean: a layer 4x sooner
and one 4x later average to 1x) carries the verdict. The arithmetic mean is what the paper
reports, and one layer whose first candidate hits the mark can carry it. The ratio of summed
seconds is what a user tuning every layer in a row would wait. The interval is a bootstrap
over layers: it says how much the mean depends on which layers were tuned, not how noisy
each layer's timing was.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

UPPER, LOWER, BOTH = "<=", ">=", "?"
TIME_TARGETS = (("xgb", 5.0), ("ga", 3.0))  # gga >= 5x sooner than xgb, >= 3x than ga
MARK = 0.95  # of xgb's best, the mark each searcher is timed to


class LayerRuns(Protocol):
    """One layer's runs, as ``reproduce_gga.py`` and ``gga_turns.py`` read them: ``curves``
    by searcher, each with ``seconds`` after every trial and ``reach(level)`` giving
    (trials, seconds) when its best-so-far first reached ``level``."""

    task: Any
    reference: float
    curves: Mapping[str, Any]


@dataclass(frozen=True)
class LayerSpeedup:
    """One layer: seconds to the mark of gga (or a variant) and of the other searcher;
    a flag set where that searcher never reached it and its seconds in all stand in."""

    layer: str
    seconds: float
    other: float
    never: bool = False  # gga never reached the mark: ``seconds`` is its whole run
    other_never: bool = False  # the other never did: ``other`` is its whole run

    @property
    def ratio(self) -> float:
        return self.other / self.seconds


@dataclass(frozen=True)
class MeanSpeedup:
    """Averages of speed-ups over ``layers`` layers."""

    layers: int
    geometric: float
    low: float  # the geometric mean's bootstrap interval over layers
    high: float
    level: float
    arithmetic: float  # the paper's average
    summed: float  # the other's seconds summed over the layers, over gga's
    bound: str  # "": exact; UPPER or LOWER: every mean is a bound that way; BOTH: neither

    def verdict(self, target: float) -> str:
        """``met`` where the whole interval is at or above ``target``, ``not met`` where
        it is below, else ``undecided``; a one-sided bound can only decide one way."""
        if self.low >= target and self.bound in ("", LOWER):
            return "met"
        if self.high < target and self.bound in ("", UPPER):
            return "not met"
        return "undecided"


def _bound(items: Sequence[LayerSpeedup]) -> str:
    up = any(i.never for i in items)
    down = any(i.other_never for i in items)
    return BOTH if up and down else UPPER if up else LOWER if down else ""


def geomean_interval(values: Sequence[float], level: float = 0.95, draws: int = 10_000,
                     seed: int = 0) -> tuple[float, float, float]:
    """The geometric mean of the positive ``values`` and its interval from ``draws``
    resamples of them with replacement (percentiles, seeded): (mean, low, high)."""
    # sorted, so that the same values in another order get the same interval
    logs = np.log(sorted(values))
    picks = np.random.default_rng(seed).integers(0, len(logs), size=(draws, len(logs)))
    means = np.exp(logs[picks].mean(axis=1))
    tail = (1.0 - level) / 2
    return (math.exp(float(logs.mean())), float(np.quantile(means, tail)),
            float(np.quantile(means, 1.0 - tail)))


def mean_speedup(items: Sequence[LayerSpeedup], level: float = 0.95, draws: int = 10_000,
                 seed: int = 0) -> MeanSpeedup | None:
    """The averages of ``items`` (None without any), the geometric mean's interval from
    ``draws`` resamples of the layers with replacement (:func:`geomean_interval`)."""
    # sorted, so that the same layers in another order get the same sums
    items = sorted((i for i in items if i.seconds > 0 and i.other > 0),
                   key=lambda i: (i.ratio, i.layer))
    if not items:
        return None
    geometric, low, high = geomean_interval([i.ratio for i in items], level, draws, seed)
    return MeanSpeedup(
        layers=len(items), geometric=geometric, low=low, high=high,
        level=level, arithmetic=float(np.mean([i.ratio for i in items])),
        summed=sum(i.other for i in items) / sum(i.seconds for i in items),
        bound=_bound(items))


def describe(m: MeanSpeedup | None, target: float, name: str = "gga",
             other: str = "the other") -> str:
    """One line: the three averages, the interval and the verdict against ``target``."""
    if m is None:
        return "no layer to average"
    b = f"{m.bound} " if m.bound in (UPPER, LOWER) else ""
    note = {UPPER: f" ({name} never reached the mark on some layer: each figure is at most this)",
            LOWER: f" ({other} never reached it on some layer: each figure is at least this)",
            BOTH: f" (layers where {name} or {other} never reached it bound the figures "
                  "both ways)",
            "": ""}[m.bound]
    return (f"geometric mean {b}{m.geometric:.2f}x [{m.low:.2f}, {m.high:.2f}] over "
            f"{m.layers} layers, {m.verdict(target)} against {target:g}x; arithmetic mean "
            f"(the paper's average) {b}{m.arithmetic:.2f}x; summed seconds "
            f"{b}{m.summed:.2f}x{note}")


def layer_speedups(results: Sequence[LayerRuns], other: str, name: str = "gga",
                   mark: float = MARK) -> list[LayerSpeedup]:
    """Each layer's seconds to ``mark`` x xgb's best of ``name`` and ``other``, a run that
    never reached it standing in with its seconds in all (layers where neither reached it,
    or without an xgb best, left out)."""
    out = []
    for r in results:
        if r.reference <= 0 or name not in r.curves or other not in r.curves:
            continue
        _, g = r.curves[name].reach(mark * r.reference)
        _, o = r.curves[other].reach(mark * r.reference)
        if g is None and o is None:
            continue
        g_all, o_all = r.curves[name].seconds, r.curves[other].seconds
        if (g is None and not g_all) or (o is None and not o_all):
            continue
        out.append(LayerSpeedup(r.task.name, g if g is not None else g_all[-1],
                                o if o is not None else o_all[-1],
                                never=g is None, other_never=o is None))
    return out


def over_seeds(per_seed: Sequence[Sequence[LayerSpeedup]]) -> list[LayerSpeedup]:
    """One item per layer from its items on several seeds (one sequence per seed): each
    side's seconds are the geometric mean over the seeds that have the layer, so the
    layer's ratio is the geometric mean of its seeds' ratios; a side that never reached
    the mark on some seed makes the layer's figure a bound that way. Averaged with
    :func:`mean_speedup`, each layer counts once and the bootstrap resamples layers, its
    seeds kept together (seeds of one layer are not independent layers)."""
    by_layer: dict[str, list[LayerSpeedup]] = {}
    for items in per_seed:
        for i in items:
            if i.seconds > 0 and i.other > 0:
                by_layer.setdefault(i.layer, []).append(i)
    return [LayerSpeedup(layer,
                         statistics.geometric_mean(i.seconds for i in got),
                         statistics.geometric_mean(i.other for i in got),
                         never=any(i.never for i in got),
                         other_never=any(i.other_never for i in got))
            for layer, got in by_layer.items()]


def means_lines(results: Sequence[LayerRuns], name: str = "gga") -> list[str]:
    """Markdown list items: ``name``'s time targets on speed-ups averaged over the layers."""
    return [f"- {name} over {other}: "
            + describe(mean_speedup(layer_speedups(results, other, name)), target, name, other)
            + "."
            for other, target in TIME_TARGETS]


def ceiling_line(items: Sequence[LayerSpeedup], other: str, target: float,
                 achieved: MeanSpeedup | None = None, name: str = "gga") -> str:
    """A markdown list item: the ceiling over ``other``, what a searcher at the mark with
    each layer's first result would show (``items``: the first result's seconds against
    ``other``'s seconds to the mark), and ``name``'s geometric mean as a share of it. No
    searcher can reach the mark before a layer's first result, so a ceiling below
    ``target`` puts the target out of reach of every searcher on those runs."""
    m = mean_speedup(items)
    if m is None:
        return f"- ceiling over {other}: no layer to average."
    b = f"{m.bound} " if m.bound in (UPPER, LOWER) else ""
    side = ("out of reach of any searcher on these runs" if m.geometric < target
            else "within reach")
    reach = sum(1 for i in items if i.ratio >= target)
    share = (f"; {name}'s geometric mean is {achieved.geometric / m.geometric:.2f} of it"
             if achieved is not None and m.geometric > 0 else "")
    return (f"- ceiling over {other} (a searcher at the mark with each layer's first "
            f"result): geometric mean {b}{m.geometric:.2f}x [{m.low:.2f}, {m.high:.2f}] over "
            f"{m.layers} layers, {target:g}x {side}; {reach} of {m.layers} layers at "
            f"{target:g}x or more{share}.")


MEANS_INTRO = ("Averaged over the layers, as the paper's figures are (`speedup_mean.py`: the "
               "interval is a 95% bootstrap over layers; the verdict is the geometric mean's, "
               "met or not met where the whole interval is on one side of the target):")
