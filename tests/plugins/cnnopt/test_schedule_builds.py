"""Configs of a pruned space build with tvm.compile for CUDA (no GPU needed)."""

from __future__ import annotations

import re
import shutil

import pytest

from orchestrator.errors import InvalidConfigError
from orchestrator.space import Config
from plugins.cnnopt.capacity import CapacityPruner
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.plan import plan_config
from plugins.cnnopt.schedule import apply_config
from tests.plugins.cnnopt.helpers import H100, T4, layer


def _cuda_source(mod, target) -> str:
    import tvm

    ex = tvm.compile(mod, target=target.tvm_target())
    return "\n".join(m.inspect_source("cuda") for m in ex.mod.imports if m.kind == "cuda")


def _pick(candidates, **want):
    return next(c for c in candidates
                if all(c[k] == v if not callable(v) else v(c[k]) for k, v in want.items()))


def test_pruned_configs_build_for_cuda_rs_s_and_split_reduction():
    task = layer("r18_l4")  # 7x7 output: the pruned space splits C across blocks
    space = CapacityPruner().prune(CnnoptSpaces().generate(task, H100), H100)
    picks = [space.candidates[0], _pick(space.candidates, kernel="s"),
             _pick(space.candidates, kernel="rs", tile_c=lambda c: c[0] == 1),
             _pick(space.candidates, tile_c=lambda c: c[0] > 1)]
    for cfg in picks:
        src = _cuda_source(apply_config(task, cfg, H100), H100)
        assert "__syncthreads" in src, cfg.key
        assert "__shared__" in src
        kernels = len(re.findall(r"__global__ [^;{]*\{", src))
        assert kernels == (2 if cfg["tile_c"][0] > 1 else 1), cfg.key
        plan = plan_config(task, cfg, H100)
        assert f"__launch_bounds__({plan.threads_per_block})" in src


def test_padded_strided_first_layer_builds():
    task = layer("r18_c1")  # 7x7, stride 2, pad 3, C = 3
    space = CapacityPruner().prune(CnnoptSpaces().generate(task, T4), T4)
    src = _cuda_source(apply_config(task, space.candidates[0], T4), T4)
    assert "__syncthreads" in src


@pytest.mark.skipif(shutil.which("ptxas") is None or shutil.which("nvcc") is None,
                    reason="needs nvcc and ptxas")
def test_plan_shared_memory_matches_ptxas():
    from plugins.cuda.ptx import arch_of, ptx_of, ptxas_usage

    task = layer("r18_l3")
    cfg = Config.of({"kernel": "rs", "tile_x": (7, 1, 2, 1), "tile_y": (1, 7, 2, 1),
                     "tile_k": (8, 1, 8, 4), "tile_c": (1, 32, 8)})
    ptx = ptx_of(apply_config(task, cfg, H100), H100)
    usage = ptxas_usage(ptx, arch_of(H100))
    assert usage.smem_bytes == plan_config(task, cfg, H100).smem_bytes_per_block
    assert usage.spill_bytes == 0


def test_schedule_rejects_a_warp_that_is_not_32_threads():
    task = layer("r18_l4")
    bad = Config.of({"kernel": "rs", "tile_x": (7, 1, 1, 1), "tile_y": (7, 1, 1, 1),
                     "tile_k": (32, 1, 16, 1), "tile_c": (1, 64, 8)})
    with pytest.raises(InvalidConfigError, match="32"):
        apply_config(task, bad, H100)
