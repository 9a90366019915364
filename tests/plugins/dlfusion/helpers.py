"""Small layer lists and a small simulated accelerator for the DLFusion tests."""

from __future__ import annotations

import json
from pathlib import Path

from plugins.dlfusion.accelerator import SimulatedAccelerator
from plugins.dlfusion.layers import NETWORK_INPUT, Layer, Network
from plugins.dlfusion.models import NetBuilder


def compute_layer(name: str, ops: int, inputs: tuple[int, ...] = (NETWORK_INPUT,)) -> Layer:
    """A 1x1 conv-like layer whose op count is given directly (shapes are placeholders)."""
    return Layer(name=name, kind="conv2d", in_shape=(1, 16, 8, 8), out_shape=(1, 16, 8, 8),
                 ops=ops, weight_elems=256, inputs=inputs)


def pool_layer(name: str, inputs: tuple[int, ...]) -> Layer:
    return Layer(name=name, kind="pool", in_shape=(1, 16, 8, 8), out_shape=(1, 16, 8, 8),
                 ops=64, kernel=(3, 3), inputs=inputs)


def small_cnn(n_convs: int = 3) -> Network:
    """conv(s2) -> convs with a residual add -> pool: strides, halos and a skip edge."""
    b = NetBuilder("small", (1, 8, 32, 32))
    x = b.conv("c0", NETWORK_INPUT, 32, 3, 2)
    skip = x
    for k in range(1, n_convs):
        x = b.conv(f"c{k}", x, 32, 3)
    x = b.add("add", x, skip)
    b.pool("pool", x, 2, 2)
    return b.build()


def tiny_accelerator(tmp_path: Path, cores: int = 4) -> SimulatedAccelerator:
    """The MLU-100 parameters with fewer cores, so that exhaustive enumeration is cheap."""
    src = Path(__file__).parents[3] / "plugins/dlfusion/accelerators/mlu100-simulated.json"
    raw = json.loads(src.read_text())
    raw.update(name="tiny-simulated", cores=cores, channel_granularity=8)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(raw))
    return SimulatedAccelerator.load(path)
