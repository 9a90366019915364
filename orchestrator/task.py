"""A tuning task: one operator with concrete shapes, dtype and layout."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.errors import InvalidTaskError
from orchestrator.jsonkey import canonical_json, key_hash
from orchestrator.ops import Operator, get_operator


@dataclass(frozen=True)
class Task:
    """A frozen, hashable description of one workload.

    ``key`` is canonical (operator, shape, dtype, layout) and is what history stores and
    compares; ``name`` is a label only (``r18_l2``) and not part of the identity.
    """

    op: str
    shape: tuple[tuple[str, int], ...]
    dtype: str = "float32"
    layout: str = ""
    name: str | None = field(default=None, compare=False)

    @classmethod
    def create(cls, op: str, shape: Mapping[str, Any], *, name: str | None = None,
               dtype: str = "float32") -> Task:
        """Validate ``shape`` against the operator and build the task (InvalidTaskError if wrong)."""
        operator = get_operator(op)
        if dtype != "float32":
            raise InvalidTaskError(f"{operator.name}: dtype {dtype!r} is not supported; use float32")
        params = operator.normalize(shape)
        layout = "NCHW" if "conv" in operator.name else ""
        return cls(operator.name, tuple((k, params[k]) for k in operator.param_names()),
                   dtype, layout, name)

    @property
    def operator(self) -> Operator:
        return get_operator(self.op)

    @property
    def params(self) -> dict[str, int]:
        return dict(self.shape)

    @property
    def structure(self) -> tuple[tuple[str, int], ...]:
        """The operator's structure parameters of this task (kernel size, stride, ...)."""
        p = self.params
        return tuple((k, p[k]) for k in self.operator.structure if k in p)

    @property
    def key(self) -> str:
        return canonical_json(
            {"op": self.op, "shape": self.params, "dtype": self.dtype, "layout": self.layout}
        )

    @property
    def key_hash(self) -> str:
        return key_hash(self.key)

    @functools.cached_property
    def flops(self) -> int:
        # Cached: history scoring asks each record's (shared) task for it.
        return self.operator.flops(self.params)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "shape": self.params, "dtype": self.dtype,
                "layout": self.layout, "name": self.name}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Task:
        return cls.create(data["op"], data["shape"], name=data.get("name"),
                          dtype=data.get("dtype", "float32"))

    def label(self) -> str:
        shape = ",".join(f"{k}={v}" for k, v in self.shape)
        return f"{self.name} ({self.op} {shape})" if self.name else f"{self.op} {shape}"


def parse_shape(text: str) -> dict[str, str]:
    """Parse ``N=1,C=64,...`` as typed on the command line (values validated later)."""
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InvalidTaskError(
                f"cannot read shape item {part!r}; write NAME=VALUE pairs separated by commas, "
                "e.g. --shape M=128,K=768,N=3072"
            )
        out[name.strip()] = value.strip()
    if not out:
        raise InvalidTaskError("empty --shape; write NAME=VALUE pairs, e.g. --shape M=128,K=768,N=3072")
    return out
