"""Baseline searchers: random and grid."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.baselines.grid_search import GridSearch
from plugins.baselines.random_search import RandomSearch


@hookimpl
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    registry.add("random", RandomSearch, description="uniform random sampling without repeats")
    registry.add("grid", GridSearch, description="every config in order (small spaces)")
