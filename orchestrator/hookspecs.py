"""Hook specifications. Every hook is prefixed ``orchestrator_`` and called with keywords.

Registration hooks (one per component kind) are called once when the plugin manager is
set up; every implementation is called (not firstresult) and adds named components to
the registry it receives. Observer hooks are called for every implementation too; their
return values are ignored, and an observer must not raise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry
    from orchestrator.result import MeasureResult
    from orchestrator.run_info import RunInfo, TuneSummary

PROJECT = "orchestrator"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# -- registration: space generators, pruners, cost models, searchers, measurers --------

@hookspec
def orchestrator_add_space_generators(registry: ComponentRegistry) -> None:
    """Register space generators with ``registry.add(name, factory)``.

    Called once at start-up. A factory returns an object with ``supports(task, target)``
    and ``generate(task, target) -> Space`` (see ``orchestrator.components``).
    Not firstresult: all implementations are called. Returns nothing.
    """


@hookspec
def orchestrator_add_pruners(registry: ComponentRegistry) -> None:
    """Register pruners: objects with ``prune(space, target) -> Space``.

    Called once at start-up; all implementations are called. Returns nothing.
    """


@hookspec
def orchestrator_add_cost_models(registry: ComponentRegistry) -> None:
    """Register cost models: objects with ``fit(space, results)`` and
    ``predict(space, configs) -> list[float]`` (higher is better).

    Called once at start-up; all implementations are called. Returns nothing.
    """


@hookspec
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    """Register searchers: objects with ``start(context)``, ``propose(n) -> list[Config]``
    and ``tell(results)``.

    Called once at start-up; all implementations are called. Returns nothing.
    """


@hookspec
def orchestrator_add_measurers(registry: ComponentRegistry) -> None:
    """Register measurers: objects with ``measure(space, target, configs) ->
    list[MeasureResult]`` and ``close()``.

    Called once at start-up; all implementations are called. Returns nothing.
    """


@hookspec
def orchestrator_add_planners(registry: ComponentRegistry) -> None:
    """Register model-level planners (``orchestrator plan``): objects with
    ``plan(network, accelerator) -> Plan`` that choose layer-fusion blocks and cores per
    block for a layer list (plugins.dlfusion: Network, Plan, and ``accelerator`` offering
    ``cores`` and ``measure_plan``).

    Called once at start-up; all implementations are called. Returns nothing.
    """


# -- observers ----------------------------------------------------------------------

@hookspec
def orchestrator_task_started(run: RunInfo) -> None:
    """Called when a task's space is ready and before the first measurement.

    ``run`` says which task, target, components and budget; ``run.resumed_trials`` is
    non-zero when an interrupted run is being continued. All implementations are called.
    """


@hookspec
def orchestrator_results_measured(run: RunInfo, results: Sequence[MeasureResult],
                                  trials_done: int, best: MeasureResult | None) -> None:
    """Called after each batch of results is committed to history.

    ``results`` are the new results (including those answered from history),
    ``trials_done`` counts the run's trials so far, ``best`` is the best ok result of
    the run so far. All implementations are called.
    """


@hookspec
def orchestrator_task_finished(run: RunInfo, summary: TuneSummary) -> None:
    """Called once when the task's budget is spent, the search ends, or it is stopped.

    All implementations are called.
    """
