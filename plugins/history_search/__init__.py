"""Searchers around the history-driven ones: ``auto`` (dispatches to ``gga`` or ``tl`` by
match score), ``fallback`` (the best-matching history config, no search) and ``ga``
(AutoTVM's plain genetic algorithm, the baseline GGA is compared with)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.history_search.auto import AutoSearch
from plugins.history_search.fallback import FallbackSearch
from plugins.history_search.ga import GeneticSearch


@hookimpl
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``auto``, ``fallback`` and ``ga``."""
    registry.add("auto", AutoSearch,
                 description="gga when history matches the task (match score), else tl")
    registry.add("fallback", FallbackSearch,
                 description="the best-matching history config adapted to the task, no search")
    registry.add("ga", GeneticSearch,
                 description="AutoTVM's genetic algorithm (DEAP): roulette, one-point crossover, random mutation")
