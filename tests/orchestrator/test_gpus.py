from __future__ import annotations

import pytest

from orchestrator.errors import TargetError
from orchestrator.gpus import GPUS, gpu_spec, resolve_gpu_target, spec_for_name
from orchestrator.kernel_plan import KernelPlan, blocks_per_sm, occupancy, waves
from orchestrator.target import resolve_target


def test_table_has_the_issue_gpus():
    assert {"h100", "h200", "a100", "v100", "t4", "rtx2080ti"} <= set(GPUS)
    for g in GPUS.values():
        assert g.arch.startswith("sm_") and g.sms > 0 and g.peak_fp32_gflops > 0


def test_named_target_compiles_for_that_arch():
    t = resolve_target("cuda:a100")
    assert t.kind == "cuda" and t.tvm_json["arch"] == "sm_80" and t.cores == 108
    assert gpu_spec(t) is GPUS["a100"]
    assert t.tvm_target().kind.name == "cuda"
    assert t.key != resolve_target("cuda:h100").key


def test_unknown_gpu_is_one_line_error():
    with pytest.raises(TargetError, match="unknown GPU 'x9'.*h100"):
        resolve_gpu_target("cuda:x9")
    with pytest.raises(TargetError, match="not a CUDA GPU"):
        gpu_spec(resolve_target("host"))


def test_nvidia_smi_names_map_to_the_table():
    assert spec_for_name("NVIDIA H100 80GB HBM3").name == "h100"
    assert spec_for_name("NVIDIA H200").name == "h200"
    assert spec_for_name("NVIDIA GeForce RTX 2080 Ti").name == "rtx2080ti"
    assert spec_for_name("Some Other GPU") is None


def _plan(threads: int, regs: int, smem: int, grid: int = 1000) -> KernelPlan:
    return KernelPlan(grid, threads, regs, smem, 1e9, 1e9, 1e6, 1e5, 1e7, 128, 8)


def test_occupancy_limits_by_hand():
    h100 = GPUS["h100"]
    # 256 threads, 32 regs: threads limit 2048/256 = 8 blocks; regs 65536/(32*256) = 8
    assert blocks_per_sm(_plan(256, 32, 0), h100) == 8
    assert occupancy(_plan(256, 32, 0), h100) == 1.0
    # 128 regs per thread: 65536 / (128 * 256) = 2 blocks
    assert blocks_per_sm(_plan(256, 128, 0), h100) == 2
    # shared memory: 100 KiB per block -> 2 blocks in 228 KiB
    assert blocks_per_sm(_plan(64, 32, 100 * 1024), h100) == 2
    # does not fit at all
    assert blocks_per_sm(_plan(2048, 32, 0), h100) == 0
    assert waves(_plan(2048, 32, 0), h100) == float("inf")
    assert waves(_plan(256, 32, 0, grid=132 * 8 * 2), h100) == 2.0
