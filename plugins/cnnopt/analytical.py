"""CNNOpt's analytical features (section 4.1) and the time they estimate (section 4.3).

Data movement is counted in memory transactions, as in the paper:

* global -> shared, per block and staged channel: ``ceil((W^x+F_x-1)(W^y+F_y-1)/32)``
  for the input and ``ceil(W^k F_x F_y / 32)`` for the weights (128-byte transactions);
* shared -> registers, per warp and channel: the input slice and the weights a thread
  reads (RS: ``(R^y+F_y-1)(R^x+F_x-1) + F_x F_y R^k``), times warps, blocks and channels.

Concurrency: occupancy and concurrent blocks per SM (registers, shared memory, threads),
and thread-block waves for the tail effect. The estimated time runs the SM that gets the
most blocks: ``ceil(waves)`` rounds, each limited by the slowest of DRAM, shared-memory
and FMA throughput of its resident blocks, slowed down when too few warps hide latency,
plus a fixed synchronization cost per shared-memory stage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import GpuSpec
from orchestrator.kernel_plan import KernelPlan, blocks_per_sm, occupancy
from orchestrator.space import Config, Space
from plugins.cnnopt.plan import plan_of, smem_reads_per_channel
from plugins.cnnopt.schema import ConvDims, Tiles, dims_of, tiles_of

TRANSACTION_FLOATS = 32
TRANSACTION_BYTES = 128
# Resident warps per SM needed to hide memory and pipeline latency (4 schedulers x 2).
HIDE_WARPS = 8
# Fixed cost of a kernel launch, seconds.
LAUNCH_SECONDS = 3e-6
# Cycles a block spends per shared-memory stage on its two __syncthreads (not hidden).
STAGE_CYCLES = 100

FEATURES = ("g2s_tx", "s2r_tx", "occupancy", "blocks_per_sm", "waves", "regs", "smem",
            "est_seconds")


@dataclass(frozen=True)
class Analysis:
    """The analytical features of one config."""

    g2s_tx: float          # global -> shared transactions, whole launch
    s2r_tx: float          # shared -> register warp transactions, whole launch
    occupancy: float
    blocks_per_sm: int
    waves: float
    regs: int
    smem: int
    est_seconds: float

    def values(self) -> list[float]:
        return [float(getattr(self, n)) for n in FEATURES]


def transactions(dims: ConvDims, t: Tiles) -> tuple[float, float]:
    """(global->shared, shared->register) transactions of the whole launch."""
    grid = dims.n * t.blocks
    channels = t.sc * t.wc
    g_in = math.ceil(dims.in_rows(t.block_y) * dims.in_cols(t.block_x) / TRANSACTION_FLOATS)
    g_w = math.ceil(t.block_k * dims.fy * dims.fx / TRANSACTION_FLOATS)
    s_in, s_w = smem_reads_per_channel(dims, t)
    g2s = float(grid * channels * (g_in + g_w))
    s2r = float(grid * t.warps * channels * (s_in + s_w))
    return g2s, s2r


def estimate_seconds(plan: KernelPlan, g2s_tx: float, s2r_tx: float, gpu: GpuSpec,
                     bc: int = 1, outputs: int = 0) -> float:
    """Estimated time of a launch from its transactions, occupancy and waves."""
    per_sm = blocks_per_sm(plan, gpu)
    if per_sm == 0:
        return math.inf
    grid = plan.grid_blocks
    resident = min(per_sm, math.ceil(grid / gpu.sms))
    rounds = math.ceil(grid / (per_sm * gpu.sms))
    dram = gpu.mem_bandwidth_gbs * 1e9 / gpu.sms          # bytes/s per SM
    smem = gpu.clock_ghz * 1e9                             # warp transactions/s per SM
    fma = gpu.peak_fp32_gflops * 1e9 / gpu.sms             # flop/s per SM
    per_block = max(g2s_tx * TRANSACTION_BYTES / grid / dram, s2r_tx / grid / smem,
                    plan.flops / grid / fma)
    hide = min(1.0, resident * plan.warps_per_block / HIDE_WARPS)
    stages = plan.reduction_steps * STAGE_CYCLES / (gpu.clock_ghz * 1e9)
    seconds = rounds * (resident * per_block / hide + stages) + LAUNCH_SECONDS
    if bc > 1:  # the kernel summing partial outputs: read bc, write one
        seconds += LAUNCH_SECONDS + 4.0 * outputs * (bc + 1) / (gpu.mem_bandwidth_gbs * 1e9)
    return seconds


def analyze(dims: ConvDims, t: Tiles, gpu: GpuSpec, useful_flops: float = 0.0) -> Analysis:
    """Every analytical feature of tiles ``t`` on ``gpu``."""
    plan = plan_of(dims, t, useful_flops)
    g2s, s2r = transactions(dims, t)
    outputs = dims.n * dims.k * dims.y * dims.x
    per_sm = blocks_per_sm(plan, gpu)
    return Analysis(
        g2s_tx=g2s, s2r_tx=s2r, occupancy=occupancy(plan, gpu), blocks_per_sm=per_sm,
        waves=plan.grid_blocks / (per_sm * gpu.sms) if per_sm else math.inf,
        regs=plan.regs_per_thread, smem=plan.smem_bytes_per_block,
        est_seconds=estimate_seconds(plan, g2s, s2r, gpu, t.bc, outputs))


class AnalyticalModel:
    """Estimated seconds of cnnopt configs on one GPU from the analytical features."""

    def __init__(self, gpu: GpuSpec) -> None:
        self.gpu = gpu

    def analyses(self, space: Space, configs: Sequence[Config]) -> list[Analysis | None]:
        """The analysis of each config; None for a config the schema rejects."""
        dims = dims_of(space.task)
        out: list[Analysis | None] = []
        for cfg in configs:
            try:
                out.append(analyze(dims, tiles_of(dims, cfg), self.gpu))
            except InvalidConfigError:
                out.append(None)
        return out

    def estimate_configs(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """Estimated seconds per config (inf when it cannot run)."""
        return [a.est_seconds if a else math.inf for a in self.analyses(space, configs)]
