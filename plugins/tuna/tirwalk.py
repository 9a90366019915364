"""Walking TVM TIR statements from Python, and the lowered loop list of Algorithm 1."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_CHILD_FIELDS = ("seq", "block", "init", "body", "then_case", "else_case")


def child_stmts(stmt: Any) -> Iterator[Any]:
    """The statements directly inside ``stmt``, in program order."""
    for name in _CHILD_FIELDS:
        value = getattr(stmt, name, None)
        if value is None:
            continue
        if name == "seq":
            yield from value
        else:
            yield value


def kind_name(loop: Any) -> str:
    """serial, parallel, vectorized, unrolled or thread_binding."""
    try:
        return loop.kind.name.lower()
    except AttributeError:
        return {0: "serial", 1: "parallel", 2: "vectorized", 3: "unrolled",
                4: "thread_binding"}.get(
            int(loop.kind), "serial")


def const_int(expr: Any) -> int | None:
    value = getattr(expr, "value", None)
    return int(value) if isinstance(value, int) else None


@dataclass(frozen=True)
class TirLoop:
    """A loop that survives lowering, in pre-order.

    ``region`` is 0 for loops that run in the compute function itself and k for loops
    in the body of the k-th parallel loop (which LLVM outlines into its own function).
    ``descendants`` counts the surviving loops below it.
    """

    index: int
    name: str
    extent: int | None
    kind: str
    parent: int | None
    depth: int
    descendants: int
    region: int


def lowered_loops(module: Any) -> list[TirLoop]:
    """Pre-order list of the loops LLVM will see: extent > 1, not unrolled by TVM."""
    loops: list[dict[str, Any]] = []
    parallel_count = 0

    def visit(stmt: Any, parent: int | None, depth: int, region: int) -> None:
        nonlocal parallel_count
        if type(stmt).__name__ == "For":
            extent = const_int(stmt.extent)
            kind = kind_name(stmt)
            if kind == "parallel" and region == 0:
                parallel_count += 1
                region = parallel_count
            if (extent is None or extent > 1) and kind not in ("unrolled", "vectorized"):
                index = len(loops)
                loops.append({"index": index, "name": str(stmt.loop_var.name), "extent": extent,
                              "kind": kind, "parent": parent, "depth": depth, "region": region})
                for child in child_stmts(stmt):
                    visit(child, index, depth + 1, region)
                return
        for child in child_stmts(stmt):
            visit(child, parent, depth, region)

    for _, func in module.functions.items():
        body = getattr(func, "body", None)
        if body is not None:
            visit(body, None, 0, 0)
    counts = [0] * len(loops)
    for loop in reversed(loops):
        if loop["parent"] is not None:
            counts[loop["parent"]] += counts[loop["index"]] + 1
    return [TirLoop(descendants=counts[d["index"]], **d) for d in loops]
