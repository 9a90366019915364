"""batch_matmul: C[B, M, N] = A[B, M, K] x W[B, K, N]."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from orchestrator.ops.base import Operator


class BatchMatmul(Operator):
    name = "batch_matmul"
    required = ("B", "M", "K", "N")
    example = "B=12,M=128,K=64,N=128"
    main_block = "batch_matmul"

    def check(self, params: Mapping[str, int]) -> None:
        self.positive(params, self.required)

    def input_shapes(self, p: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [(p["B"], p["M"], p["K"]), (p["B"], p["K"], p["N"])]

    def output_shape(self, p: Mapping[str, int]) -> tuple[int, ...]:
        return (p["B"], p["M"], p["N"])

    def flops(self, p: Mapping[str, int]) -> int:
        return 2 * p["B"] * p["M"] * p["N"] * p["K"]

    def te_tensors(self, p: Mapping[str, int]) -> list:
        from tvm import te

        a = te.placeholder((p["B"], p["M"], p["K"]), "float32", name="A")
        w = te.placeholder((p["B"], p["K"], p["N"]), "float32", name="W")
        k = te.reduce_axis((0, p["K"]), name="k")
        c = te.compute(
            (p["B"], p["M"], p["N"]),
            lambda b, i, j: te.sum(a[b, i, k] * w[b, k, j], axis=k),
            name=self.main_block,
        )
        return [a, w, c]

    def reference(self, inputs: Sequence[np.ndarray], p: Mapping[str, int]) -> np.ndarray:
        a, w = inputs
        return np.matmul(a, w)
