"""The loop extents of a conv2d task (NCHW), shared by the CPU and CUDA templates."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.task import Task


@dataclass(frozen=True)
class ConvShape:
    """Extents of a conv2d task: output ``n k oh ow``, reduction ``c r s``, input ``h w``."""

    n: int
    k: int
    oh: int
    ow: int
    c: int
    r: int
    s: int
    h: int
    w: int
    stride: int
    pad: int
    dilation: int
    block: str = "conv2d_nchw"
    pad_block: str = "pad_temp"


def shape_of(task: Task) -> ConvShape:
    """The loop extents of ``task``."""
    p = task.params
    _, k, oh, ow = task.operator.output_shape(p)
    return ConvShape(p["N"], k, oh, ow, p["C"], p["R"], p["S"], p["H"], p["W"], p["stride"],
                     p["pad"], p["dilation"])
