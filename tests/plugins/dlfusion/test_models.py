"""Built-in layer lists: layer counts and op counts against Table II and torchvision."""

from __future__ import annotations

import pytest

from plugins.dlfusion.layers import ModelError, conv2d_ops, dense_ops
from plugins.dlfusion.models import BUILTIN_MODELS, builtin_model


def test_equations_1_and_2():
    assert conv2d_ops(56, 56, 3, 3, 64, 64) == 2 * 56 * 56 * 9 * 64 * 64
    assert conv2d_ops(56, 56, 3, 3, 64, 64, groups=64) == 2 * 56 * 56 * 9 * 64
    assert dense_ops(1, 4096, 1000) == 2 * 4096 * 1000


# Table II: Total Op (2*MACs/2^30 of the conv layers) and number of CONV layers.
@pytest.mark.parametrize("name, total, n_conv", [
    ("resnet18", 3.38, 20), ("resnet50", 7.61, 53), ("vgg19", 36.34, 16),
    ("alexnet", 1.22, 5), ("mobilenet", 10.33, 52),
])
def test_table_ii(name, total, n_conv):
    net = builtin_model(name)
    convs = [l for l in net.layers if l.kind in ("conv2d", "depthwise")]
    assert len(convs) == n_conv
    # Table II's MobileNet figure counts depthwise convolutions as dense ones.
    ops = sum(l.ops * (l.c_in if l.kind == "depthwise" else 1) for l in convs)
    assert ops / 2**30 == pytest.approx(total, abs=0.01)


@pytest.mark.parametrize("name, gmacs", [
    ("resnet18", 1.814), ("resnet50", 4.09), ("vgg19", 19.63), ("alexnet", 0.714),
    ("mobilenet", 0.301),
])
def test_multiply_adds(name, gmacs):
    assert builtin_model(name).total_macs / 1e9 == pytest.approx(gmacs, rel=0.01)


def test_layers_are_consistent():
    for make in BUILTIN_MODELS.values():
        net = make()
        for idx, layer in enumerate(net.layers):
            assert layer.ops > 0 and all(p < idx for p in layer.inputs)
            for p in layer.inputs:
                if p >= 0 and layer.kind != "dense":
                    assert net.layers[p].out_shape == layer.in_shape
        assert net.layers[-1].out_shape == (1, 1000)


def test_unknown_model():
    with pytest.raises(ModelError, match="built-in models: resnet18"):
        builtin_model("lenet")
    assert builtin_model("ResNet-18").name == "resnet18"
