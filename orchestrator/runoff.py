"""A run-off at the end of a run (``tune(runoff=K)``): the run's K fastest configs timed
again side by side, and the fastest of them there reported as the run's best.

A run times its configs one at a time over minutes or hours, on a machine whose speed
drifts; its best is the lowest of hundreds of timings, each made in its own moment.
Timing again a config picked for a low timing removes the luck of that timing
(``confirm``), but two configs timed at different moments still compare across the
drift. The run-off times the contenders in the same rounds, in turn (the order
reversed every other round), so a slow spell hits them alike, and picks the one with the
lowest median over the rounds. Its timings form a run of their own in history (searcher
``runoff``), so a rerun of the same command reads them instead of timing again.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.confirm import confirmed
from orchestrator.jsonkey import canonical_json
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo

SEARCHER = "runoff"  # the searcher name of a run-off's own run in history


@dataclass(frozen=True)
class RunoffEntry:
    """One contender: the latency the run had for it (``estimate``: its confirmed
    latency where the run timed it again, else its one timing) and its latency in each
    round of the run-off (None where that timing failed), seconds."""

    config: Config
    estimate: float
    rounds: tuple[float | None, ...]

    @property
    def median(self) -> float:
        """Median latency over the rounds that succeeded; +inf when none did."""
        ok = [x for x in self.rounds if x is not None]
        return statistics.median(ok) if ok else math.inf


@dataclass(frozen=True)
class Runoff:
    """A finished run-off: its run in history and the contenders, fastest first."""

    run_id: int
    entries: tuple[RunoffEntry, ...]

    @property
    def winner(self) -> RunoffEntry:
        return self.entries[0]

    @property
    def changed(self) -> bool:
        """Whether the winner is another config than the one the run had as its best."""
        first = min(self.entries, key=lambda e: e.estimate)
        return first.config.key != self.winner.config.key

    def best(self, measurer: str) -> MeasureResult | None:
        """The winner as a result whose latencies are its round latencies (so its
        ``latency`` is the run-off median); None when every one of its timings failed."""
        ok = tuple(x for x in self.winner.rounds if x is not None)
        if not ok:
            return None
        return MeasureResult(self.winner.config, MeasureStatus.OK, ok, measurer=measurer)


def contenders(trials: Sequence[MeasureResult],
               retimings: Mapping[str, Sequence[MeasureResult]], k: int
               ) -> list[tuple[Config, float]]:
    """The ``k`` configs of a run with the lowest estimate, lowest first, as (config,
    estimate): a config the run timed again is estimated by those timings alone
    (:func:`orchestrator.confirm.confirmed`), any other by its one timing. Failed
    measurements are never contenders."""
    estimate: dict[str, tuple[Config, float]] = {}
    for r in trials:
        if not r.ok or r.config.key in estimate:
            continue
        again = confirmed(retimings.get(r.config.key, ()))
        estimate[r.config.key] = (r.config, (again or r).latency)
    return sorted(estimate.values(), key=lambda ce: ce[1])[:k]


def resume_key(run_resume_key: str, configs: Sequence[Config], rounds: int) -> str:
    """The key of the run-off of these configs after the run with ``run_resume_key``:
    a rerun finds a finished run-off by it and times nothing again."""
    return canonical_json({"runoff_of": run_resume_key, "rounds": rounds,
                           "configs": sorted(c.key for c in configs)})


def measure_interleaved(measurer: Any, space: Space, target: TargetInfo,
                        configs: Sequence[Config], rounds: int) -> dict[str, list[MeasureResult]]:
    """Measure the distinct ``configs`` ``rounds`` times, in the given order in even
    rounds and in reverse in odd ones (one ``measure`` call per round); every result of
    each config key, in round order."""
    order = list({c.key: c for c in configs}.values())
    got: dict[str, list[MeasureResult]] = {c.key: [] for c in order}
    for round_ in range(rounds):
        for r in measurer.measure(space, target, order if round_ % 2 == 0 else order[::-1]):
            got[r.config.key].append(r)
    return got


def by_config(results: Sequence[MeasureResult]) -> dict[str, list[MeasureResult]]:
    """``results`` by config key, each config's in their order (a stored run-off's
    timings, oldest first, are each contender's rounds in order)."""
    out: dict[str, list[MeasureResult]] = {}
    for r in results:
        out.setdefault(r.config.key, []).append(r)
    return out


def winner(timings: Mapping[str, Sequence[MeasureResult]]) -> Config | None:
    """The config with the lowest median over its timings (by config key, as
    :func:`by_config` gives them), as :func:`tally` ranks a run-off, where the run's
    estimates are not at hand; None when no timing succeeded."""
    done = tally(0, [(rs[0].config, math.inf) for rs in timings.values() if rs], timings)
    if not done.entries or math.isinf(done.winner.median):
        return None
    return done.winner.config


def tally(run_id: int, picked: Sequence[tuple[Config, float]],
          timings: Mapping[str, Sequence[MeasureResult]]) -> Runoff:
    """The run-off of the ``picked`` contenders from their timings in round order (by
    config key), fastest median first; ties keep the run's order."""
    entries = [RunoffEntry(c, est, tuple(r.latency if r.ok else None
                                         for r in timings.get(c.key, ())))
               for c, est in picked]
    return Runoff(run_id, tuple(sorted(entries, key=lambda e: e.median)))
