"""Evolutionary searchers: Tuna's evolution strategy, CMA-ES (Optuna), GA and ES (DEAP)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.es.cmaes_search import CmaEs
from plugins.es.deap_es import DeapES
from plugins.es.deap_ga import DeapGA
from plugins.es.tuna_es import TunaES


@hookimpl
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    registry.add("tuna-es", TunaES, description=(
        "Tuna's evolution strategy (lr, sigma, population); uses the cost model if given"))
    registry.add("cmaes", CmaEs, description="CMA-ES (Optuna) over integer knob positions")
    registry.add("deap-ga", DeapGA, description=(
        "genetic algorithm (DEAP): tournament, uniform crossover, random-reset mutation"))
    registry.add("deap-es", DeapES, description=(
        "(mu+lambda) or (mu,lambda) self-adaptive evolution strategy (DEAP)"))
