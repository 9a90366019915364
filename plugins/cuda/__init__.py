"""CUDA plugin: the ``cuda`` space generator (dense, conv2d) and the ``cuda`` measurer.

Building needs no GPU (TVM generates CUDA C, nvcc compiles it); measuring does.
``plugins.cuda.ptx`` reads the PTX and ptxas figures of a config statically.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from orchestrator.hookspecs import hookimpl

if TYPE_CHECKING:
    from orchestrator.registry import ComponentRegistry


@hookimpl
def orchestrator_add_space_generators(registry: ComponentRegistry) -> None:
    from plugins.cuda.templates import CudaTemplates

    registry.add("cuda", CudaTemplates,
                 description="multi-level tiled CUDA templates (shared-memory stages, "
                             "register tiles) for dense and conv2d")


@hookimpl
def orchestrator_add_measurers(registry: ComponentRegistry) -> None:
    from plugins.cuda.measurer import CudaMeasurer

    registry.add("cuda", CudaMeasurer,
                 description="build CUDA kernels with nvcc in parallel worker processes, "
                             "then time each alone on this machine's GPU (options: "
                             "build_workers, build_timeout, run_timeout, number, repeat, "
                             "min_repeat_ms, rtol, atol, seed, check, device)")
