"""The layer list DLFusion plans over, with operation counts from equations 1 and 2.

A network is a tuple of :class:`Layer` in topological order. Each layer names its
producers by index (``-1`` is the network input), so residual edges survive the
flattening and the accelerator model can tell which tensors cross a block boundary.
Activations, bias adds and batch norms are folded into the layer that produces their
input, as the MLU-100's CNML fuses them into the convolution operator anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from orchestrator.errors import OrchestratorError

LayerKind = Literal["conv2d", "depthwise", "dense", "pool", "elementwise"]
LAYER_KINDS: tuple[str, ...] = ("conv2d", "depthwise", "dense", "pool", "elementwise")
NETWORK_INPUT = -1


class ModelError(OrchestratorError):
    """A model that cannot be turned into a layer list (malformed or unsupported)."""


def _prod(xs: tuple[int, ...]) -> int:
    return math.prod(xs) if xs else 0


@dataclass(frozen=True)
class Layer:
    """One DNN layer: shapes are NCHW for 4-D tensors and (N, K) for dense ones.

    ``ops`` follows the paper: equation 1 (``2*Hout*Wout*Kh*Kw*Cin/groups*Cout``) for
    convolutions, equation 2 (``2*M*K*N``) for dense layers, one op per window element
    for pooling and one per output element and input for elementwise layers.
    """

    name: str
    kind: LayerKind
    in_shape: tuple[int, ...]
    out_shape: tuple[int, ...]
    ops: int
    weight_elems: int = 0
    kernel: tuple[int, int] = (1, 1)
    stride: tuple[int, int] = (1, 1)
    groups: int = 1
    inputs: tuple[int, ...] = (NETWORK_INPUT,)

    def __post_init__(self) -> None:
        if self.kind not in LAYER_KINDS:
            raise ModelError(f"layer {self.name!r}: unknown kind {self.kind!r}")
        if not self.inputs:
            raise ModelError(f"layer {self.name!r} has no inputs")

    @property
    def c_in(self) -> int:
        return self.in_shape[1]

    @property
    def c_out(self) -> int:
        """Output channels (output features for dense layers): the partitioned dimension."""
        return self.out_shape[1]

    @property
    def out_hw(self) -> tuple[int, int]:
        return (self.out_shape[2], self.out_shape[3]) if len(self.out_shape) == 4 else (1, 1)

    @property
    def in_hw(self) -> tuple[int, int]:
        return (self.in_shape[2], self.in_shape[3]) if len(self.in_shape) == 4 else (1, 1)

    @property
    def macs(self) -> int:
        """Multiply-accumulates of a convolution or dense layer (0 for the others)."""
        return self.ops // 2 if self.is_compute else 0

    @property
    def is_compute(self) -> bool:
        """Convolution or fully-connected: the layers Algorithm 1 assigns an MP to."""
        return self.kind in ("conv2d", "depthwise", "dense")

    @property
    def is_spatial(self) -> bool:
        """Has a feature map larger than one pixel (can be tiled spatially across cores)."""
        h, w = self.out_hw
        return h * w > 1 and self.kind != "dense"

    @property
    def mixes_channels(self) -> bool:
        """Every output channel reads every input channel (conv with groups=1, dense)."""
        return self.kind == "dense" or (self.kind == "conv2d" and self.groups == 1)

    @property
    def out_elems(self) -> int:
        return _prod(self.out_shape)

    @property
    def in_elems(self) -> int:
        return _prod(self.in_shape)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name, "kind": self.kind, "in_shape": list(self.in_shape),
            "out_shape": list(self.out_shape), "ops": self.ops, "weight_elems": self.weight_elems,
            "kernel": list(self.kernel), "stride": list(self.stride), "groups": self.groups,
            "inputs": list(self.inputs),
        }


def conv2d_ops(h_out: int, w_out: int, kh: int, kw: int, c_in: int, c_out: int,
               groups: int = 1) -> int:
    """Equation 1: ``2 * Hout * Wout * Kh * Kw * Cin * Cout`` (Cin per group)."""
    return 2 * h_out * w_out * kh * kw * (c_in // groups) * c_out


def dense_ops(m: int, k: int, n: int) -> int:
    """Equation 2: ``2 * M * K * N``."""
    return 2 * m * k * n


def conv_out_size(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int,
                  dilation: int = 1) -> int:
    return (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1


@dataclass(frozen=True)
class Network:
    """A named layer list; ``source`` says where it came from (built-in or a file)."""

    name: str
    layers: tuple[Layer, ...]
    source: str = "built-in"
    consumers: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        cons: list[list[int]] = [[] for _ in self.layers]
        for idx, layer in enumerate(self.layers):
            for p in layer.inputs:
                if p != NETWORK_INPUT and not 0 <= p < idx:
                    raise ModelError(f"layer {layer.name!r} reads layer #{p}, which is not "
                                     "an earlier layer")
                if p != NETWORK_INPUT:
                    cons[p].append(idx)
        object.__setattr__(self, "consumers", tuple(tuple(c) for c in cons))
        if not self.layers:
            raise ModelError(f"model {self.name!r} has no layers")

    def __len__(self) -> int:
        return len(self.layers)

    @property
    def total_ops(self) -> int:
        return sum(layer.ops for layer in self.layers)

    @property
    def total_macs(self) -> int:
        return sum(layer.macs for layer in self.layers)

    @property
    def conv_count(self) -> int:
        return sum(1 for layer in self.layers if layer.kind in ("conv2d", "depthwise"))

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "source": self.source,
                "layers": [layer.to_dict() for layer in self.layers]}
