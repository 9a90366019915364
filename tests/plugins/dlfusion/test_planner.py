"""Equation 5 and Algorithm 1 against hand-computed values."""

from __future__ import annotations

import math

import pytest

from plugins.dlfusion.layers import Network
from plugins.dlfusion.models import resnet18, vgg19
from plugins.dlfusion.planner import (
    ALPHA, BETA, eq5_score, joint_opt_fusion_and_mp, layer_mp, pow2_floor,
)
from tests.plugins.dlfusion.helpers import compute_layer, pool_layer

G = 1000  # op unit for hand-made layer lists


def test_eq5_constants_are_the_papers():
    assert (ALPHA, BETA) == (0.316, 0.659)


def test_eq5_score_by_hand():
    # ResNet-18 layer1 conv: C=64, 2*56*56*9*64*64 ops = 231211008 = 220.5 * 2^20
    ops = 2 * 56 * 56 * 9 * 64 * 64
    expect = 0.316 * 6 + 0.659 * math.log2(ops / 2**20)
    assert eq5_score(64, ops) == pytest.approx(expect)
    assert expect == pytest.approx(7.026, abs=1e-3)


@pytest.mark.parametrize("value, cores, mp", [
    (0.3, 32, 1), (1.0, 32, 1), (1.99, 32, 1), (2.0, 32, 2), (7.03, 32, 4), (10.6, 32, 8),
    (31.9, 32, 16), (32.0, 32, 32), (500.0, 32, 32), (500.0, 12, 8), (3.0, 1, 1),
])
def test_pow2_floor(value, cores, mp):
    assert pow2_floor(value, cores) == mp


def test_layer_mp_on_paper_layers():
    r18, vgg = resnet18(), vgg19()
    by_name = {l.name: l for l in r18.layers} | {f"vgg.{l.name}": l for l in vgg.layers}
    assert layer_mp(by_name["layer1.0.conv1"], 32) == 4      # eq. 5 = 7.03
    assert layer_mp(by_name["layer4.0.conv2"], 32) == 4      # 512 ch, 7x7: 2.84 + 5.13 = 7.97
    assert layer_mp(by_name["vgg.conv10"], 32) == 8          # 512 ch, 28x28: 10.61
    assert layer_mp(by_name["fc"], 32) == 2                  # 512 -> 1000 FC: 3.16
    assert all(1 <= layer_mp(l, 32) <= 32 for l in r18.layers + vgg.layers)


def _net(*layers) -> Network:
    return Network("hand", tuple(layers))


def test_algorithm1_hand_computed():
    # ops 4,4,8,2,2 (x G), MPs 2,2,4,1,1, threshold 3G per core:
    # i0: 4/2=2 <3 | i1: 8/2=4 >=3 -> block [0,1], MP 2
    # i2: 8/4=2 <3 | i3: 10/2.5=4 >=3 -> block [2,3], MP 2^floor(log2 2.5)=2
    # i4: 2/1=2 <3 -> closed at the end: block [4], MP 1
    layers = [compute_layer(f"l{k}", ops * G, (k - 1,)) for k, ops in enumerate((4, 4, 8, 2, 2))]
    net = _net(*[compute_layer("l0", 4 * G)] + layers[1:])
    res = joint_opt_fusion_and_mp(net, 3 * G, 32, layer_mps=(2, 2, 4, 1, 1))
    assert res.partition_index == (1, 3, 4)
    assert res.mp_of_block == (2, 2, 1)
    assert [(b.start, b.stop, b.mp) for b in res.blocks()] == [(0, 2, 2), (2, 4, 2), (4, 5, 1)]


def test_algorithm1_pool_and_trailing_layers():
    # pool layers join the current block without ops or MP; a trailing pool joins the last
    # block. ops 3,_,3,_,5,_  MPs 1,_,2,_,4,_  threshold 4G:
    # i0: 3/1 <4 | i1 pool | i2: 6/1.5=4 >=4 -> [0,2], MP 1 | i3 pool: no compute
    # i4: 5/4 <4 | i5 pool -> end: [3,5], MP 4
    net = _net(compute_layer("c0", 3 * G), pool_layer("p1", (0,)),
               compute_layer("c2", 3 * G, (1,)), pool_layer("p3", (2,)),
               compute_layer("c4", 5 * G, (3,)), pool_layer("p5", (4,)))
    res = joint_opt_fusion_and_mp(net, 4 * G, 32, layer_mps=(1, 0, 2, 0, 4, 0))
    assert res.partition_index == (2, 5)
    assert res.mp_of_block == (1, 4)


def test_algorithm1_trailing_pool_only_block_merges():
    net = _net(compute_layer("c0", 8 * G), pool_layer("p1", (0,)), pool_layer("p2", (1,)))
    res = joint_opt_fusion_and_mp(net, 4 * G, 32, layer_mps=(1, 0, 0))
    assert res.partition_index == (2,)
    assert res.mp_of_block == (1,)


def test_algorithm1_each_layer_alone_when_threshold_is_tiny():
    net = resnet18()
    res = joint_opt_fusion_and_mp(net, 1.0, 32)
    compute = [i for i, l in enumerate(net.layers) if l.is_compute]
    # every conv/FC closes its block; pools/adds ride with the next conv or the last block
    assert set(compute) <= set(res.partition_index) | {len(net) - 1}


def test_algorithm1_paper_threshold_fuses_resnet18_into_one_block():
    # 10^1.25 GOPs (2^30 units) per core exceeds ResNet-18's whole op count: one block.
    res = joint_opt_fusion_and_mp(resnet18(), 10**1.25 * 2**30, 32)
    assert res.partition_index == (30,)
    assert res.mp_of_block == (2,)
