"""depthwise_conv2d, NCHW input and (C, 1, R, S) weights (channel multiplier 1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from orchestrator.ops.conv2d import Conv2d, padded_windows


class DepthwiseConv2d(Conv2d):
    name = "depthwise_conv2d"
    required = ("N", "C", "H", "W", "R", "S")
    example = "N=1,C=32,H=112,W=112,R=3,S=3,stride=1,pad=1"
    main_block = "DepthwiseConv2d"

    def input_shapes(self, p: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [(p["N"], p["C"], p["H"], p["W"]), (p["C"], 1, p["R"], p["S"])]

    def output_shape(self, p: Mapping[str, int]) -> tuple[int, ...]:
        return (p["N"], p["C"], *self.out_hw(p))

    def flops(self, p: Mapping[str, int]) -> int:
        n, c, oh, ow = self.output_shape(p)
        return 2 * n * c * oh * ow * p["R"] * p["S"]

    def te_tensors(self, p: Mapping[str, int]) -> list:
        from tvm import te, topi

        x = te.placeholder((p["N"], p["C"], p["H"], p["W"]), "float32", name="X")
        w = te.placeholder((p["C"], 1, p["R"], p["S"]), "float32", name="Wt")
        y = topi.nn.depthwise_conv2d_nchw(
            x, w, stride=p["stride"], padding=p["pad"], dilation=p["dilation"]
        )
        return [x, w, y]

    def reference(self, inputs: Sequence[np.ndarray], p: Mapping[str, int]) -> np.ndarray:
        x, w = inputs
        win = padded_windows(x, p)
        return np.einsum("nchwrs,crs->nchw", win, w[:, 0], optimize=True).astype("float32")
