"""Built-in layer lists of the paper's networks (Table II), so the planner runs without a file.

Shapes follow the torchvision definitions at 224x224, batch 1. The convolution totals
match Table II when its "Op" column is read as 2*MACs/2**30 (ResNet-18 3.38, ResNet-50
7.6, VGG-19 36.3, AlexNet 1.22); MobileNet is MobileNetV2 (Table II cites [25] and counts
52 CONV layers, as here), whose total does not match the table's 10.33 (see the docs).
"""

from __future__ import annotations

from collections.abc import Callable

from plugins.dlfusion.layers import (
    NETWORK_INPUT, Layer, ModelError, Network, conv2d_ops, conv_out_size, dense_ops,
)


class NetBuilder:
    """Appends layers while tracking each layer's output shape (NCHW, batch 1)."""

    def __init__(self, name: str, in_shape: tuple[int, ...] = (1, 3, 224, 224)) -> None:
        self.name = name
        self.in_shape = in_shape
        self.layers: list[Layer] = []

    def shape(self, idx: int) -> tuple[int, ...]:
        return self.in_shape if idx == NETWORK_INPUT else self.layers[idx].out_shape

    def _add(self, layer: Layer) -> int:
        self.layers.append(layer)
        return len(self.layers) - 1

    def conv(self, name: str, x: int, c_out: int, k: int, s: int = 1, p: int | None = None,
             groups: int = 1) -> int:
        n, c_in, h, w = self.shape(x)
        pad = k // 2 if p is None else p
        ho, wo = conv_out_size(h, k, s, pad, pad), conv_out_size(w, k, s, pad, pad)
        kind = "depthwise" if groups > 1 and groups == c_in else "conv2d"
        return self._add(Layer(
            name=name, kind=kind, in_shape=(n, c_in, h, w), out_shape=(n, c_out, ho, wo),
            ops=n * conv2d_ops(ho, wo, k, k, c_in, c_out, groups),
            weight_elems=c_out * (c_in // groups) * k * k, kernel=(k, k), stride=(s, s),
            groups=groups, inputs=(x,)))

    def pool(self, name: str, x: int, k: int, s: int, p: int = 0) -> int:
        n, c, h, w = self.shape(x)
        ho, wo = conv_out_size(h, k, s, p, p), conv_out_size(w, k, s, p, p)
        return self._add(Layer(name=name, kind="pool", in_shape=(n, c, h, w),
                               out_shape=(n, c, ho, wo), ops=n * c * ho * wo * k * k,
                               kernel=(k, k), stride=(s, s), inputs=(x,)))

    def global_pool(self, name: str, x: int) -> int:
        n, c, h, w = self.shape(x)
        return self._add(Layer(name=name, kind="pool", in_shape=(n, c, h, w),
                               out_shape=(n, c, 1, 1), ops=n * c * h * w,
                               kernel=(h, w), stride=(h, w), inputs=(x,)))

    def add(self, name: str, a: int, b: int) -> int:
        sa, sb = self.shape(a), self.shape(b)
        if sa != sb:
            raise ModelError(f"{self.name}: {name} adds shapes {sa} and {sb}")
        elems = 1
        for d in sa:
            elems *= d
        return self._add(Layer(name=name, kind="elementwise", in_shape=sa, out_shape=sa,
                               ops=elems, inputs=(a, b)))

    def dense(self, name: str, x: int, n_out: int) -> int:
        shp = self.shape(x)
        n, k = shp[0], 1
        for d in shp[1:]:
            k *= d
        return self._add(Layer(name=name, kind="dense", in_shape=(n, k), out_shape=(n, n_out),
                               ops=dense_ops(n, k, n_out), weight_elems=k * n_out,
                               inputs=(x,)))

    def build(self) -> Network:
        return Network(self.name, tuple(self.layers), source="built-in")


def _resnet(name: str, blocks: tuple[int, ...], bottleneck: bool) -> Network:
    b = NetBuilder(name)
    x = b.conv("conv1", NETWORK_INPUT, 64, 7, 2, 3)
    x = b.pool("maxpool", x, 3, 2, 1)
    c_in = 64
    for stage, count in enumerate(blocks):
        planes = 64 * 2 ** stage
        c_out = planes * 4 if bottleneck else planes
        for i in range(count):
            s = 2 if stage > 0 and i == 0 else 1
            pre = f"layer{stage + 1}.{i}"
            if bottleneck:
                y = b.conv(f"{pre}.conv1", x, planes, 1)
                y = b.conv(f"{pre}.conv2", y, planes, 3, s)
                y = b.conv(f"{pre}.conv3", y, c_out, 1)
            else:
                y = b.conv(f"{pre}.conv1", x, planes, 3, s)
                y = b.conv(f"{pre}.conv2", y, planes, 3)
            skip = x
            if s != 1 or c_in != c_out:
                skip = b.conv(f"{pre}.downsample", x, c_out, 1, s, 0)
            x = b.add(f"{pre}.add", y, skip)
            c_in = c_out
    x = b.global_pool("avgpool", x)
    b.dense("fc", x, 1000)
    return b.build()


def resnet18() -> Network:
    return _resnet("resnet18", (2, 2, 2, 2), bottleneck=False)


def resnet50() -> Network:
    return _resnet("resnet50", (3, 4, 6, 3), bottleneck=True)


def vgg19() -> Network:
    b = NetBuilder("vgg19")
    x = NETWORK_INPUT
    cfg = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M",
           512, 512, 512, 512, "M", 512, 512, 512, 512, "M")
    conv_i = pool_i = 0
    for item in cfg:
        if item == "M":
            pool_i += 1
            x = b.pool(f"pool{pool_i}", x, 2, 2)
        else:
            conv_i += 1
            x = b.conv(f"conv{conv_i}", x, int(item), 3)
    x = b.dense("fc6", x, 4096)
    x = b.dense("fc7", x, 4096)
    b.dense("fc8", x, 1000)
    return b.build()


def alexnet() -> Network:
    b = NetBuilder("alexnet")
    x = b.conv("conv1", NETWORK_INPUT, 64, 11, 4, 2)
    x = b.pool("pool1", x, 3, 2)
    x = b.conv("conv2", x, 192, 5, 1, 2)
    x = b.pool("pool2", x, 3, 2)
    x = b.conv("conv3", x, 384, 3)
    x = b.conv("conv4", x, 256, 3)
    x = b.conv("conv5", x, 256, 3)
    x = b.pool("pool5", x, 3, 2)
    x = b.dense("fc6", x, 4096)
    x = b.dense("fc7", x, 4096)
    b.dense("fc8", x, 1000)
    return b.build()


def mobilenet() -> Network:
    """MobileNetV2 (width 1.0): 52 convolutions counting the final 1x1 to 1280 channels."""
    b = NetBuilder("mobilenet")
    x = b.conv("features.0", NETWORK_INPUT, 32, 3, 2)
    c_in = 32
    settings = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))
    idx = 1
    for t, c, n, s in settings:
        for i in range(n):
            stride = s if i == 0 else 1
            pre = f"features.{idx}"
            hidden = c_in * t
            y = x
            if t != 1:
                y = b.conv(f"{pre}.expand", y, hidden, 1)
            y = b.conv(f"{pre}.dw", y, hidden, 3, stride, groups=hidden)
            y = b.conv(f"{pre}.project", y, c, 1)
            if stride == 1 and c_in == c:
                y = b.add(f"{pre}.add", y, x)
            x, c_in, idx = y, c, idx + 1
    x = b.conv(f"features.{idx}", x, 1280, 1)
    x = b.global_pool("avgpool", x)
    b.dense("classifier", x, 1000)
    return b.build()


BUILTIN_MODELS: dict[str, Callable[[], Network]] = {
    "resnet18": resnet18,
    "resnet50": resnet50,
    "vgg19": vgg19,
    "alexnet": alexnet,
    "mobilenet": mobilenet,
}

_ALIASES = {"resnet-18": "resnet18", "resnet-50": "resnet50", "vgg-19": "vgg19",
            "mobilenetv2": "mobilenet", "mobilenet-v2": "mobilenet"}


def builtin_model(name: str) -> Network:
    """A built-in network by name (case-insensitive; ``resnet-18`` works too)."""
    key = _ALIASES.get(name.lower(), name.lower())
    try:
        return BUILTIN_MODELS[key]()
    except KeyError:
        raise ModelError(f"unknown model {name!r}; built-in models: "
                         f"{', '.join(BUILTIN_MODELS)} (or give an ONNX file)") from None
