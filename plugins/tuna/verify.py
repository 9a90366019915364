"""``--verify-top K``: measure the K best static predictions on the real device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.tuna.measurer import NAME as STATIC


def top_static(results: Sequence[MeasureResult], k: int) -> list[Config]:
    """The ``k`` configs with the lowest static score among ``results``, best first."""
    best: dict[str, MeasureResult] = {}
    for r in results:
        if r.ok and r.measurer == STATIC:
            if r.config.key not in best or r.latency < best[r.config.key].latency:
                best[r.config.key] = r
    ranked = sorted(best.values(), key=lambda r: (r.latency, r.config.key))
    return [r.config for r in ranked[:max(0, k)]]


def verify_top(space: Space, target: TargetInfo, results: Sequence[MeasureResult], k: int,
               measurer_name: str = "local", *, measurer: Any = None,
               plugins: Any = None) -> list[MeasureResult]:
    """Measure the ``k`` best statically scored configs with a real measurer.

    ``results`` are a task's results; the static ones (``measurer == "static"``) are
    ranked. A top config that already has a real measurement among ``results`` is not
    measured again. Returns the new real results (best static rank first) for the
    caller to record in history like any other measurement. ``measurer`` may be given
    as an instance (it is then not closed); otherwise ``measurer_name`` is created from
    the plugins and closed afterwards.
    """
    real = {r.config.key for r in results if r.measurer != STATIC and r.ok}
    configs = [c for c in top_static(results, k) if c.key not in real]
    if not configs:
        return []
    own = measurer is None
    if own:
        if plugins is None:
            from orchestrator.manager import load_plugins

            plugins = load_plugins()
        measurer = plugins.create("measurer", measurer_name)
    try:
        return list(measurer.measure(space, target, configs))
    finally:
        if own:
            measurer.close()
