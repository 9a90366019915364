"""Kernel plans of CNNOpt configs, from the knobs alone (no build): ``Space.plan_fn``.

Register estimates follow the paper's capacity equations, per thread (the paper
multiplies them by the 32 threads of a warp):

* RS kernel, equation (2): ``R^x R^y R^k + (R^y + F_y - 1) + (R^x + F_x - 1) + 1``
* S kernel,  equation (3): ``R^x R^y R^k + (R^x + F_x - 1) + 1``

For strided or dilated convolutions ``R + F - 1`` generalizes to the input extent an
``R``-wide output tile reads, ``(R - 1) * stride + dilation * (F - 1) + 1``. The plan's
``regs_per_thread`` adds ``REG_OVERHEAD`` registers for indices and addresses.

Equation (2) is implemented as printed (a sum of the two input extents), although the
RS schedule (plugins/cnnopt/schedule.py) stages the whole 2-D input patch,
``(R^y + F_y - 1)(R^x + F_x - 1)`` values, in registers; nvcc keeps what it needs.
"""

from __future__ import annotations

from orchestrator.errors import InvalidConfigError
from orchestrator.kernel_plan import KernelPlan
from orchestrator.space import Config
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cnnopt.schema import WARP, ConvDims, Tiles, dims_of, tiles_of

FLOAT_BYTES = 4
# Registers a thread needs beyond its operands (loop indices, addresses, predicates).
REG_OVERHEAD = 24


def registers_rs(rx: int, ry: int, rk: int, in_rows: int, in_cols: int) -> int:
    """Equation (2) per thread: output tile, input column and row slices, one weight."""
    return rx * ry * rk + in_rows + in_cols + 1


def registers_s(rx: int, ry: int, rk: int, in_cols: int) -> int:
    """Equation (3) per thread: output tile, one input row slice, one weight."""
    return rx * ry * rk + in_cols + 1


def operand_registers(dims: ConvDims, t: Tiles) -> int:
    """Registers per thread for operands by the paper's equation for ``t.kernel``."""
    if t.kernel == "rs":
        return registers_rs(t.rx, t.ry, t.rk, dims.in_rows(t.ry), dims.in_cols(t.rx))
    return registers_s(t.rx, t.ry, t.rk, dims.in_cols(t.rx))


def warp_registers(dims: ConvDims, t: Tiles) -> int:
    """Equations (2)/(3) as the paper writes them: times T_x T_y T_k threads."""
    return operand_registers(dims, t) * t.warp_threads


def smem_floats(dims: ConvDims, t: Tiles) -> tuple[int, int]:
    """(input, weight) floats one shared-memory stage of a block holds."""
    inp = t.wc * dims.in_rows(t.block_y) * dims.in_cols(t.block_x)
    wgt = t.block_k * t.wc * dims.fy * dims.fx
    return inp, wgt


def smem_bytes(dims: ConvDims, t: Tiles) -> int:
    inp, wgt = smem_floats(dims, t)
    return FLOAT_BYTES * (inp + wgt)


def smem_reads_per_channel(dims: ConvDims, t: Tiles) -> tuple[int, int]:
    """(input, weight) shared -> register loads one thread issues per input channel."""
    if t.kernel == "rs":
        inp = dims.in_rows(t.ry) * dims.in_cols(t.rx)
        wgt = dims.fy * dims.fx * t.rk
    else:
        inp = dims.fy * t.ry * dims.in_cols(t.rx)
        wgt = dims.fy * dims.fx * t.rk * t.ry
    return inp, wgt


def plan_of(dims: ConvDims, t: Tiles, useful_flops: float) -> KernelPlan:
    """The KernelPlan of tiles ``t`` (the B_c > 1 sum kernel is counted in traffic only)."""
    grid = dims.n * t.blocks
    threads = t.threads
    channels = t.sc * t.wc            # per block
    stage = smem_bytes(dims, t)
    outputs = dims.n * dims.k * dims.y * dims.x
    flops = 2.0 * outputs * dims.c * dims.fy * dims.fx + (outputs * t.bc if t.bc > 1 else 0)
    inp, wgt = smem_reads_per_channel(dims, t)
    store = FLOAT_BYTES * outputs * t.bc
    if t.bc > 1:  # the sum kernel reads the partial outputs and writes the result
        store += FLOAT_BYTES * outputs
    return KernelPlan(
        grid_blocks=grid,
        threads_per_block=threads,
        regs_per_thread=operand_registers(dims, t) + REG_OVERHEAD,
        smem_bytes_per_block=stage,
        flops=flops,
        useful_flops=useful_flops,
        global_load_bytes=float(grid * t.sc * stage
                                + (FLOAT_BYTES * outputs * t.bc if t.bc > 1 else 0)),
        global_store_bytes=float(store),
        smem_load_bytes=float(FLOAT_BYTES * (inp + wgt) * channels * threads * grid),
        load_run_bytes=min(128, FLOAT_BYTES * dims.in_cols(t.block_x)),
        reduction_steps=t.sc,
        tiles=t.named(),
    )


def plan_config(task: Task, config: Config, target: TargetInfo) -> KernelPlan:
    """``Space.plan_fn`` of the cnnopt space (InvalidConfigError for a broken config)."""
    dims = dims_of(task)
    t = tiles_of(dims, config)
    if t.warp_threads != WARP:
        raise InvalidConfigError(f"warp of {t.warp_threads} threads; the schema needs 32")
    return plan_of(dims, t, float(task.flops))
