"""The SIMULATED accelerator: parameters, the paper's observations, plan measurement."""

from __future__ import annotations

import json

import pytest

from orchestrator.errors import OrchestratorError
from plugins.dlfusion.accelerator import (
    AcceleratorError, SimulatedAccelerator, available_accelerators, grid_for, load_params,
)
from plugins.dlfusion.layers import NETWORK_INPUT
from plugins.dlfusion.models import NetBuilder, resnet18, vgg19
from plugins.dlfusion.plan import Block, Plan, PlanError
from plugins.dlfusion.strategies import plan_fixed_mp


@pytest.fixture(scope="module")
def acc() -> SimulatedAccelerator:
    return SimulatedAccelerator.load("mlu100")


def _stack(c: int, hw: int, n: int = 16):
    b = NetBuilder(f"stack{c}x{hw}", (1, c, hw, hw))
    x = NETWORK_INPUT
    for k in range(n):
        x = b.conv(f"conv{k}", x, c, 3)
    return b.build()


def _uniform(net, size: int, mp: int) -> Plan:
    return Plan("x", net.name, tuple(Block(k, min(k + size, len(net)), mp)
                                     for k in range(0, len(net), size)))


def test_defaults_are_the_mlu100_published_figures():
    p = load_params("mlu100")
    assert "simulated" in p.name
    assert p.cores == 32
    assert p.peak_ops_per_core == pytest.approx(2e12)          # 64 TFLOPS FP16 / 32
    assert p.bandwidth_bytes_s == pytest.approx(102.4e9)
    assert p.memory_bytes == pytest.approx(8 * 2**30)
    assert p.opcount_critical == pytest.approx(10**1.25 * 2**30)
    assert "mlu100-simulated" in available_accelerators()


def test_load_by_path_and_errors(tmp_path):
    src = json.loads(json.dumps(load_params("mlu100").to_dict()))
    assert src["simulated"] is True
    raw = json.loads(open(_default_json()).read())
    raw["dtype"] = "int8"
    path = tmp_path / "int8.json"
    path.write_text(json.dumps(raw))
    assert load_params(path).peak_ops_per_core == pytest.approx(4e12)
    with pytest.raises(AcceleratorError, match="unknown accelerator"):
        load_params("tpu-v9")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(AcceleratorError, match="cannot read"):
        load_params(bad)
    del raw["cores"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(AcceleratorError, match="cores"):
        load_params(bad)
    assert issubclass(AcceleratorError, OrchestratorError)


def _default_json():
    from pathlib import Path
    import plugins.dlfusion
    return Path(plugins.dlfusion.__file__).parent / "accelerators/mlu100-simulated.json"


def test_efficiency_rises_then_saturates_at_critical(acc):
    xc = acc.params.opcount_critical
    effs = [acc.efficiency(xc * f) for f in (1e-4, 1e-2, 0.5, 1.0, 4.0)]
    assert effs == sorted(effs)
    assert effs[-2] == effs[-1] == 1.0
    assert acc.compute_time(2e6) < acc.compute_time(4e6)  # more work never takes less time


def test_channel_granularity(acc):
    assert acc.channel_split(64, 4) == (0.25, 4)
    assert acc.channel_split(64, 32) == (0.25, 4)      # 16-channel minimum: 4 busy cores
    assert acc.channel_split(512, 32) == (1 / 32, 32)
    assert acc.channel_split(10, 4) == (1.0, 1)


def test_grid_for():
    assert grid_for(4, 56, 56) == (2, 2)
    assert grid_for(8, 28, 28) in ((2, 4), (4, 2))
    assert grid_for(1, 7, 7) == (1, 1)


def test_halo_grows_with_fused_layers_and_cores(acc):
    net = _stack(64, 28, 8)
    red = {(n, m): acc.block_cost(net, Block(0, n, m)).redundancy
           for n in (2, 4, 8) for m in (1, 4, 16)}
    assert all(red[(n, 1)] == 0 for n in (2, 4, 8))
    assert red[(2, 4)] < red[(4, 4)] < red[(8, 4)]
    assert red[(4, 4)] < red[(4, 16)]


def test_fusion_saves_offchip_round_trip(acc):
    net = _stack(64, 56, 4)
    fused = acc.block_cost(net, Block(0, 4, 1))
    apart = [acc.block_cost(net, Block(k, k + 1, 1)) for k in range(4)]
    inter = 3 * 2 * net.layers[0].out_elems * acc.params.dtype_bytes  # 3 writes + 3 reads
    assert sum(b.offchip_bytes for b in apart) - fused.offchip_bytes == pytest.approx(inter)


def test_reproduces_figure_5a_fixed_mp_optima(acc):
    # Section III.A: best shared MP is 4 for ResNet-18 and 16 for VGG-19.
    assert plan_fixed_mp(resnet18(), acc).blocks[0].mp == 4
    assert plan_fixed_mp(vgg19(), acc).blocks[0].mp == 16


def test_reproduces_figure_7b_fusion_sizes(acc):
    # Section IV.B.1: {512,512,28x28} fuses best by 4, {512,512,14x14} by 16 (MP 8).
    def best(net):
        lat = {s: acc.measure_plan(net, _uniform(net, s, 8)).latency_s for s in (1, 2, 4, 8, 16)}
        return min(lat, key=lat.get)
    assert best(_stack(512, 28)) == 4
    assert best(_stack(512, 14)) == 16


def test_measure_plan_sums_blocks_and_rejects_bad_plans(acc):
    net = resnet18()
    plan = _uniform(net, 4, 8)
    res = acc.measure_plan(net, plan)
    assert res.simulated and "simulated" in res.accelerator
    assert res.latency_s == pytest.approx(sum(b.latency_s for b in res.blocks))
    assert res.fps == pytest.approx(1 / res.latency_s)
    d = res.to_dict()
    assert d["simulated"] is True and d["plan"]["blocks"][0] == {"start": 0, "stop": 4, "mp": 8}
    with pytest.raises(PlanError):
        acc.measure_plan(net, Plan("x", net.name, (Block(0, 5, 1),)))
    with pytest.raises(PlanError):
        acc.measure_plan(net, Plan("x", net.name, (Block(0, len(net), 64),)))
