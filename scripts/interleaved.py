"""Measuring configs again side by side: one after the other in turn, several rounds, so
that a slower or faster spell of a shared machine hits every config alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo


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
