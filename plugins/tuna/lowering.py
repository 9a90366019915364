"""The cheap build path: scheduled IRModule -> lowered TIR -> assembly text, no binary.

``tvm.compile`` followed by ``inspect_source("asm")`` would do the same work; running
the stages by hand keeps the lowered TIR (Algorithm 1 walks its loops) and skips the
shared library export (no system compiler, no file) that a real measurement needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Lowered:
    """The lowered module (loops as LLVM will see them) and its assembly listing."""

    tir: Any
    asm: str


def lower_and_codegen(mod: Any, tvm_target: Any) -> Lowered:
    """Lower ``mod`` with TVM's default TIR pipeline for ``tvm_target`` and emit assembly."""
    import tvm
    from tvm.tirx.build import split_host_device_mods, tir_to_runtime

    target = tvm_target.with_host(tvm_target)
    bound = tvm.tirx.transform.BindTarget(target)(mod)
    pipeline, finalize_host, _ = tvm.tirx.get_default_tir_pipeline(tvm_target)
    lowered = pipeline(bound)
    host, devices = split_host_device_mods(lowered)
    host = finalize_host()(host)
    runtime = tir_to_runtime(host, devices, tvm_target)
    return Lowered(lowered, runtime.inspect_source("asm"))


def as_module(value: Any) -> Any:
    """Accept what a schedule function may return: an IRModule, a Schedule, a PrimFunc."""
    import tvm

    if isinstance(value, tvm.IRModule):
        return value
    if isinstance(getattr(value, "mod", None), tvm.IRModule):
        return value.mod
    if isinstance(value, tvm.tirx.PrimFunc):
        return tvm.IRModule({"main": value})
    raise TypeError(f"the schedule function returned {type(value).__name__}, not an IRModule")
