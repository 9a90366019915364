"""The cuda space generator: registration, spaces for the suite, checks, plans, builds."""

from __future__ import annotations

import dataclasses
import itertools
import random
import re

import pytest

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import GPUS
from orchestrator.kernel_plan import KernelPlan, blocks_per_sm
from orchestrator.space import Config
from orchestrator.suite import read_suite
from orchestrator.target import detect_host
from orchestrator.task import Task
from plugins.cuda.common import LAYOUTS, STATIC_SMEM_BYTES, shared_bytes
from plugins.cuda.templates import PLAN_FN, SCHEDULE_FN, CudaTemplates, apply_config, kernel_plan
from plugins.templates.cpu import CpuTemplates
from tests.plugins.cuda.helpers import SMALL_DENSE_CONFIG, cuda_plugins, small_dense, target

tvm = pytest.importorskip("tvm")

SUITE = [t for t in read_suite() if t.op in ("dense", "conv2d")]
RESNET = [t for t in SUITE if t.op == "conv2d"]


@pytest.fixture(scope="module")
def gen() -> CudaTemplates:
    return CudaTemplates()


def test_registered_as_cuda_space_generator() -> None:
    plugins = cuda_plugins()
    assert isinstance(plugins.create("space_generator", "cuda"), CudaTemplates)


def test_supports_dense_and_conv2d_on_cuda_only(gen: CudaTemplates) -> None:
    h100 = target("h100")
    assert gen.supports(small_dense(), h100)
    assert gen.supports(RESNET[0], h100)
    assert not gen.supports(Task.create("batch_matmul", {"B": 2, "M": 8, "K": 8, "N": 8}), h100)
    host = detect_host()
    assert not gen.supports(small_dense(), host)
    assert not CpuTemplates().supports(small_dense(), h100)
    assert CpuTemplates().supports(small_dense(), host)


@pytest.mark.parametrize("gpu", ["h100", "t4"])
def test_every_resnet18_and_dense_layer_has_a_space(gen: CudaTemplates, gpu: str) -> None:
    assert len(RESNET) == 11 and len(SUITE) == 14
    tgt = target(gpu)
    rng = random.Random(0)
    for task in SUITE:
        space = gen.generate(task, tgt)
        assert space.schedule_fn == SCHEDULE_FN and space.plan_fn == PLAN_FN
        assert space.size > 100, task.name
        assert "check relaxed" not in space.notes, task.name
        for _ in range(3):
            cfg = space.sample(rng)
            assert cfg is not None, task.name
            assert space.validate(cfg) is None
            plan = kernel_plan(task, cfg, tgt)
            assert 32 <= plan.threads_per_block <= 1024
            assert plan.smem_bytes_per_block <= STATIC_SMEM_BYTES
            assert plan.regs_per_thread <= 255
            assert plan.useful_flops == task.flops


def _dense(m: int, k: int, n: int, tm, tn, tk, unroll: int = 0,
           layout: str = "blocked") -> tuple[Task, Config]:
    return (Task.create("dense", {"M": m, "K": k, "N": n}),
            Config.of({"tile_m": tm, "tile_n": tn, "tile_k": tk, "layout": layout,
                       "unroll": unroll}))


@pytest.mark.parametrize("gpu", ["h100", "t4"])
def test_check_rejects_what_the_gpu_cannot_launch(gen: CudaTemplates, gpu: str) -> None:
    tgt = target(gpu)
    cases = {
        "threads per block": _dense(2048, 64, 2048, [32, 64, 1], [64, 32, 1], [8, 8]),
        "shared memory": _dense(1024, 1024, 1024, [8, 32, 4], [8, 32, 4], [8, 128]),
        "registers per thread": _dense(1024, 64, 1024, [16, 4, 16], [16, 4, 16], [8, 8]),
        "registers of a block": _dense(1024, 64, 1024, [4, 32, 8], [4, 32, 8], [8, 8]),
        "waste warp lanes": _dense(64, 64, 64, [16, 2, 2], [16, 2, 2], [8, 8]),
        "interleaved columns": _dense(64, 64, 64, [2, 8, 4], [2, 32, 1], [8, 8],
                                      layout="interleaved"),
    }
    for words, (task, cfg) in cases.items():
        reason = gen.generate(task, tgt).validate(cfg)
        assert reason and words in reason, (words, reason)
    task, cfg = _dense(64, 64, 64, [2, 8, 4], [2, 8, 4], [8, 8])
    assert gen.generate(task, tgt).validate(cfg) is None


def test_tiny_shapes_relax_the_warp_rule(gen: CudaTemplates) -> None:
    task = Task.create("dense", {"M": 1, "K": 17, "N": 3})
    space = gen.generate(task, target())
    assert space.check is not None and space.check.min_threads == 3
    assert list(space)  # every config has fewer than 32 threads, yet some are valid


def test_dense_plan_by_hand() -> None:
    plan = kernel_plan(small_dense(), SMALL_DENSE_CONFIG, target("t4"))
    assert (plan.grid_blocks, plan.threads_per_block, plan.reduction_steps) == (4, 64, 8)
    assert plan.regs_per_thread == 16 + 8 + 20
    assert plan.smem_bytes_per_block == 4 * (32 * 8 + 8 * 32)
    assert plan.flops == plan.useful_flops == 2 * 64**3
    # every block reads its 32 rows of A and 32 columns of B once: 4 x 2 x 32 x 64 floats
    assert plan.global_load_bytes == 4 * 4 * 2 * 32 * 64
    assert plan.global_store_bytes == 4 * 64 * 64
    # every thread reads 4 + 4 operands from shared memory per k, 256 threads, K = 64
    assert plan.smem_load_bytes == 4 * 256 * 64 * 8
    assert plan.load_run_bytes == 32  # A rows of 8 floats per stage
    assert plan.tile("block_m") == 32 and plan.tile("stage_k") == 8
    assert blocks_per_sm(plan, GPUS["t4"]) > 0


def test_conv_plan_by_hand() -> None:
    task = Task.create("conv2d", {"N": 1, "C": 16, "H": 16, "W": 16, "K": 32, "R": 3, "S": 3,
                                  "stride": 2, "pad": 1})
    cfg = Config.of({"tile_f": [2, 4, 4], "tile_y": [2, 4, 1], "tile_x": [1, 4, 2],
                     "tile_rc": [4, 4], "rs_at": "inner", "layout": "blocked", "unroll": 0})
    plan = kernel_plan(task, cfg, target())
    assert (plan.grid_blocks, plan.threads_per_block, plan.reduction_steps) == (4, 64, 4)
    rows, cols = (4 - 1) * 2 + 3, (8 - 1) * 2 + 3       # input window of a 4 x 8 output tile
    assert plan.smem_bytes_per_block == shared_bytes(4 * rows * cols, 16 * 4 * 9)
    assert plan.regs_per_thread == 4 * 2 + (4 + 2) + 20
    assert plan.global_load_bytes == 4 * 4 * 4 * (4 * rows * cols + 16 * 4 * 9)
    assert plan.load_run_bytes == 4 * 16  # window rows of 17 floats, in a 16-wide image
    outer = kernel_plan(task, Config.of({**cfg.to_dict(), "rs_at": "outer"}), target())
    assert outer.reduction_steps == 4 * 9 and outer.load_run_bytes == 4  # strided taps


def test_bad_configs_raise_invalid_config(gen: CudaTemplates) -> None:
    task, cfg = _dense(64, 64, 64, [3, 8, 4], [2, 8, 4], [8, 8])
    with pytest.raises(InvalidConfigError, match="tile_m"):
        kernel_plan(task, cfg, target())
    with pytest.raises(InvalidConfigError, match="tile_m"):
        apply_config(task, cfg, target())
    assert "tile_m" in (gen.generate(task, target()).check(cfg) or "")


def _source(task: Task, cfg: Config, tgt) -> str:
    ex = tvm.compile(apply_config(task, cfg, tgt), target=tgt.tvm_target())
    return ex.mod.imports[0].inspect_source("cuda")


def _check_source(src: str, plan: KernelPlan) -> None:
    """The kernel has the plan's launch bounds, shared arrays and register tile."""
    assert "__syncthreads()" in src
    arrays = [int(n) for n in re.findall(r"__shared__ alignas\(64\) float \w+\[(\d+)\]", src)]
    assert len(arrays) == 2 and shared_bytes(*arrays) == plan.smem_bytes_per_block
    assert f"__launch_bounds__({plan.threads_per_block})" in src
    tile = dict(plan.tiles)
    accumulators = (tile["thread_m"] * tile["thread_n"] if "thread_m" in tile
                    else tile["thread_f"] * tile["thread_y"] * tile["thread_x"])
    assert re.findall(r"float \w+_local_ptr\[(\d+)\]", src) == [str(accumulators)]


def test_sampled_configs_build_with_shared_stages(gen: CudaTemplates) -> None:
    rng = random.Random(1)
    tgt = target("h100")
    for task in SUITE[::2]:  # 7 layers, one config each
        space = gen.generate(task, tgt)
        cfg = space.sample(rng)
        assert cfg is not None
        _check_source(_source(task, cfg, tgt), kernel_plan(task, cfg, tgt))


@pytest.mark.parametrize("shape", [
    {"N": 2, "C": 8, "H": 12, "W": 12, "K": 16, "R": 3, "S": 3, "stride": 1, "pad": 2,
     "dilation": 2},
    {"N": 1, "C": 3, "H": 17, "W": 17, "K": 17, "R": 3, "S": 3, "stride": 2, "pad": 1},
    {"N": 1, "C": 5, "H": 7, "W": 7, "K": 3, "R": 1, "S": 1, "stride": 1, "pad": 0},
])
def test_awkward_convolutions_build(gen: CudaTemplates, shape: dict) -> None:
    task = Task.create("conv2d", shape)
    tgt = target("t4")
    space = gen.generate(task, tgt)
    rng = random.Random(2)
    for rs_at, layout in itertools.product(space.knob("rs_at").choices, LAYOUTS):
        cfg = space.sample(rng)
        assert cfg is not None
        cfg = Config.of({**cfg.to_dict(), "rs_at": rs_at, "layout": layout})
        _check_source(_source(task, cfg, tgt), kernel_plan(task, cfg, tgt))


def test_space_check_is_picklable(gen: CudaTemplates) -> None:
    import pickle

    space = gen.generate(small_dense(), target())
    check = pickle.loads(pickle.dumps(space.check))
    assert check(SMALL_DENSE_CONFIG) is None
    assert dataclasses.replace(check, relaxed=True)(SMALL_DENSE_CONFIG) is None


def test_interleaved_columns_make_consecutive_threads_store_consecutively() -> None:
    task, tgt = small_dense(), target("t4")
    inter = Config.of({**SMALL_DENSE_CONFIG.to_dict(), "layout": "interleaved"})
    assert kernel_plan(task, inter, tgt).smem_bytes_per_block == 2048
    stores = {}
    for cfg in (SMALL_DENSE_CONFIG, inter):
        src = _source(task, cfg, tgt)
        _check_source(src, kernel_plan(task, cfg, tgt))
        stores[cfg["layout"]] = " ".join(ln for ln in src.splitlines() if "dense_ptr[" in ln)
    # blocked: thread t writes columns 4t..4t+3; interleaved: columns t, t+8, t+16, t+24
    assert "(((int)threadIdx.x) & 7) * 4)" in stores["blocked"]
    assert "+ (((int)threadIdx.x) & 7))]" in stores["interleaved"]
    assert "* 4)" not in stores["interleaved"].split("] =")[0].split("+ (ax0")[-1]
