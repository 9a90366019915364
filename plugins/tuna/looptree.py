"""Build Algorithm 2's loop tree from a scheduled (not yet lowered) s_tir PrimFunc.

Block iteration variables are replaced by their bindings, so every access index is
an expression of loop variables. A parallel loop is given its per-thread extent,
``ceil(extent / cores)``: each core has its own L1 and runs that many iterations.
"""

from __future__ import annotations

import math
import re
from typing import Any

from plugins.tuna.datamove import (
    Access,
    Add,
    Const,
    Div,
    Expr,
    LoopNode,
    Mod,
    Mul,
    Node,
    Opaque,
    Sub,
    Var,
)
from plugins.tuna.tirwalk import child_stmts, const_int, kind_name

def _key(var: Any) -> int:
    return int(var.__chandle__())


def convert(expr: Any, subst: dict[int, Expr]) -> Expr:
    """A TIR index expression as a :mod:`datamove` expression (block vars substituted)."""
    kind = type(expr).__name__
    if kind == "Var":
        return subst.get(_key(expr), Var(_key(expr), str(expr.name)))
    if kind == "IntImm":
        return Const(int(expr.value))
    if kind == "Cast":
        return convert(expr.value, subst)
    if kind in ("Add", "Sub"):
        a, b = convert(expr.a, subst), convert(expr.b, subst)
        return Add(a, b) if kind == "Add" else Sub(a, b)
    if kind == "Mul":
        a, b = convert(expr.a, subst), convert(expr.b, subst)
        if isinstance(b, Const):
            return Mul(a, b.value)
        if isinstance(a, Const):
            return Mul(b, a.value)
        return Opaque((a, b))
    if kind in ("FloorDiv", "Div", "FloorMod", "Mod"):
        a, b = convert(expr.a, subst), convert(expr.b, subst)
        if isinstance(b, Const) and b.value > 0:
            return Div(a, b.value) if "Div" in kind else Mod(a, b.value)
        return Opaque((a, b))
    return Opaque(tuple(convert(c, subst) for c in _subexprs(expr)))


_CHILDREN = {"Cast": ("value",), "Broadcast": ("value",), "Not": ("a",),
             "Select": ("condition", "true_value", "false_value"), "Ramp": ("base", "stride"),
             "Let": ("value", "body"), "Call": ("args",), "BufferLoad": ("indices",),
             "TensorLoad": ("indices",)}
_LOADS = ("BufferLoad", "TensorLoad")
_LEAVES = ("Var", "IntImm", "FloatImm", "StringImm", "SizeVar")


def _subexprs(expr: Any) -> list[Any]:
    """The expressions directly inside ``expr``."""
    kind = type(expr).__name__
    if kind in _LEAVES:
        return []
    out: list[Any] = []
    for name in _CHILDREN.get(kind, ("a", "b")):
        value = getattr(expr, name, None)
        if value is None:
            continue
        if name in ("args", "indices"):
            out.extend(v for v in value if not isinstance(v, (int, float, str)))
        else:
            out.append(value)
    return out


def _loads(expr: Any, out: list[Any]) -> None:
    """Every BufferLoad inside ``expr``, innermost first."""
    for sub in _subexprs(expr):
        _loads(sub, out)
    if type(expr).__name__ in _LOADS:
        out.append(expr)


def _buffer_of(load: Any) -> Any:
    """The buffer a load reads (``TensorLoad.source`` in TVM 0.27, ``.buffer`` before)."""
    buffer = getattr(load, "buffer", None)
    return buffer if buffer is not None else load.source


def _elem_bytes(buffer: Any) -> int:
    m = re.search(r"(\d+)", str(buffer.dtype))
    return max(1, int(m.group(1)) // 8) if m else 4


def _access(buffer: Any, indices: Any, subst: dict[int, Expr], store: bool) -> Access:
    shape = tuple(const_int(s) or 1 for s in buffer.shape)
    return Access(str(buffer.name), tuple(convert(i, subst) for i in indices), shape,
                  _elem_bytes(buffer), store)


def _walk(stmt: Any, subst: dict[int, Expr], cores: int) -> list[Node]:
    kind = type(stmt).__name__
    if kind == "For":
        extent = const_int(stmt.extent) or 1
        if kind_name(stmt) == "parallel":
            extent = math.ceil(extent / max(1, cores))
        body = [n for c in child_stmts(stmt) for n in _walk(c, subst, cores)]
        return [LoopNode(_key(stmt.loop_var), extent, tuple(body), str(stmt.loop_var.name))]
    if kind == "SBlockRealize":
        block = stmt.block
        inner = dict(subst)
        for iv, value in zip(block.iter_vars, stmt.iter_values):
            inner[_key(iv.var)] = convert(value, subst)
        out: list[Node] = []
        for part in (block.init, block.body):
            if part is not None:
                out.extend(_walk(part, inner, cores))
        return out
    if kind == "BufferStore":
        loads: list[Any] = []
        _loads(stmt.value, loads)
        for index in stmt.indices:
            _loads(index, loads)
        nodes: list[Node] = [_access(_buffer_of(ld), ld.indices, subst, False) for ld in loads]
        nodes.append(_access(stmt.buffer, stmt.indices, subst, True))
        return nodes
    return [n for c in child_stmts(stmt) for n in _walk(c, subst, cores)]


def loop_tree(func: Any, cores: int) -> LoopNode:
    """The loop tree of a scheduled PrimFunc (its root is a one-iteration loop)."""
    return LoopNode(None, 1, tuple(_walk(func.body, {}, cores)), "root")
