"""Tuna on NVIDIA GPUs without a GPU: bank conflicts from the TIR, launch shape, PTX-based
features, GPU coefficients, and static tuning of a CUDA space through the loop."""

from __future__ import annotations

import json
import shutil

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.target import resolve_target
from orchestrator.task import Task
from plugins.tuna.coefficients import Coefficients, prior
from plugins.tuna.gpu_banks import bank_conflicts, degree, launch_shape

NVCC = shutil.which("nvcc") is not None
needs_nvcc = pytest.mark.skipif(not NVCC, reason="needs nvcc (CUDA toolkit) to emit PTX; "
                                                 "no GPU is needed")


def _copy_kernel(transpose: bool, x: int = 32, y: int = 32):
    """C = 2 * A (or A transposed), A staged in shared memory, threads (x, y)."""
    import tvm
    from tvm import te

    a = te.placeholder((y, x) if not transpose else (x, y), name="A")
    c = te.compute((y, x), (lambda i, j: a[j, i] * 2.0) if transpose
                   else (lambda i, j: a[i, j] * 2.0), name="C")
    sch = tvm.s_tir.Schedule(tvm.IRModule({"main": te.create_prim_func([a, c])}))
    block = sch.get_sblock("C")
    i, j = sch.get_loops(block)
    sch.bind(i, "threadIdx.y")
    sch.bind(j, "threadIdx.x")
    sch.cache_read(block, 0, "shared")
    return sch.mod


def test_degree_by_hand():
    assert degree(list(range(32))) == 1                 # consecutive words
    assert degree([0] * 32) == 1                        # one word: a broadcast
    assert degree([2 * t for t in range(32)]) == 2      # stride 2: two words per bank
    assert degree([32 * t for t in range(32)]) == 32    # a column: one bank


def test_row_access_is_conflict_free_and_column_access_is_32_way():
    row = bank_conflicts(_copy_kernel(False)["main"])
    col = bank_conflicts(_copy_kernel(True)["main"])
    assert row.worst == 1 and row.degree == 1.0
    assert col.worst == 32                              # A_shared[tx, ty]: stride 32 words
    assert col.skipped == 0 and col.accesses == 2


def test_launch_shape_from_thread_bindings():
    assert launch_shape(_copy_kernel(False, x=16, y=4)["main"]) == (1, 64)


def test_cuda_family_coefficients_round_trip_and_reject_cpu_features():
    co = prior("cuda")
    assert co.family == "cuda" and co.weight("fma") > 0 and co.weight("vload") == 0.0
    again = Coefficients.from_dict(json.loads(json.dumps(co.to_dict())), "test")
    assert again.weights == co.weights
    bad = co.to_dict()
    bad["weights"]["vload"] = 1.0
    with pytest.raises(OrchestratorError, match="unknown feature"):
        Coefficients.from_dict(bad, "test")


@pytest.fixture(scope="module")
def cuda_space():
    import plugins.cuda
    from orchestrator.loop import TuneOptions, build_space
    from orchestrator.manager import load_plugins

    plugins_ = load_plugins(extra=[("cuda-under-test", plugins.cuda)], autoload=False,
                            block=["cuda"])
    target = resolve_target("cuda:h100")
    task = Task.create("dense", {"M": 128, "K": 128, "N": 128})
    return plugins_, target, build_space(plugins_, task, target,
                                         TuneOptions(space_generator="cuda"))[1]


@needs_nvcc
def test_features_of_a_real_cuda_config(cuda_space):
    import random

    from plugins.tuna.features import analyze
    from plugins.tuna.gpu_features import GPU_FEATURES

    _, target, space = cuda_space
    config = space.sample(random.Random(3))
    f = analyze(space.schedule_fn, space.task, config, target)
    assert {n for n, _ in f.values} >= set(GPU_FEATURES)
    assert f["fma"] > 0 and f["ld_global"] > 0 and f["grid"] >= 1 and f["threads"] >= 1
    assert 1 <= f["blocks_per_sm"] <= 32 and f["waves"] >= 1 and f["bank_degree"] >= 1
    assert prior("cuda").seconds(f, target.clock_ghz) > 0


@needs_nvcc
def test_static_tuning_of_a_cuda_space_through_the_loop(cuda_space, db, tmp_path):
    import plugins.tuna
    from orchestrator.loop import tune
    from orchestrator.manager import load_plugins
    import plugins.cuda

    _, target, space = cuda_space
    loaded = load_plugins(extra=[("cuda-under-test", plugins.cuda),
                                 ("tuna-under-test", plugins.tuna)],
                          autoload=False, block=["cuda", "tuna"])
    summary = tune(space.task, target=target, db=db, plugins=loaded, searcher="random",
                   measurer="static", space_generator="cuda", trials=4, batch_size=4,
                   measurer_options={"workers": 0, "cache_dir": str(tmp_path)})
    assert summary.trials == 4
    results = db.results(db.find_task(space.task), db.find_target(target))
    assert all(r.measurer == "static" for r in results)
    assert sum(r.ok for r in results) >= 1
