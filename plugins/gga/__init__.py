"""History-guided searchers: ``gga`` (guided genetic algorithm over history candidates)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.gga.searcher import GuidedGA


@hookimpl
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``gga``."""
    registry.add("gga", GuidedGA,
                 description="guided GA from the best-matching history records (Mu et al.)")
