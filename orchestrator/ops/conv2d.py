"""conv2d, NCHW input and KCRS (OIHW) weights, square stride, padding and dilation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from orchestrator.errors import InvalidTaskError
from orchestrator.ops.base import Operator, conv_out


def padded_windows(x: np.ndarray, p: Mapping[str, int]) -> np.ndarray:
    """Sliding windows (N, C, OH, OW, R, S) of the zero-padded input, honouring stride and dilation."""
    pad, stride, dil = p["pad"], p["stride"], p["dilation"]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    span_r = dil * (p["R"] - 1) + 1
    span_s = dil * (p["S"] - 1) + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (span_r, span_s), axis=(2, 3))
    return win[:, :, ::stride, ::stride, ::dil, ::dil]


class Conv2d(Operator):
    name = "conv2d"
    required = ("N", "C", "H", "W", "K", "R", "S")
    defaults = {"stride": 1, "pad": 0, "dilation": 1}
    example = "N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1"
    main_block = "conv2d_nchw"
    structure = ("R", "S", "stride", "dilation")

    def check(self, p: Mapping[str, int]) -> None:
        self.positive(p, (*self.required, "stride", "dilation"))
        if p["pad"] < 0:
            raise InvalidTaskError(f"{self.name}: pad must be >= 0, got {p['pad']}")
        oh, ow = self.out_hw(p)
        if oh <= 0 or ow <= 0:
            raise InvalidTaskError(
                f"{self.name}: the output would be {oh}x{ow} "
                "((H + 2*pad - dilation*(R-1) - 1) // stride + 1); use a larger H/W or pad, "
                "or a smaller kernel"
            )

    def out_hw(self, p: Mapping[str, int]) -> tuple[int, int]:
        return (
            conv_out(p["H"], p["R"], p["stride"], p["pad"], p["dilation"]),
            conv_out(p["W"], p["S"], p["stride"], p["pad"], p["dilation"]),
        )

    def input_shapes(self, p: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [(p["N"], p["C"], p["H"], p["W"]), (p["K"], p["C"], p["R"], p["S"])]

    def output_shape(self, p: Mapping[str, int]) -> tuple[int, ...]:
        return (p["N"], p["K"], *self.out_hw(p))

    def flops(self, p: Mapping[str, int]) -> int:
        n, k, oh, ow = self.output_shape(p)
        return 2 * n * k * oh * ow * p["C"] * p["R"] * p["S"]

    def te_tensors(self, p: Mapping[str, int]) -> list:
        from tvm import te, topi

        x = te.placeholder((p["N"], p["C"], p["H"], p["W"]), "float32", name="X")
        w = te.placeholder((p["K"], p["C"], p["R"], p["S"]), "float32", name="Wt")
        y = topi.nn.conv2d_nchw(x, w, stride=p["stride"], padding=p["pad"], dilation=p["dilation"])
        return [x, w, y]

    def reference(self, inputs: Sequence[np.ndarray], p: Mapping[str, int]) -> np.ndarray:
        x, w = inputs
        win = padded_windows(x, p)
        return np.einsum("nchwrs,kcrs->nkhw", win, w, optimize=True).astype("float32")
