"""``--verify-top K``: measure the K best static predictions on the real device."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.tuna.measurer import NAME as STATIC

# How far down the static ranking the search for distinct programs goes, per wanted config.
_LOOK_AHEAD = 8


def top_static(results: Sequence[MeasureResult], k: int,
               program: Callable[[Config], str | None] | None = None) -> list[Config]:
    """The ``k`` configs with the lowest static score among ``results``, best first.

    With ``program`` (config -> the identity of the code it compiles to, or None when
    unknown), a config whose program is already among the chosen is skipped: configs
    that compile to the same code are one kernel, and measuring it twice tells nothing.
    """
    best: dict[str, MeasureResult] = {}
    for r in results:
        if r.ok and r.measurer == STATIC:
            if r.config.key not in best or r.latency < best[r.config.key].latency:
                best[r.config.key] = r
    ranked = [r.config for r in sorted(best.values(), key=lambda r: (r.latency, r.config.key))]
    if program is None:
        return ranked[:max(0, k)]
    chosen: list[Config] = []
    programs: set[str] = set()
    for cfg in ranked[:max(0, k) * _LOOK_AHEAD]:
        if len(chosen) >= k:
            break
        key = program(cfg)
        if key is None or key not in programs:
            chosen.append(cfg)
            if key is not None:
                programs.add(key)
    return chosen


def lowered_program(space: Space, target: TargetInfo) -> Callable[[Config], str | None]:
    """Config -> a hash of its lowered TIR on a CPU target (milliseconds, no code
    generation); None where it cannot be lowered."""
    from plugins.tuna.features import program_identity, scheduled_module
    from plugins.tuna.lowering import lower

    tvm_target = target.tvm_target()

    def program(config: Config) -> str | None:
        try:
            mod = scheduled_module(space.schedule_fn, space.task, config, target)
            return program_identity(lower(mod, tvm_target), target)
        except Exception:  # noqa: BLE001 - an unlowerable config is simply not deduplicated
            return None

    return program


def verify_top(space: Space, target: TargetInfo, results: Sequence[MeasureResult], k: int,
               measurer_name: str = "local", *, measurer: Any = None,
               plugins: Any = None) -> list[MeasureResult]:
    """Measure the ``k`` best statically scored configs with a real measurer.

    ``results`` are a task's results; the static ones (``measurer == "static"``) are
    ranked. On CPU targets, configs that lower to the same TIR as a better-ranked one
    are skipped (they build the same kernel), so the ``k`` measured are distinct
    programs. A top config that already has a real measurement among ``results`` is
    not measured again. Returns the new real results (best static rank first) for the
    caller to record in history like any other measurement. ``measurer`` may be given
    as an instance (it is then not closed); otherwise ``measurer_name`` is created from
    the plugins and closed afterwards.
    """
    real = {r.config.key for r in results if r.measurer != STATIC and r.ok}
    program = lowered_program(space, target) if target.kind != "cuda" else None
    configs = [c for c in top_static(results, k, program) if c.key not in real]
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
