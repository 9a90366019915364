"""The CNNOpt schedule: a config of the RS or S schema applied with ``tvm.s_tir``.

Main block loop nest after scheduling (outermost first)::

    blockIdx.x  = fuse(c_b, n, k_B, y_B, x_B)        grid (c_b only with B_c > 1)
    threadIdx.y = fuse(k_W, y_W, x_W)                warps of the block
    threadIdx.x = fuse(k_T, y_T, x_T)                the 32 lanes of a warp
      c_S:  X_shared, Wt_shared <- global (cooperative loads, all threads)
        c_W:  RS: patch <- X_shared;  ry rx k_R y_R x_R   (2-D input patch in registers)
              S:  ry y_R [row <- X_shared] rx k_R x_R     (one input row in registers)
      out_local (R^k x R^y x R^x accumulators) -> global

The padded input is never materialized: padding is inlined into the shared-memory copy.
With ``B_c > 1`` the channel reduction is split with ``rfactor``: the main kernel writes
``B_c`` partial outputs to a global buffer and a second small kernel sums them.
"""

from __future__ import annotations

from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.space import Config
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cnnopt.schema import WARP, ConvDims, Tiles, dims_of, tiles_of

MAIN_BLOCK = "conv2d_nchw"
PAD_BLOCK = "pad_temp"
# Threads per block of the final reduction kernel (only with B_c > 1).
SUM_THREADS = 256


def apply_config(task: Task, config: Config, target: TargetInfo) -> Any:
    """The scheduled ``tvm.IRModule`` of ``task`` under ``config`` (CUDA).

    Raises InvalidConfigError (one line) when the config does not fit the schema or a
    schedule primitive rejects it.
    """
    from tvm.s_tir import Schedule

    from plugins.templates.common import schedule_errors

    dims = dims_of(task)
    tiles = tiles_of(dims, config)
    if tiles.warp_threads != WARP:
        raise InvalidConfigError(f"warp of {tiles.warp_threads} threads; the schema needs 32")
    with schedule_errors(f"cnnopt config {config.key}"):
        sch = Schedule(task.operator.prim_func(task.params), error_render_level="none")
        schedule(sch, dims, tiles)
        return sch.mod


def _block(sch: Any, name: str) -> Any | None:
    try:
        return sch.get_sblock(name)
    except Exception:  # ScheduleError: no such block (no padding)
        return None


def schedule(sch: Any, dims: ConvDims, t: Tiles) -> None:
    """Apply tiles ``t`` to a fresh schedule of the conv2d in ``sch``."""
    main = sch.get_sblock(MAIN_BLOCK)
    if t.bc > 1:
        _, _, _, _, c, _, _ = sch.get_loops(main)
        c_b, _ = sch.split(c, [t.bc, None])
        final = main
        main = sch.rfactor(c_b, 0)
        c_b, n, k, y, x, c, ry, rx = _rf_loops(sch, main)
        _schedule_sum(sch, final)
    else:
        n, k, y, x, c, ry, rx = sch.get_loops(main)
        c_b = None
    k_b, k_w, k_t, k_r = sch.split(k, [t.bk, t.wk, t.tk, t.rk])
    y_b, y_w, y_t, y_r = sch.split(y, [t.by, t.wy, t.ty, t.ry])
    x_b, x_w, x_t, x_r = sch.split(x, [t.bx, t.wx, t.tx, t.rx])
    c_s, c_w = sch.split(c, [t.sc, t.wc])
    grid = [l for l in (c_b, n, k_b, y_b, x_b) if l is not None]
    inner = [ry, rx, k_r, y_r, x_r] if t.kernel == "rs" else [ry, y_r, rx, k_r, x_r]
    sch.reorder(*grid, k_w, y_w, x_w, k_t, y_t, x_t, c_s, c_w, *inner)
    sch.bind(sch.fuse(*grid), "blockIdx.x")
    sch.bind(sch.fuse(k_w, y_w, x_w), "threadIdx.y")
    lane = sch.fuse(k_t, y_t, x_t)
    sch.bind(lane, "threadIdx.x")

    acc = sch.cache_write(main, 0, "local")
    sch.reverse_compute_at(acc, lane)
    for loop in sch.get_loops(acc)[3:]:
        sch.unroll(loop)

    x_shared = sch.cache_read(main, 0, "shared")
    w_shared = sch.cache_read(main, 1, "shared")
    pad = _block(sch, PAD_BLOCK)
    if pad is not None:
        sch.compute_inline(pad)
    for cached in (x_shared, w_shared):
        sch.compute_at(cached, c_s)
        _cooperative(sch, cached, depth=4, warps=t.warps)

    x_local = sch.cache_read(main, 0, "local")
    sch.compute_at(x_local, c_w if t.kernel == "rs" else y_r)
    depth = 5 if t.kernel == "rs" else 7
    for loop in sch.get_loops(x_local)[depth:]:
        sch.unroll(loop)
    for loop in inner:
        sch.unroll(loop)
    sch.decompose_reduction(main, c_s)


def _rf_loops(sch: Any, rf: Any) -> list[Any]:
    """The rfactor block's loops as (c_b, n, k, y, x, c, ry, rx)."""
    n, k, y, x, c_b, c, ry, rx = sch.get_loops(rf)
    return [c_b, n, k, y, x, c, ry, rx]


def _cooperative(sch: Any, block: Any, depth: int, warps: int) -> None:
    """Spread a shared-memory copy over every thread of the block (lane innermost)."""
    loops = sch.get_loops(block)[depth:]
    fused = sch.fuse(*loops)
    _, w, lane = sch.split(fused, [None, warps, WARP])
    sch.bind(w, "threadIdx.y")
    sch.bind(lane, "threadIdx.x")


def _schedule_sum(sch: Any, final: Any) -> None:
    """The kernel summing the B_c partial outputs: one thread per output element."""
    n, k, y, x, _ = sch.get_loops(final)
    fused = sch.fuse(n, k, y, x)
    b, th = sch.split(fused, [None, SUM_THREADS])
    sch.bind(b, "blockIdx.x")
    sch.bind(th, "threadIdx.x")
