"""The CNNOpt kernel schemas (section 3): knobs, and the tile sizes a config stands for.

Notation of the paper's Table 1. Each parallel dimension d of the output (x: width,
y: height, k: output channels) is tiled on four levels, outermost first::

    tile_d = (B_d, W_d, T_d, R_d)     grid blocks, warps per block, threads per warp,
                                      register tile per thread

with cumulative sizes ``T^d = T_d R^d`` (warp tile) and ``W^d = W_d T^d`` (block tile).
A warp is exactly ``T_x T_y T_k = 32`` threads. The input channels C are not tiled at
register level: ``tile_c = (B_c, S_c, W_c)`` splits C across ``B_c`` blocks (reduction
parallelism against tail effects), ``S_c`` shared-memory stages per block and ``W_c``
channels staged in shared memory per step. ``kernel`` selects the innermost loop band:
``rs`` (the RS kernel: a 2-D input patch in registers, loops over F_y and F_x inside)
or ``s`` (the S kernel: one input row in registers per filter row).
"""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.errors import InvalidConfigError
from orchestrator.space import ChoiceKnob, Config, Knob, SplitKnob, divisors, factorizations
from orchestrator.task import Task

WARP = 32
KERNELS = ("rs", "s")
# Input channels split across thread blocks at most this many ways (B_c).
MAX_C_SPLIT = 16


@dataclass(frozen=True)
class ConvDims:
    """A conv2d task in the paper's terms (batch N kept as an outer grid dimension)."""

    n: int
    k: int
    c: int
    y: int          # output height
    x: int          # output width
    fy: int
    fx: int
    stride: int
    dilation: int
    pad: int
    h: int          # input height
    w: int          # input width

    @property
    def span_fy(self) -> int:
        return self.dilation * (self.fy - 1) + 1

    @property
    def span_fx(self) -> int:
        return self.dilation * (self.fx - 1) + 1

    def in_rows(self, out_rows: int) -> int:
        """Input rows an ``out_rows`` tall output tile reads (halo included)."""
        return (out_rows - 1) * self.stride + self.span_fy

    def in_cols(self, out_cols: int) -> int:
        """Input columns an ``out_cols`` wide output tile reads (halo included)."""
        return (out_cols - 1) * self.stride + self.span_fx

    def features(self) -> dict[str, float]:
        """The paper's {Problem Size} features (plus stride)."""
        return {"K": self.k, "C": self.c, "Y": self.y, "X": self.x, "F": self.fy,
                "stride": self.stride}


def dims_of(task: Task) -> ConvDims:
    """The ConvDims of a conv2d task."""
    if task.op != "conv2d":
        raise InvalidConfigError(f"CNNOpt schedules conv2d only, not {task.op}")
    p = task.params
    _, k, oh, ow = task.operator.output_shape(p)
    return ConvDims(p["N"], k, p["C"], oh, ow, p["R"], p["S"], p["stride"], p["dilation"],
                    p["pad"], p["H"], p["W"])


@dataclass(frozen=True)
class Tiles:
    """The tile sizes of one config, named as in the paper."""

    kernel: str
    bx: int
    wx: int
    tx: int
    rx: int
    by: int
    wy: int
    ty: int
    ry: int
    bk: int
    wk: int
    tk: int
    rk: int
    bc: int
    sc: int
    wc: int

    @property
    def threads(self) -> int:
        return self.warps * self.warp_threads

    @property
    def warps(self) -> int:
        return self.wx * self.wy * self.wk

    @property
    def warp_threads(self) -> int:
        return self.tx * self.ty * self.tk

    @property
    def blocks(self) -> int:
        """Thread blocks per image (the grid without the batch)."""
        return self.bx * self.by * self.bk * self.bc

    @property
    def block_x(self) -> int:  # W^x
        return self.wx * self.tx * self.rx

    @property
    def block_y(self) -> int:  # W^y
        return self.wy * self.ty * self.ry

    @property
    def block_k(self) -> int:  # W^k
        return self.wk * self.tk * self.rk

    @property
    def outputs_per_thread(self) -> int:
        return self.rx * self.ry * self.rk

    def named(self) -> tuple[tuple[str, int], ...]:
        """Every tile size by its paper name, for KernelPlan.tiles and model features."""
        return tuple((n, int(getattr(self, n))) for n in (
            "bx", "wx", "tx", "rx", "by", "wy", "ty", "ry", "bk", "wk", "tk", "rk",
            "bc", "sc", "wc")) + (("rs", int(self.kernel == "rs")),)


def _split(config: Config, name: str, extent: int, parts: int) -> tuple[int, ...]:
    try:
        value = tuple(int(v) for v in config[name])
    except (KeyError, TypeError, ValueError):
        raise InvalidConfigError(f"config has no valid split for {name}") from None
    prod = 1
    for v in value:
        prod *= v
    if len(value) != parts or prod != extent or min(value) < 1:
        raise InvalidConfigError(f"split {name}={list(value)} does not tile {extent} "
                                 f"in {parts} parts")
    return value


def tiles_of(dims: ConvDims, config: Config) -> Tiles:
    """The tile sizes of ``config`` (InvalidConfigError if it does not fit ``dims``)."""
    kernel = config.get("kernel")
    if kernel not in KERNELS:
        raise InvalidConfigError(f"knob kernel={kernel!r} is not one of {list(KERNELS)}")
    bx, wx, tx, rx = _split(config, "tile_x", dims.x, 4)
    by, wy, ty, ry = _split(config, "tile_y", dims.y, 4)
    bk, wk, tk, rk = _split(config, "tile_k", dims.k, 4)
    bc, sc, wc = _split(config, "tile_c", dims.c, 3)
    return Tiles(kernel, bx, wx, tx, rx, by, wy, ty, ry, bk, wk, tk, rk, bc, sc, wc)


def warp_shapes(dims: ConvDims) -> list[tuple[int, int, int]]:
    """Every (T_x, T_y, T_k) with product 32 that divides (X, Y, K)."""
    return [(a, b, c) for a, b, c in factorizations(WARP, 3)
            if dims.x % a == 0 and dims.y % b == 0 and dims.k % c == 0]


def knobs(dims: ConvDims) -> list[Knob]:
    """The knobs of both schemas for ``dims``: all exact-factor multi-level tilings."""
    c_split = [d for d in divisors(dims.c) if d <= MAX_C_SPLIT]
    return [
        ChoiceKnob("kernel", KERNELS),
        SplitKnob.perfect("tile_x", dims.x, 4),
        SplitKnob.perfect("tile_y", dims.y, 4),
        SplitKnob.perfect("tile_k", dims.k, 4),
        SplitKnob.perfect("tile_c", dims.c, 3, keep=lambda t: t[0] in c_split),
    ]


def warp_violation(t: Tiles) -> str | None:
    """The schema's own rule: a warp is exactly T_x T_y T_k = 32 threads."""
    if t.warp_threads != WARP:
        return f"warp of T_x*T_y*T_k = {t.warp_threads} threads, not {WARP}"
    return None
