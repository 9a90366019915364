from __future__ import annotations

import json
import random

import pytest

from plugins.dlfusion.accelerator import AcceleratorError, SimulatedAccelerator, load_params
from plugins.dlfusion.calibrate import (
    Alg1Params, alg1_plan, calibrate, synthetic_network, synthetic_networks,
)
from plugins.dlfusion.models import BUILTIN_MODELS, builtin_model
from plugins.dlfusion.planner import layer_mp
from plugins.dlfusion.strategies import alg1_params, make_plan

GIB = 2**30


def test_synthetic_networks_are_reproducible_and_not_the_evaluated_ones():
    a = synthetic_networks(6, seed=3)
    b = synthetic_networks(6, seed=3)
    assert [n.layers for n in a] == [n.layers for n in b]
    builtin = {tuple((l.kind, l.in_shape, l.out_shape) for l in builtin_model(m).layers)
               for m in BUILTIN_MODELS}
    for net in a:
        assert tuple((l.kind, l.in_shape, l.out_shape) for l in net.layers) not in builtin
        assert any(l.kind == "conv2d" for l in net.layers) and net.layers[-1].kind == "dense"


def test_mp_scale_multiplies_equation_5_before_rounding():
    net = synthetic_network(random.Random(0), 0)
    conv = next(l for l in net.layers if l.kind == "conv2d")
    assert layer_mp(conv, 32, 4.0) == min(32, layer_mp(conv, 32, 1.0) * 4)


def test_calibration_picks_the_best_grid_point():
    acc = SimulatedAccelerator.load("mlu100")
    c = calibrate(acc, count=3, seed=1, exponents=(-1.0, 1.25), scales=(1.0, 4.0))
    assert len(c.grid) == 4
    best = max(g[2] for g in c.grid)
    assert c.score == pytest.approx(best)
    # ties go to the larger threshold (fewer, larger blocks)
    tied = [g for g in c.grid if g[2] == pytest.approx(best, abs=1e-6)]
    chosen = max(tied, key=lambda g: (g[0], -g[1]))
    assert c.params == Alg1Params(10 ** chosen[0] * GIB, chosen[1])
    assert 0 < c.score <= 1.0 + 1e-9   # never better than the exact optimum


def test_shipped_mlu100_parameters_are_what_the_calibration_gives():
    acc = SimulatedAccelerator.load("mlu100")
    c = calibrate(acc, count=64, seed=0)
    shipped = alg1_params(acc)
    assert shipped.opcount_critical == pytest.approx(c.params.opcount_critical, rel=1e-4)
    assert shipped.mp_scale == c.params.mp_scale


def test_published_strategy_keeps_the_paper_constants():
    acc = SimulatedAccelerator.load("mlu100")
    net = builtin_model("vgg19")
    published = make_plan("dlfusion-published", net, acc)
    assert published == alg1_plan(net, acc.cores, Alg1Params(10**1.25 * GIB, 1.0),
                                  "dlfusion-published")
    assert len(published.blocks) == 1       # the literal threshold never closes a block
    assert len(make_plan("dlfusion", net, acc).blocks) > 1


def test_accelerator_file_without_algorithm1_falls_back_to_the_paper(tmp_path):
    src = load_params("mlu100")
    path = tmp_path / "acc.json"
    from importlib import resources
    data = json.loads((resources.files("plugins.dlfusion") / "accelerators"
                       / "mlu100-simulated.json").read_text())
    del data["algorithm1"]
    path.write_text(json.dumps(data))
    params = alg1_params(SimulatedAccelerator(load_params(path)))
    assert params == Alg1Params(src.opcount_critical, 1.0)
    data["algorithm1"] = {"opcount_critical_gops": -1}
    path.write_text(json.dumps(data))
    with pytest.raises(AcceleratorError, match="algorithm1"):
        load_params(path)
    data["algorithm1"] = [1, 2]
    path.write_text(json.dumps(data))
    with pytest.raises(AcceleratorError, match="algorithm1"):
        load_params(path)
