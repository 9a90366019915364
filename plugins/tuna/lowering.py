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
