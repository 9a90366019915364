"""Built-in schedule templates (space generators)."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.templates.cpu import CpuTemplates


@hookimpl
def orchestrator_add_space_generators(registry: ComponentRegistry) -> None:
    registry.add("cpu", CpuTemplates,
                 description="tiled, vectorized, parallel CPU templates for dense, "
                             "batch_matmul, conv2d and depthwise_conv2d")
