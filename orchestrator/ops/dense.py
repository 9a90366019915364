"""dense: C[M, N] = A[M, K] x B[K, N] (the suite's layout, as torch.matmul)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from orchestrator.ops.base import Operator


class Dense(Operator):
    name = "dense"
    required = ("M", "K", "N")
    example = "M=128,K=768,N=3072"
    main_block = "dense"

    def check(self, params: Mapping[str, int]) -> None:
        self.positive(params, self.required)

    def input_shapes(self, p: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [(p["M"], p["K"]), (p["K"], p["N"])]

    def output_shape(self, p: Mapping[str, int]) -> tuple[int, ...]:
        return (p["M"], p["N"])

    def flops(self, p: Mapping[str, int]) -> int:
        return 2 * p["M"] * p["N"] * p["K"]

    def te_tensors(self, p: Mapping[str, int]) -> list:
        from tvm import te

        a = te.placeholder((p["M"], p["K"]), "float32", name="A")
        b = te.placeholder((p["K"], p["N"]), "float32", name="B")
        k = te.reduce_axis((0, p["K"]), name="k")
        c = te.compute(
            (p["M"], p["N"]), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name=self.main_block
        )
        return [a, b, c]

    def reference(self, inputs: Sequence[np.ndarray], p: Mapping[str, int]) -> np.ndarray:
        a, b = inputs
        return a @ b
