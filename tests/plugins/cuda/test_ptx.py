"""plugins.cuda.ptx on real nvcc/ptxas builds of a hand-checkable kernel, and on PTX text."""

from __future__ import annotations

import pytest

from orchestrator.space import Config
from orchestrator.target import detect_host
from orchestrator.task import Task
from plugins.cuda.ptx import (
    PtxasUsage,
    PtxError,
    PtxFeatures,
    compile_source,
    cuda_source,
    parse_ptxas,
    ptx_features,
    ptx_of,
    ptxas_usage,
    static_features,
)
from plugins.cuda.templates import CudaTemplates, apply_config, kernel_plan
from tests.plugins.cuda.helpers import SMALL_DENSE_CONFIG, small_dense, target

tvm = pytest.importorskip("tvm")
T4 = target("t4")


@pytest.fixture(scope="module")
def small_mod():
    return apply_config(small_dense(), SMALL_DENSE_CONFIG, T4)


@pytest.fixture(scope="module")
def small_ptx(small_mod) -> str:
    return ptx_of(small_mod, T4)


def test_cuda_source_is_the_generated_kernel(small_mod) -> None:
    src = cuda_source(small_mod, T4)
    assert 'extern "C" __global__ void __launch_bounds__(64) main_kernel(' in src
    assert src.count("__syncthreads()") == 2
    assert "__shared__" in src


def test_ptx_is_for_the_targets_arch(small_ptx: str) -> None:
    assert ".target sm_75" in small_ptx
    assert ".entry main_kernel" in small_ptx


def test_ptxas_usage_matches_the_plan(small_ptx: str) -> None:
    usage = ptxas_usage(small_ptx, "sm_75")
    plan = kernel_plan(small_dense(), SMALL_DENSE_CONFIG, T4)
    assert isinstance(usage, PtxasUsage)
    assert usage.smem_bytes == plan.smem_bytes_per_block == 2048
    assert 16 < usage.registers <= 255  # 16 accumulators at least
    assert usage.spill_bytes == 0


def test_executed_counts_by_hand(small_ptx: str) -> None:
    f = ptx_features(small_ptx)
    assert isinstance(f, PtxFeatures)
    assert f.loops == f.loops_recovered == 2 and f.max_loop_depth == 2
    # per thread: a 4 x 4 tile over K = 64; 8 stages, each loading 4 + 4 floats per
    # thread, two barriers; 16 stores at the end
    assert f.fma_executed == 4 * 4 * 64
    assert f.ld_global_executed == 8 * 8
    assert f.st_shared_executed == 8 * 8
    assert f.bar_sync_executed == 8 * 2 and f.bar_sync == 2
    assert f.st_global == f.st_global_executed == 16
    assert f.fma > 0 and f.ld_shared > 0 and f.total > f.fma
    assert f.total_executed > f.fma_executed


def test_static_features_is_one_flat_dict() -> None:
    space = CudaTemplates().generate(small_dense(), T4)
    feats = static_features(space, SMALL_DENSE_CONFIG, T4)
    assert feats["ptxas_smem_bytes"] == 2048 and feats["ptxas_registers"] > 16
    assert feats["fma_executed"] == 1024 and feats["loops_recovered"] == 2
    assert all(isinstance(v, float) for v in feats.values())


def test_static_shared_memory_over_48k_fails_ptxas() -> None:
    """Why the templates cap shared memory at 48 KiB whatever the GPU's opt-in limit."""
    task = Task.create("dense", {"M": 128, "K": 64, "N": 128})
    big = Config.of({"tile_m": [1, 16, 8], "tile_n": [1, 16, 8], "tile_k": [1, 64],
                     "layout": "blocked", "unroll": 0})
    assert kernel_plan(task, big, target("h100")).smem_bytes_per_block == 64 * 1024
    assert "shared memory" in CudaTemplates().generate(task, target("h100")).validate(big)
    ptx = ptx_of(apply_config(task, big, target("h100")), target("h100"))
    with pytest.raises(PtxError, match="shared") as err:
        ptxas_usage(ptx, "sm_90")
    assert "\n" not in str(err.value)


def test_errors_are_one_line() -> None:
    with pytest.raises(PtxError, match="not a CUDA GPU"):
        ptx_of(None, detect_host())
    with pytest.raises(PtxError) as err:
        compile_source("this is not CUDA;", "sm_75")
    message = str(err.value)
    assert message.startswith("nvcc --ptx -arch=sm_75 failed: kernel.cu(1): error")
    assert "\n" not in message
    with pytest.raises(PtxError) as err:
        ptxas_usage(".version 8.0\n.target sm_75\nbogus;", "sm_75")
    assert "ptxas" in str(err.value) and "\n" not in str(err.value)


def test_parse_ptxas_takes_the_largest_function() -> None:
    text = """ptxas info    : Compiling entry function 'a' for 'sm_90'
ptxas info    : Function properties for a
    8 bytes stack frame, 12 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem
ptxas info    : Function properties for b
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 72 registers, 1024 bytes smem
"""
    assert parse_ptxas(text) == PtxasUsage(registers=72, smem_bytes=4096, spill_bytes=20)
    with pytest.raises(PtxError):
        parse_ptxas("nothing useful")


# Loops: an outer loop (4 trips, negated predicate) around an inner count-down loop
# (10 -> 0 by 2: 5 trips); a loop from a thread-dependent start (not recovered); a loop
# entered in the middle with an unconditional back edge and its exit test in the body.
SYNTHETIC = """
.visible .entry k()
{
	.reg .pred 	%p<5>;
	mov.u32 	%r1, 0;
$L__BB0_1:
	mov.u32 	%r2, 10;
	bar.sync 	0;
$L__BB0_2:
	fma.rn.f32 	%f1, %f2, %f3, %f1;   // 5 x 4
	add.s32 	%r2, %r2, -2;
	setp.gt.s32 	%p1, %r2, 0;
	@%p1 bra 	$L__BB0_2;
	add.s32 	%r1, %r1, 1;
	setp.ge.u32 	%p2, %r1, 4;
	@!%p2 bra 	$L__BB0_1;
	mov.u32 	%r5, %tid.x;
$L__BB0_3:
	ld.global.f32 	%f4, [%rd1];
	add.s32 	%r5, %r5, 32;
	setp.lt.s32 	%p3, %r5, 100;
	@%p3 bra 	$L__BB0_3;
	mov.u32 	%r7, 0;
	mov.u32 	%r8, %r7;
	bra.uni 	$L__BB0_5;
$L__BB0_4:
	add.s32 	%r8, %r8, 16;
$L__BB0_5:
	setp.eq.s32 	%p4, %r8, 64;
	@%p4 bra 	$L__BB0_6;
	st.shared.f32 	[%r9], %f1;
	bra.uni 	$L__BB0_4;
$L__BB0_6:
	st.global.f32 	[%rd2], %f1;
	ret;
}
"""


def test_loop_trip_counts_from_ptx_text() -> None:
    f = ptx_features(SYNTHETIC)
    assert (f.loops, f.loops_recovered, f.max_loop_depth) == (4, 3, 2)
    assert f.fma == 1 and f.fma_executed == 20
    assert f.bar_sync_executed == 4
    assert f.ld_global_executed == 1          # start depends on %tid.x: counted once
    assert f.st_shared_executed == 5          # exit tested 5 times (0, 16, 32, 48, 64)
    assert f.st_global == f.st_global_executed == 1
    assert f.total == 25
    assert set(f.to_dict()) >= {"fma", "ld_global", "st_global", "ld_shared", "st_shared",
                                "bar_sync", "total", "total_executed"}
