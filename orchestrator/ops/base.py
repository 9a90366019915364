"""The operator contract: shape parameters, validation, TE definition, NumPy reference."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from orchestrator.errors import InvalidTaskError

if TYPE_CHECKING:  # tvm is imported lazily: the CLI must start fast and fail fast
    from tvm import te

# Buffers larger than this many elements are refused up front: they would not fit a
# benchmark run on a workstation and usually mean a typo in the shape.
MAX_ELEMENTS = 1 << 28


class Operator(ABC):
    """One tensor operator the orchestrator can tune (float32 only for now)."""

    name: str
    required: tuple[str, ...]
    defaults: Mapping[str, int] = {}
    example: str
    # The name of the s_tir block that does the main computation.
    main_block: str
    # Shape parameters that no loop extent carries but that change the loop nest's form
    # (a kernel's size, a stride): tuned configs transfer best between tasks equal in them.
    structure: tuple[str, ...] = ()

    def normalize(self, raw: Mapping[str, Any]) -> dict[str, int]:
        """Validate shape parameters and fill defaults; raise InvalidTaskError otherwise."""
        known = set(self.required) | set(self.defaults)
        unknown = sorted(set(raw) - known)
        if unknown:
            raise InvalidTaskError(
                f"{self.name}: unknown shape parameter(s) {', '.join(unknown)}; "
                f"known: {', '.join(self.param_names())} (e.g. --shape {self.example})"
            )
        missing = [p for p in self.required if p not in raw]
        if missing:
            raise InvalidTaskError(
                f"{self.name}: missing shape parameter(s) {', '.join(missing)} "
                f"(e.g. --shape {self.example})"
            )
        params: dict[str, int] = {}
        for p in self.param_names():
            value = raw.get(p, self.defaults.get(p))
            try:
                as_int = _as_int(value)
            except ValueError:
                raise InvalidTaskError(
                    f"{self.name}: {p} must be an integer, got {value!r}"
                ) from None
            params[p] = as_int
        self.check(params)
        for shape in self.buffer_shapes(params):
            if int(np.prod(shape, dtype=np.int64)) > MAX_ELEMENTS:
                raise InvalidTaskError(
                    f"{self.name}: a buffer of shape {tuple(shape)} has more than {MAX_ELEMENTS} "
                    "elements; check the shape"
                )
        return params

    def param_names(self) -> tuple[str, ...]:
        return self.required + tuple(p for p in self.defaults if p not in self.required)

    def positive(self, params: Mapping[str, int], names: Sequence[str]) -> None:
        for p in names:
            if params[p] <= 0:
                raise InvalidTaskError(
                    f"{self.name}: {p} must be a positive integer, got {params[p]}"
                )

    @abstractmethod
    def check(self, params: Mapping[str, int]) -> None:
        """Raise InvalidTaskError when the parameters describe an impossible operator."""

    @abstractmethod
    def input_shapes(self, params: Mapping[str, int]) -> list[tuple[int, ...]]: ...

    @abstractmethod
    def output_shape(self, params: Mapping[str, int]) -> tuple[int, ...]: ...

    @abstractmethod
    def flops(self, params: Mapping[str, int]) -> int:
        """Floating-point operations of one call (a multiply-add counts as 2)."""

    @abstractmethod
    def te_tensors(self, params: Mapping[str, int]) -> list[te.Tensor]:
        """The inputs then the output, as TE tensors (the order of the kernel's arguments)."""

    @abstractmethod
    def reference(self, inputs: Sequence[np.ndarray], params: Mapping[str, int]) -> np.ndarray:
        """The output computed with NumPy, used to check every measured kernel."""

    def buffer_shapes(self, params: Mapping[str, int]) -> list[tuple[int, ...]]:
        return [*self.input_shapes(params), self.output_shape(params)]

    def prim_func(self, params: Mapping[str, int]) -> Any:
        """The unscheduled TIR PrimFunc (tvm imported here, not at module import)."""
        from tvm import te

        return te.create_prim_func(self.te_tensors(params))

    def random_inputs(self, params: Mapping[str, int], seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.uniform(-1.0, 1.0, size=s).astype("float32") for s in self.input_shapes(params)]


def _as_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise ValueError(value)


def conv_out(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
