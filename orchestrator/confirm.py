"""Confirming a new best by timing it again (``tune(confirm=N)``).

A run's best is the fastest of hundreds of noisy timings, so on a noisy machine it is
usually a lucky one: the config runs slower than that figure when timed again. With
confirmation on, a result counts towards the run's best only through timings made
*after* it was picked: when a config's first timing beats the confirmed best, the loop
times it ``N`` times more, and the median of those timings alone (not the first, which
was picked for being fast) is the config's confirmed latency. Picking and estimating on
separate timings removes the winner's curse.

Every timing is stored in history. Within one run the loop never measures a config
twice except to confirm it, so a config's later records in a run are its re-timings;
nothing else marks them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orchestrator.result import MeasureResult, MeasureStatus


def confirmed(config_results: Sequence[MeasureResult]) -> MeasureResult | None:
    """The confirmed result of one config from its re-timings (records after its first),
    pooling their latency samples; None when no re-timing succeeded."""
    samples = [x for r in config_results for x in r.latencies if r.ok]
    if not samples:
        return None
    first = config_results[0]
    return MeasureResult(first.config, MeasureStatus.OK, tuple(samples),
                         measurer=first.measurer)


def split_retimings(results: Iterable[MeasureResult]
                    ) -> tuple[list[MeasureResult], dict[str, list[MeasureResult]]]:
    """A run's results, oldest first, split into trials (each config's first record) and
    re-timings by config key (its later records)."""
    seen: set[str] = set()
    trials: list[MeasureResult] = []
    again: dict[str, list[MeasureResult]] = {}
    for r in results:
        if r.config.key in seen:
            again.setdefault(r.config.key, []).append(r)
        else:
            seen.add(r.config.key)
            trials.append(r)
    return trials, again


def confirmed_best(retimings: Mapping[str, Sequence[MeasureResult]]) -> MeasureResult | None:
    """The fastest confirmed result among a run's re-timings (by config key, as
    :func:`split_retimings` gives them)."""
    found = (confirmed(rs) for rs in retimings.values())
    return min((r for r in found if r is not None), key=lambda r: r.latency, default=None)


def tell_confirmed(searcher: Any, results: Sequence[MeasureResult]) -> None:
    """Pass confirmed results to a searcher that takes them (the optional
    ``tell_confirmed`` of :class:`~orchestrator.components.Searcher`); nothing to one
    without the method, or when there are none."""
    tell = getattr(searcher, "tell_confirmed", None)
    if results and callable(tell):
        tell(list(results))
