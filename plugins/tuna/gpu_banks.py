"""Shared-memory bank conflicts of a CUDA kernel's first warp, from the scheduled TIR.

Tuna (section III-B) evaluates the shared-memory indices of the 32 threads of the first
warp numerically and scales the shared-memory instruction count by the ratio of the
requests the hardware needs to the requests asked for. Here every load from and store to
a ``shared`` buffer is evaluated with the warp's threadIdx values (x fastest, then y, z)
and every other loop variable at 0. Its degree is the largest number of *distinct* 32-bit
words one bank must serve (threads reading the same word are a broadcast, served once);
the kernel's degree is the mean over accesses weighted by how often each runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugins.tuna.datamove import Add, Const, Div, Expr, Mod, Mul, Opaque, Sub, Var
from plugins.tuna.looptree import _buffer_of, _elem_bytes, _key, _loads, convert
from plugins.tuna.tirwalk import child_stmts, const_int, kind_name

BANKS = 32
BANK_BYTES = 4
WARP = 32


@dataclass(frozen=True)
class BankReport:
    """Bank-conflict degree of the first warp: 1.0 means conflict-free."""

    accesses: int          # shared-memory access sites evaluated
    skipped: int           # sites whose index could not be evaluated (counted as degree 1)
    degree: float          # execution-weighted mean degree
    worst: int             # the largest degree of any site


def evaluate(e: Expr, env: Mapping[int, int]) -> int | None:
    """The value of an index expression, or None if it is not computable."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return env.get(e.key, 0)
    if isinstance(e, (Add, Sub)):
        a, b = evaluate(e.a, env), evaluate(e.b, env)
        if a is None or b is None:
            return None
        return a + b if isinstance(e, Add) else a - b
    if isinstance(e, Mul):
        a = evaluate(e.a, env)
        return None if a is None else a * e.factor
    if isinstance(e, (Div, Mod)):
        a = evaluate(e.a, env)
        if a is None:
            return None
        return a // e.divisor if isinstance(e, Div) else a % e.divisor
    assert isinstance(e, Opaque)
    return None


def degree(words: list[int]) -> int:
    """Requests one warp access needs: the most distinct words mapped to one bank."""
    per_bank: dict[int, set[int]] = {}
    for w in words:
        per_bank.setdefault(w % BANKS, set()).add(w)
    return max((len(s) for s in per_bank.values()), default=1)


@dataclass
class _Site:
    index: tuple[Expr, ...]
    shape: tuple[int, ...]
    elem_bytes: int
    weight: float


def _is_shared(buffer: Any) -> bool:
    try:
        scope = str(buffer.scope())
    except Exception:  # older buffers: the scope lives on the data var's type annotation
        scope = str(getattr(getattr(buffer.data, "type_annotation", None), "storage_scope", ""))
    return scope.startswith("shared")


def _collect(func: Any) -> tuple[list[_Site], dict[int, tuple[str, int]]]:
    sites: list[_Site] = []
    threads: dict[int, tuple[str, int]] = {}

    def site(buffer: Any, indices: Any, subst: dict[int, Expr], weight: float) -> None:
        if _is_shared(buffer):
            sites.append(_Site(tuple(convert(i, subst) for i in indices),
                               tuple(const_int(s) or 1 for s in buffer.shape),
                               _elem_bytes(buffer), weight))

    def walk(stmt: Any, subst: dict[int, Expr], weight: float) -> None:
        kind = type(stmt).__name__
        if kind == "For":
            extent = const_int(stmt.extent) or 1
            binding = getattr(stmt, "thread_binding", None)
            tag = str(getattr(binding, "thread_tag", "")) if binding is not None else ""
            if kind_name(stmt) == "thread_binding" and tag.startswith("threadIdx"):
                threads[_key(stmt.loop_var)] = (tag, extent)
                inner = weight
            elif kind_name(stmt) == "thread_binding":
                inner = weight        # blockIdx / vthread: the warp runs one of them
            else:
                inner = weight * extent
            for c in child_stmts(stmt):
                walk(c, subst, inner)
            return
        if kind == "SBlockRealize":
            block = stmt.block
            inner_subst = dict(subst)
            for iv, value in zip(block.iter_vars, stmt.iter_values):
                inner_subst[_key(iv.var)] = convert(value, subst)
            for part in (block.init, block.body):
                if part is not None:
                    walk(part, inner_subst, weight)
            return
        if kind == "BufferStore":
            loads: list[Any] = []
            _loads(stmt.value, loads)
            for ld in loads:
                site(_buffer_of(ld), ld.indices, subst, weight)
            site(stmt.buffer, stmt.indices, subst, weight)
            return
        for c in child_stmts(stmt):
            walk(c, subst, weight)

    walk(func.body, {}, 1.0)
    return sites, threads


def _lane_env(threads: Mapping[int, tuple[str, int]], lane: int) -> dict[int, int]:
    extent = {"threadIdx.x": 1, "threadIdx.y": 1, "threadIdx.z": 1}
    for tag, ext in threads.values():
        extent[tag] = ext
    x = lane % extent["threadIdx.x"]
    y = (lane // extent["threadIdx.x"]) % extent["threadIdx.y"]
    z = lane // (extent["threadIdx.x"] * extent["threadIdx.y"])
    value = {"threadIdx.x": x, "threadIdx.y": y, "threadIdx.z": z}
    return {key: value[tag] for key, (tag, _) in threads.items()}


def bank_conflicts(func: Any) -> BankReport:
    """The first warp's bank-conflict degree over the shared accesses of ``func``."""
    sites, threads = _collect(func)
    block_threads = math.prod(ext for _, ext in threads.values()) if threads else 1
    lanes = [_lane_env(threads, lane) for lane in range(min(WARP, block_threads))]
    total_w = weighted = 0.0
    worst, skipped = 1, 0
    for s in sites:
        words: list[int] = []
        for env in lanes:
            idx = [evaluate(e, env) for e in s.index]
            if any(v is None for v in idx):
                words = []
                break
            flat = 0
            for v, dim in zip(idx, s.shape):
                flat = flat * dim + int(v)  # type: ignore[arg-type]
            words.append(flat * s.elem_bytes // BANK_BYTES)
        d = degree(words) if words else 1
        skipped += 0 if words else 1
        worst = max(worst, d)
        total_w += s.weight
        weighted += s.weight * d
    return BankReport(len(sites), skipped, weighted / total_w if total_w else 1.0, worst)


def launch_shape(func: Any) -> tuple[int, int]:
    """(thread blocks, threads per block) from the loops bound to blockIdx / threadIdx."""
    blocks: dict[str, int] = {}
    threads: dict[str, int] = {}

    def walk(stmt: Any) -> None:
        if type(stmt).__name__ == "For" and kind_name(stmt) == "thread_binding":
            tag = str(stmt.thread_binding.thread_tag)
            extent = const_int(stmt.extent) or 1
            if tag.startswith("blockIdx"):
                blocks[tag] = max(blocks.get(tag, 1), extent)
            elif tag.startswith("threadIdx"):
                threads[tag] = max(threads.get(tag, 1), extent)
        for c in child_stmts(stmt):
            walk(c)

    walk(func.body)
    return math.prod(blocks.values()) if blocks else 1, math.prod(threads.values()) if threads else 1
