"""Tuna's NVIDIA GPU features (section III-B): PTX counts, parallelism, bank conflicts.

For a CUDA config, without a GPU:

* PTX from nvcc, executed per-thread counts of fma / ld / st (loops weighted by the trip
  counts recovered from registers, Algorithm 3: ``plugins.cuda.ptx``);
* registers and shared memory per block from ptxas, hence the blocks one SM holds
  (warp latency hiding) and the number of waves; a grid smaller than the SM count pays
  a full wave while leaving SMs idle (the SM occupancy penalty);
* shared-memory instructions multiplied by the first warp's bank-conflict degree
  (:mod:`plugins.tuna.gpu_banks`).

Each instruction class becomes a feature in SM issue cycles:
``executed count x waves x max(resident warps, HIDE_WARPS) / SCHEDULERS``. With at least
``HIDE_WARPS`` resident warps an SM is throughput-bound and its 4 schedulers share the
warps; with fewer, latency is exposed and the SM runs as if it had ``HIDE_WARPS``.
The score (equation 2) weights the classes by their cost in cycles (equation 3).
"""

from __future__ import annotations

import math
import time
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import gpu_spec
from orchestrator.kernel_plan import KernelPlan, blocks_per_sm
from orchestrator.target import TargetInfo

GPU_FEATURES: tuple[str, ...] = ("fma", "ld_global", "st_global", "ld_shared", "st_shared",
                                 "bar", "other")
# Diagnostics stored beside the features (not weighted by the score)
GPU_DIAGNOSTICS: tuple[str, ...] = ("grid", "threads", "registers", "smem", "blocks_per_sm",
                                    "waves", "bank_degree", "loops", "loops_recovered")
SCHEDULERS = 4      # warp schedulers per SM (Volta and later)
HIDE_WARPS = 16     # resident warps per SM needed to hide latency (4 per scheduler)


def analyze_cuda(mod: Any, target: TargetInfo) -> Any:
    """Features of a scheduled CUDA IRModule for ``target`` (kind ``cuda``)."""
    from plugins.cuda.ptx import arch_of, ptx_features, ptx_of, ptxas_usage
    from plugins.tuna.features import Features
    from plugins.tuna.gpu_banks import bank_conflicts, launch_shape

    start = time.perf_counter()
    spec = gpu_spec(target)
    func = mod["main"]
    grid, threads = launch_shape(func)
    banks = bank_conflicts(func)
    ptx = ptx_of(mod, target)
    usage = ptxas_usage(ptx, arch_of(target))
    counts = ptx_features(ptx)
    plan = KernelPlan(grid, threads, usage.registers, usage.smem_bytes, 0.0, 0.0, 0.0, 0.0,
                      0.0, 0, 0)
    per_sm = blocks_per_sm(plan, spec)
    if per_sm == 0:
        raise InvalidConfigError(
            f"a block of {threads} threads, {usage.registers} registers per thread and "
            f"{usage.smem_bytes} B of shared memory does not fit on one SM of {spec.name}")
    waves = math.ceil(grid / (per_sm * spec.sms))
    resident = per_sm * plan.warps_per_block
    factor = waves * max(resident, HIDE_WARPS) / SCHEDULERS
    shared_scale = banks.degree
    fma = counts.fma_executed
    ldg, stg = counts.ld_global_executed, counts.st_global_executed
    lds, sts = counts.ld_shared_executed, counts.st_shared_executed
    bar = counts.bar_sync_executed
    other = max(0.0, counts.total_executed - fma - ldg - stg - lds - sts - bar)
    values = {"fma": fma, "ld_global": ldg, "st_global": stg, "ld_shared": lds * shared_scale,
              "st_shared": sts * shared_scale, "bar": bar, "other": other}
    diag = {"grid": grid, "threads": threads, "registers": usage.registers,
            "smem": usage.smem_bytes, "blocks_per_sm": per_sm, "waves": waves,
            "bank_degree": banks.degree, "loops": counts.loops,
            "loops_recovered": counts.loops_recovered}
    return Features(tuple((n, float(values[n] * factor)) for n in GPU_FEATURES)
                    + tuple((n, float(diag[n])) for n in GPU_DIAGNOSTICS),
                    counts.loops, counts.loops_recovered, time.perf_counter() - start)
