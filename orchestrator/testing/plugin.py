"""Registers the replay measurer as the ``replay`` measurer (option ``db=URL``)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from orchestrator.testing.replay import ReplayMeasurer


@hookimpl
def orchestrator_add_measurers(registry: ComponentRegistry) -> None:
    registry.add("replay", ReplayMeasurer,
                 description="answers from recorded history (no build, no hardware)")
