"""Each PSA penalty and equation 4 on hand-computed kernel plans."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from orchestrator.gpus import GPUS
from plugins.psa.latency import estimate, l_total
from plugins.psa.penalties import (
    PsaError, kernel_penalty, memory_penalty, penalties, register_limit, register_penalty,
    resident_blocks, thread_alpha, warp_penalty,
)
from tests.plugins.psa.helpers import SMALL_GPU, plan


def test_register_limit_is_what_one_blocks_warps_can_hold() -> None:
    assert register_limit(plan(threads_per_block=1024), SMALL_GPU) == 64   # 65536 / 1024
    assert register_limit(plan(threads_per_block=128), SMALL_GPU) == 255   # per-thread cap
    assert register_limit(plan(threads_per_block=48), SMALL_GPU) == 255    # 2 warps = 64


def test_register_over_allocation() -> None:
    assert register_penalty(plan(threads_per_block=1024, regs_per_thread=64), SMALL_GPU) == 1.0
    assert register_penalty(plan(threads_per_block=1024, regs_per_thread=128), SMALL_GPU) == 2.0
    assert register_penalty(plan(regs_per_thread=300), SMALL_GPU) == pytest.approx(300 / 255)
    assert register_penalty(plan(regs_per_thread=16), SMALL_GPU) == 1.0   # never below 1


def test_over_allocated_plan_still_launches_with_spilled_registers() -> None:
    p = plan(threads_per_block=1024, regs_per_thread=128, grid_blocks=8)
    assert resident_blocks(p, SMALL_GPU) == 1      # registers capped at 64: 65536 / 65536
    pen = penalties(p, SMALL_GPU)
    assert pen.feasible and pen.p_reg == 2.0


def test_memory_to_compute_ratio() -> None:
    # 4e8 + 4e8 bytes = 2e8 values loaded for 1e9 flops
    assert thread_alpha(plan()) == pytest.approx(1.2)
    assert thread_alpha(plan(smem_load_bytes=0.0, global_load_bytes=4e9)) == pytest.approx(2.0)
    with pytest.raises(PsaError):
        thread_alpha(plan(flops=0.0))


def test_p_thread_is_alpha_times_p_reg() -> None:
    pen = penalties(plan(threads_per_block=1024, regs_per_thread=128, grid_blocks=8), SMALL_GPU)
    assert pen.p_thread == pytest.approx(1.2 * 2.0)


def test_warp_alignment() -> None:
    assert warp_penalty(48) == 0.75          # 48 / 64: the second warp is half empty
    assert warp_penalty(64) == 1.0
    assert warp_penalty(1) == 1 / 32
    assert warp_penalty(100) == pytest.approx(100 / 128)
    with pytest.raises(PsaError):
        warp_penalty(0)


def test_kernel_waves_tail_effect() -> None:
    # B* = 8 SMs x 2 blocks = 16 resident blocks
    assert resident_blocks(plan(), SMALL_GPU) == 2
    assert kernel_penalty(plan(grid_blocks=48), SMALL_GPU) == 1.0                  # 3 waves
    assert kernel_penalty(plan(grid_blocks=16), SMALL_GPU) == 1.0                  # 1 wave
    # 2.1 waves: the third wave runs 0.1 of B*, so 33.6 of 48 slots work
    p21 = plan(grid_blocks=34)
    assert kernel_penalty(p21, SMALL_GPU) == pytest.approx(34 / 48)
    ten_sms = replace(SMALL_GPU, sms=10, max_blocks_per_sm=1)                       # B* = 10
    assert kernel_penalty(plan(grid_blocks=21), ten_sms) == pytest.approx(0.7)      # 2.1 waves
    assert kernel_penalty(plan(grid_blocks=30), ten_sms) == 1.0                     # 3 waves


def test_small_kernel_is_weighed_by_warps() -> None:
    # 4 blocks of 4 warps: W = 16 of W* = 8 SMs x 2 blocks x 4 warps = 64
    assert kernel_penalty(plan(grid_blocks=4), SMALL_GPU) == pytest.approx(16 / 64)
    # the two cases of equation 3 meet at B = B*
    assert kernel_penalty(plan(grid_blocks=15), SMALL_GPU) == pytest.approx(15 / 16)


def test_block_that_does_not_fit_gives_infinite_latency() -> None:
    p = plan(smem_bytes_per_block=200 * 1024)
    assert kernel_penalty(p, SMALL_GPU) == 0.0
    assert math.isinf(l_total(p, SMALL_GPU))


def test_memory_transaction_alignment() -> None:
    assert memory_penalty(12) == pytest.approx(12 / 32)     # one 32-byte sector, 12 used
    assert memory_penalty(32) == 1.0
    assert memory_penalty(128) == 1.0
    assert memory_penalty(48) == pytest.approx(48 / 64)
    assert memory_penalty(12, transaction_bytes=128) == pytest.approx(12 / 128)
    with pytest.raises(PsaError):
        memory_penalty(0)


def test_l_total_by_hand() -> None:
    # 12 blocks of 48 threads, 12-byte load runs, on SMALL_GPU (1000 GFLOPS, 100 GB/s)
    p = plan(grid_blocks=12, threads_per_block=48, load_run_bytes=12)
    pen = penalties(p, SMALL_GPU)
    assert (pen.p_reg, pen.p_warp, pen.blocks_per_sm) == (1.0, 0.75, 2)
    assert pen.p_kernel == pytest.approx(24 / 32)   # W = 24 warps of W* = 8 x 2 x 2
    assert pen.alpha == pytest.approx(1.2)
    assert pen.p_mem == pytest.approx(0.375)
    compute = 1e9 * 1.2 / (1000e9 * 0.75 * 0.75)    # 2.1333 ms
    load = 4e8 / (100e9 * 0.375)                    # 10.667 ms
    store = 1e8 / 100e9                             # 1 ms
    est = estimate(p, SMALL_GPU)
    assert est.compute == pytest.approx(compute)
    assert est.memory == pytest.approx(load + store)
    assert est.total == pytest.approx(0.0138)


def test_l_total_on_h100_table_figures() -> None:
    h100 = GPUS["h100"]
    # 132 x 16 resident blocks of 128 threads (32 regs): exactly one wave, no penalty
    p = plan(grid_blocks=132 * 16, load_run_bytes=128, smem_load_bytes=0.0,
             global_load_bytes=0.0, global_store_bytes=0.0)
    assert penalties(p, h100).p_kernel == 1.0
    assert l_total(p, h100) == pytest.approx(1e9 / 66900e9)
