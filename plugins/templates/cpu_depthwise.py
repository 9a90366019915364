"""CPU template for depthwise_conv2d (NCHW, multiplier 1, any stride/padding/dilation).

Depthwise convolution is memory bound: each weight is used for one channel only. The
template vectorizes along the output width (contiguous in NCHW), keeps a register tile
of ``c2 x y2`` rows times ``x2`` pixels, reduces over the small kernel window inside the
tile, and runs the fused outer channel and row tiles in parallel:
``n c0 y0 x0 | c1 y1 x1 | r s | c2 y2 x2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.space import ChoiceKnob, Config, Knob
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.templates.common import (
    UNROLL_STEPS,
    annotate_unroll,
    choice,
    divisors,
    factors_of,
    find_block,
    max_accumulators,
    split_knob,
    vector_widths,
    vectors,
)

ACC_CHOICES = ("inner", "outer")


@dataclass(frozen=True)
class DepthwiseShape:
    """Extents of a depthwise task: output ``n c oh ow`` and kernel ``r s``."""

    n: int
    c: int
    oh: int
    ow: int
    r: int
    s: int
    stride: int
    pad: int
    block: str = "DepthwiseConv2d"
    pad_block: str = "PaddedInput"


def shape_of(task: Task) -> DepthwiseShape:
    """The loop extents of ``task``."""
    p = task.params
    n, c, oh, ow = task.operator.output_shape(p)
    return DepthwiseShape(n, c, oh, ow, p["R"], p["S"], p["stride"], p["pad"])


def pad_modes(s: DepthwiseShape) -> tuple[str, ...]:
    """Where the padded input is computed: at the root, per tile, or inlined (without
    padding it is a plain copy, always inlined)."""
    return ("root", "tile", "inline") if s.pad > 0 else ("inline",)


def knobs(task: Task, target: TargetInfo) -> list[Knob]:
    """The knobs of the depthwise template for ``task``."""
    s = shape_of(task)
    lanes = target.simd_lanes_fp32
    maxacc = max_accumulators(target)
    return [
        split_knob("tile_c", s.c, 3, inner=[d for d in divisors(s.c) if d <= 8]),
        split_knob("tile_y", s.oh, 3, inner=[d for d in divisors(s.oh) if d <= 8]),
        split_knob("tile_x", s.ow, 3, inner=vector_widths(s.ow, lanes, 4)
                   + [d for d in divisors(s.ow) if d <= maxacc and d < lanes // 2]),
        ChoiceKnob("pad", pad_modes(s)),
        ChoiceKnob("acc_at", ACC_CHOICES),
        ChoiceKnob("unroll", UNROLL_STEPS),
    ]


@dataclass(frozen=True)
class DepthwiseCheck:
    """Rejects depthwise configs with an oversized register tile or no parallelism."""

    shape: DepthwiseShape
    lanes: int
    maxacc: int
    min_par: int
    widths: tuple[int, ...]
    # Only reject spilling register tiles (used when the shape leaves no config
    # that meets every threshold).
    relaxed: bool = False

    def __call__(self, config: Config) -> str | None:
        c0, _, c2 = config["tile_c"]
        y0, _, y2 = config["tile_y"]
        x0, _, x2 = config["tile_x"]
        if x2 not in self.widths and not self.relaxed:
            return f"vector width {x2} is not one of {list(self.widths)}"
        acc = c2 * y2 * vectors(x2, self.lanes)
        if acc > self.maxacc:
            return f"register tile needs {acc} accumulators (> {self.maxacc})"
        if self.relaxed:
            return None
        par = self.shape.n * c0 * y0
        if par < self.min_par:
            return f"parallel extent {par} < {self.min_par}"
        return None


def make_check(task: Task, target: TargetInfo, space_knobs: list[Knob]) -> DepthwiseCheck:
    """The check for ``task``; thresholds are lowered to what the shape allows."""
    s = shape_of(task)
    by = {k.name: k for k in space_knobs}
    widths = tuple(vector_widths(s.ow, target.simd_lanes_fp32, 4))
    pars = [s.n * a[0] * b[0] for a in by["tile_c"].choices for b in by["tile_y"].choices]
    return DepthwiseCheck(s, target.simd_lanes_fp32, max_accumulators(target),
                          min(2 * target.cores, max(pars)), widths)


def apply(sch: Any, task: Task, config: Config, target: TargetInfo) -> None:
    """Schedule the depthwise conv in ``sch`` per ``config``."""
    s = shape_of(task)
    tc = factors_of(config, "tile_c", s.c, 3)
    ty = factors_of(config, "tile_y", s.oh, 3)
    tx = factors_of(config, "tile_x", s.ow, 3)
    pad = choice(config, "pad", pad_modes(s))
    acc_at = choice(config, "acc_at", ACC_CHOICES)
    unroll = int(choice(config, "unroll", UNROLL_STEPS))

    block = sch.get_sblock(s.block)
    n, c, y, x, r, q = sch.get_loops(block)
    c0, c1, c2 = sch.split(c, tc)
    y0, y1, y2 = sch.split(y, ty)
    x0, x1, x2 = sch.split(x, tx)
    sch.reorder(n, c0, y0, x0, c1, y1, x1, r, q, c2, y2, x2)
    writeback = sch.cache_write(block, 0, "global")
    sch.reverse_compute_at(writeback, x1 if acc_at == "inner" else x0)

    par = sch.fuse(n, c0, y0)
    padded = find_block(sch, s.pad_block)
    if padded is not None:
        _place_padding(sch, padded, pad, x0)
    sch.parallel(par)
    annotate_unroll(sch, par, unroll)
    sch.unroll(c2)
    sch.unroll(y2)
    sch.vectorize(x2)
    sch.decompose_reduction(block, r)
    sch.vectorize(sch.get_loops(writeback)[-1])


def _place_padding(sch: Any, padded: Any, pad: str, tile_loop: Any) -> None:
    """Inline the padded input, compute it per tile at ``tile_loop``, or compute it
    once at the root (parallel, vectorized)."""
    if pad == "inline":
        sch.compute_inline(padded)
    elif pad == "tile":
        sch.compute_at(padded, tile_loop)
        sch.vectorize(sch.get_loops(padded)[-1])
    else:
        loops = sch.get_loops(padded)
        sch.vectorize(loops[-1])
        sch.parallel(sch.fuse(*loops[:2]))
