"""Built-in CPU schedule templates (space generator ``cpu``)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_space_generators(registry: ComponentRegistry) -> None:
    from plugins.templates.cpu import CpuTemplates

    registry.add("cpu", CpuTemplates,
                 description="tiled, vectorized, parallel CPU templates (dense, batch_matmul, conv2d, depthwise)")
