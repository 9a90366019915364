from __future__ import annotations

import numpy as np
import pytest

from orchestrator.errors import InvalidTaskError
from orchestrator.task import Task, parse_shape


def test_conv2d_defaults_and_key_are_canonical():
    a = Task.create("conv2d", {"N": 1, "C": 64, "H": 56, "W": 56, "K": 64, "R": 3, "S": 3, "pad": 1},
                    name="one")
    b = Task.create("conv2d", parse_shape("pad=1,S=3,R=3,K=64,W=56,H=56,C=64,N=1"), name="two")
    assert a == b and a.key == b.key and a.key_hash == b.key_hash  # the name is a label only
    assert a.params["stride"] == 1 and a.params["dilation"] == 1
    assert a.flops == 2 * 64 * 56 * 56 * 64 * 9


def test_matmul_is_an_alias_of_dense():
    assert Task.create("matmul", {"M": 2, "K": 3, "N": 4}).op == "dense"


@pytest.mark.parametrize("op,shape,message", [
    ("conv3d", {"N": 1}, "unknown operator 'conv3d'"),
    ("dense", {"M": 1, "K": 2}, "missing shape parameter(s) N"),
    ("dense", {"M": 1, "K": 2, "N": 3, "Q": 1}, "unknown shape parameter(s) Q"),
    ("dense", {"M": 0, "K": 2, "N": 3}, "M must be a positive integer"),
    ("dense", {"M": "x", "K": 2, "N": 3}, "M must be an integer"),
    ("dense", {"M": 1.5, "K": 2, "N": 3}, "M must be an integer"),
    ("conv2d", {"N": 1, "C": 3, "H": 2, "W": 2, "K": 4, "R": 5, "S": 5}, "the output would be"),
    ("conv2d", {"N": 1, "C": 3, "H": 8, "W": 8, "K": 4, "R": 3, "S": 3, "pad": -1}, "pad must be >= 0"),
    ("dense", {"M": 1 << 20, "K": 1 << 20, "N": 1}, "more than"),
])
def test_bad_shapes_say_what_is_wrong(op, shape, message):
    with pytest.raises(InvalidTaskError) as info:
        Task.create(op, shape)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("text", ["M=1,K", "=3", "", "M=,K=2"])
def test_parse_shape_rejects_malformed_text(text):
    with pytest.raises(InvalidTaskError):
        parse_shape(text)


@pytest.mark.parametrize("op,shape", [
    ("conv2d", {"N": 1, "C": 3, "H": 9, "W": 7, "K": 2, "R": 3, "S": 2, "stride": 2, "pad": 1,
                "dilation": 2}),
    ("depthwise_conv2d", {"N": 1, "C": 3, "H": 9, "W": 7, "R": 3, "S": 3, "stride": 2, "pad": 1}),
])
def test_conv_references_match_a_direct_loop(op, shape):
    task = Task.create(op, shape)
    p = task.params
    x, w = task.operator.random_inputs(p, seed=1)
    y = task.operator.reference([x, w], p)
    assert y.shape == task.operator.output_shape(p)
    xp = np.pad(x, ((0, 0), (0, 0), (p["pad"],) * 2, (p["pad"],) * 2))
    n, k, oh, ow = y.shape
    for kk in range(k):
        for i in range(oh):
            for j in range(ow):
                ci = slice(None) if op == "conv2d" else slice(kk, kk + 1)
                wk = w[kk] if op == "conv2d" else w[kk]
                acc = 0.0
                for r in range(p["R"]):
                    for s in range(p["S"]):
                        hi, wi = i * p["stride"] + r * p["dilation"], j * p["stride"] + s * p["dilation"]
                        acc += float(np.sum(xp[0, ci, hi, wi] * wk[:, r, s]))
                assert abs(acc - y[0, kk, i, j]) < 1e-4


def test_task_round_trips_through_dict():
    t = Task.create("batch_matmul", {"B": 2, "M": 3, "K": 4, "N": 5}, name="bmm")
    assert Task.from_dict(t.to_dict()) == t
