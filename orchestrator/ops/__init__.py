"""The operators the orchestrator knows, by name."""

from __future__ import annotations

from orchestrator.errors import InvalidTaskError
from orchestrator.ops.base import Operator
from orchestrator.ops.batch_matmul import BatchMatmul
from orchestrator.ops.conv2d import Conv2d
from orchestrator.ops.dense import Dense
from orchestrator.ops.depthwise_conv2d import DepthwiseConv2d

OPERATORS: dict[str, Operator] = {
    op.name: op for op in (Dense(), BatchMatmul(), Conv2d(), DepthwiseConv2d())
}
# Names users type for the same operator.
ALIASES = {"matmul": "dense"}


def get_operator(name: str) -> Operator:
    op = OPERATORS.get(ALIASES.get(name, name))
    if op is None:
        raise InvalidTaskError(
            f"unknown operator {name!r}; known: {', '.join(sorted(OPERATORS))}"
        )
    return op


__all__ = ["OPERATORS", "Operator", "get_operator"]
