"""Equations (2) and (3) by hand, and the capacity pruner on every ResNet-18 layer."""

from __future__ import annotations

import pytest

from orchestrator.gpus import GPUS
from orchestrator.space import Config
from plugins.cnnopt.capacity import (
    STATIC_SMEM_BYTES, CapacityPruner, Rules, block_registers, capacity_configs, fits_registers)
from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.plan import REG_OVERHEAD, registers_rs, registers_s, warp_registers
from plugins.cnnopt.schema import dims_of, tiles_of
from tests.plugins.cnnopt.helpers import H100, R18, T4, layer


def test_equation_2_rs_kernel_by_hand():
    # R^x=2, R^y=2, R^k=4, F=3, stride 1: 16 outputs + (2+3-1) + (2+3-1) + 1 = 25
    assert registers_rs(2, 2, 4, in_rows=4, in_cols=4) == 25
    # R^x=4, R^y=1, R^k=8: 32 + (1+7-1) + (4+7-1) + 1 = 50 (F=7)
    assert registers_rs(4, 1, 8, in_rows=7, in_cols=10) == 50


def test_equation_3_s_kernel_by_hand():
    # 16 outputs + (2+3-1) + 1 = 21
    assert registers_s(2, 2, 4, in_cols=4) == 21
    assert registers_s(1, 1, 1, in_cols=3) == 5


def test_equations_times_a_warp_and_strided_input_extent():
    task = layer("r18_l2a")  # 3x3, stride 2
    dims = dims_of(task)
    cfg = Config.of({"kernel": "rs", "tile_x": (7, 1, 4, 1), "tile_y": (7, 1, 2, 2),
                     "tile_k": (2, 2, 4, 8), "tile_c": (1, 8, 8)})
    t = tiles_of(dims, cfg)
    # R = (1, 2, 8): 16 outputs; input rows (2-1)*2+3 = 5, cols (1-1)*2+3 = 3; + 1
    assert dims.in_rows(2) == 5 and dims.in_cols(1) == 3
    assert warp_registers(dims, t) == (16 + 5 + 3 + 1) * 32
    s = tiles_of(dims, Config.of({**cfg.to_dict(), "kernel": "s"}))
    assert warp_registers(dims, s) == (16 + 3 + 1) * 32


def test_block_registers_round_per_warp_to_256():
    # 49 registers x 32 lanes = 1568 -> 1792 per warp; 4 warps
    assert block_registers(49, 128) == 4 * 1792
    assert block_registers(64, 32) == 2048


def test_register_limit_rejects_huge_register_tiles():
    dims = dims_of(layer("r18_l1"))
    gpu = GPUS["h100"]
    assert fits_registers("rs", dims, 2, 2, 4, 128, gpu)
    # 8 x 8 x 4 = 256 accumulators exceed 255 registers per thread
    assert not fits_registers("s", dims, 8, 8, 4, 32, gpu)
    # 200 + overhead fits a thread but not 8 warps of such threads in 64K registers
    assert fits_registers("s", dims, 4, 7, 4, 32, gpu)
    assert not fits_registers("s", dims, 4, 7, 4, 1024, gpu)


@pytest.mark.parametrize("target", [H100, T4], ids=["h100", "t4"])
def test_every_resnet18_layer_has_a_pruned_space(target):
    gen, gpu = CnnoptSpaces(), GPUS[target.arch]
    assert len(R18) == 11
    for task in R18:
        assert gen.supports(task, target), task.name
        space = gen.generate(task, target)
        first = next(capacity_configs(space, gpu), None)
        assert first is not None, task.name
        t = tiles_of(dims_of(task), first)
        assert t.warp_threads == 32 and t.threads <= gpu.max_threads_per_block


def test_pruned_configs_meet_every_constraint_and_come_ranked():
    task, gpu = layer("r18_l4"), GPUS["t4"]
    space = CnnoptSpaces().generate(task, T4)
    pruned = CapacityPruner().prune(space, T4)
    assert 0 < pruned.size < space.size
    assert "cnnopt-capacity on t4" in pruned.notes[-1]
    from importlib import import_module

    plan_fn = getattr(import_module("plugins.cnnopt.plan"), "plan_config")
    from plugins.cnnopt.analytical import AnalyticalModel

    est = AnalyticalModel(gpu).estimate_configs(pruned, list(pruned.candidates))
    assert est == sorted(est)
    for cfg in pruned.candidates[:200]:
        assert pruned.validate(cfg) is None
        plan = plan_fn(task, cfg, T4)
        assert plan.regs_per_thread <= gpu.regs_per_thread
        assert plan.smem_bytes_per_block <= min(gpu.smem_per_block, STATIC_SMEM_BYTES)
        assert plan.threads_per_block <= gpu.max_threads_per_block
        assert plan.regs_per_thread - REG_OVERHEAD >= 4


def test_capacity_only_rules_keep_more_configs():
    space = CnnoptSpaces().generate(layer("r18_l4"), H100)
    gpu = GPUS["h100"]
    strict = sum(1 for _ in capacity_configs(space, gpu, Rules.capacity_only()))
    default = sum(1 for _ in capacity_configs(space, gpu))
    assert strict > default > 0


def test_pruner_refuses_other_spaces():
    from orchestrator.testing import toy_space

    with pytest.raises(CnnoptError, match="cnnopt spaces"):
        CapacityPruner().prune(toy_space(), H100)
