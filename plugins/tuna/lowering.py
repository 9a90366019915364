"""The cheap build path: scheduled IRModule -> lowered TIR -> assembly text, no binary.

``tvm.compile`` followed by ``inspect_source("asm")`` would do the same work; running
the stages by hand keeps the lowered TIR (Algorithm 1 walks its loops) and skips the
shared library export (no system compiler, no file) that a real measurement needs.
Lowering takes milliseconds; LLVM's code generation is nearly all of the cost (seconds
for large register tiles), which is why :func:`lower` and :func:`codegen` are separate:
configs that lower to the same TIR need code generation once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Lowered:
    """The lowered module (loops as LLVM will see them) and its assembly listing."""

    tir: Any
    asm: str


def lower(mod: Any, tvm_target: Any) -> Any:
    """``mod`` after TVM's default TIR pipeline for ``tvm_target``."""
    import tvm

    bound = tvm.tirx.transform.BindTarget(tvm_target.with_host(tvm_target))(mod)
    pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(tvm_target)
    return pipeline(bound)


def codegen(lowered: Any, tvm_target: Any) -> str:
    """The assembly listing LLVM generates for a module returned by :func:`lower`."""
    import tvm
    from tvm.tirx.build import split_host_device_mods, tir_to_runtime

    _, finalize_host, _ = tvm.tirx.get_default_tir_pipeline(tvm_target)
    host, devices = split_host_device_mods(lowered)
    host = finalize_host()(host)
    return tir_to_runtime(host, devices, tvm_target).inspect_source("asm")


def lower_and_codegen(mod: Any, tvm_target: Any) -> Lowered:
    """Lower ``mod`` with TVM's default TIR pipeline for ``tvm_target`` and emit assembly."""
    lowered = lower(mod, tvm_target)
    return Lowered(lowered, codegen(lowered, tvm_target))
