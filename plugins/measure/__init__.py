"""Built-in measurer plugin: ``local`` builds and times kernels on this machine."""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.hookspecs import hookimpl

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_measurers(registry: ComponentRegistry) -> None:
    from plugins.measure.local import LocalMeasurer

    registry.add(
        "local", LocalMeasurer,
        description="build in parallel worker processes, then time each kernel alone "
                    "in an isolated runner (options: build_workers, build_timeout, "
                    "run_timeout, number, repeat, min_repeat_ms, rtol, atol, seed, check, "
                    "guard, guard_wait)",
    )
