"""Algorithm 2 of the paper: data footprint and data movement on a loop tree.

The program is a tree of loop nodes (inner nodes) and access nodes (leaves: one
tensor load or store). Going bottom-up, each loop node gets, per tensor,

* its footprint: the cache lines of the tensor that all its iterations touch, and
* its data movement: the lines that have to be brought into the cache to run it once.

An access moves one line. For a loop whose single iteration fits in the cache
(``C`` lines), the data movement is its footprint: everything one iteration loads
can still be reused by the next. Otherwise each tensor moves its footprint only while
its reuse status holds, and ``trip count x`` its movement in one iteration once reuse
is lost. Reuse starts true at the leaves and turns false, for good, when

1. the tensor's own footprint in one iteration exceeds the cache,
2. a run of consecutive child nodes that do not access the tensor touches more than
   the cache between two of its uses (the paper's two conditions), or
3. the tensor does not depend on the loop's variable, so reusing it across iterations
   would need the whole iteration (which does not fit) to stay cached.

The paper computes footprints exactly with the Integer Set Library; here each access's
index expressions are bounded by interval arithmetic over the loops' ranges (a box per
tensor, the hull for several accesses) and the box is measured in cache lines.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Union

LINE_BYTES = 64


# -- index expressions ---------------------------------------------------------------------

@dataclass(frozen=True)
class Var:
    key: int
    name: str = ""


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True)
class Add:
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Sub:
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Mul:
    a: Expr
    factor: int


@dataclass(frozen=True)
class Div:
    a: Expr
    divisor: int


@dataclass(frozen=True)
class Mod:
    a: Expr
    divisor: int


@dataclass(frozen=True)
class Opaque:
    """A non-affine function of some variables: its range is bounded by their sum."""

    args: tuple[Expr, ...]


Expr = Union[Var, Const, Add, Sub, Mul, Div, Mod, Opaque]


def interval(e: Expr, ext: Mapping[int, int]) -> tuple[int, int]:
    """Bounds of ``e`` when each variable in ``ext`` ranges over [0, extent) and every
    other variable is held at 0 (it is fixed outside the node being measured)."""
    if isinstance(e, Const):
        return e.value, e.value
    if isinstance(e, Var):
        n = ext.get(e.key)
        return (0, n - 1) if n else (0, 0)
    if isinstance(e, Add):
        a, b = interval(e.a, ext), interval(e.b, ext)
        return a[0] + b[0], a[1] + b[1]
    if isinstance(e, Sub):
        a, b = interval(e.a, ext), interval(e.b, ext)
        return a[0] - b[1], a[1] - b[0]
    if isinstance(e, Mul):
        lo, hi = interval(e.a, ext)
        x, y = lo * e.factor, hi * e.factor
        return min(x, y), max(x, y)
    if isinstance(e, Div):
        lo, hi = interval(e.a, ext)
        return lo // e.divisor, hi // e.divisor
    if isinstance(e, Mod):
        lo, hi = interval(e.a, ext)
        if hi - lo + 1 >= e.divisor or lo % e.divisor > hi % e.divisor:
            return 0, e.divisor - 1
        return lo % e.divisor, hi % e.divisor
    spans = [interval(a, ext) for a in e.args]
    return sum(s[0] for s in spans), sum(s[1] for s in spans)


def variables(e: Expr) -> frozenset[int]:
    if isinstance(e, Var):
        return frozenset((e.key,))
    if isinstance(e, Const):
        return frozenset()
    if isinstance(e, (Add, Sub)):
        return variables(e.a) | variables(e.b)
    if isinstance(e, (Mul, Div, Mod)):
        return variables(e.a)
    out: frozenset[int] = frozenset()
    for a in e.args:
        out |= variables(a)
    return out


# -- the loop tree ---------------------------------------------------------------------------

def affine(e: Expr) -> tuple[dict[int, int], int] | None:
    """``e`` as (coefficient by variable, constant) when it is affine, else None."""
    if isinstance(e, Const):
        return {}, e.value
    if isinstance(e, Var):
        return {e.key: 1}, 0
    if isinstance(e, (Add, Sub)):
        a, b = affine(e.a), affine(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, Add) else -1
        coefs = dict(a[0])
        for v, c in b[0].items():
            coefs[v] = coefs.get(v, 0) + sign * c
        return coefs, a[1] + sign * b[1]
    if isinstance(e, Mul):
        a = affine(e.a)
        if a is None:
            return None
        return {v: c * e.factor for v, c in a[0].items()}, a[1] * e.factor
    return None


@dataclass(frozen=True)
class Access:
    """An access node: one load or store of ``tensor`` at ``indices``."""

    tensor: str
    indices: tuple[Expr, ...]
    shape: tuple[int, ...]
    elem_bytes: int = 4
    store: bool = False

    @cached_property
    def forms(self) -> tuple[tuple[tuple[tuple[int, int], ...], int] | None, ...]:
        """Each index as ((variable, coefficient) pairs, constant), or None if not affine."""
        out = []
        for e in self.indices:
            a = affine(e)
            out.append(None if a is None else (tuple((v, c) for v, c in a[0].items() if c), a[1]))
        return tuple(out)

    @cached_property
    def dim_variables(self) -> tuple[frozenset[int], ...]:
        return tuple(variables(e) for e in self.indices)

    @cached_property
    def variables(self) -> frozenset[int]:
        return frozenset().union(*self.dim_variables)

    def bounds(self, dim: int, ext: Mapping[int, int]) -> tuple[int, int, int]:
        """(low, high, distinct-value bound) of index ``dim`` over the variables in ``ext``."""
        form = self.forms[dim]
        if form is None:
            e = self.indices[dim]
            used = [ext[v] for v in self.dim_variables[dim] if v in ext]
            if not used:
                lo = hi = interval(e, {})[0]
                return lo, hi, 1
            lo, hi = interval(e, ext)
            return lo, hi, math.prod(used)
        lo = hi = form[1]
        count = 1
        for v, c in form[0]:
            n = ext.get(v)
            if n:
                span = c * (n - 1)
                if span > 0:
                    hi += span
                else:
                    lo += span
                count *= n
        return lo, hi, count


@dataclass(frozen=True)
class LoopNode:
    """A loop node: ``extent`` iterations of ``children`` in order (``var`` None: root)."""

    var: int | None
    extent: int
    children: tuple[Node, ...]
    name: str = ""


Node = Union[LoopNode, Access]


@dataclass(frozen=True)
class Movement:
    """Per tensor: footprint and data movement (cache lines) and the reuse status."""

    footprint: tuple[tuple[str, float], ...]
    movement: tuple[tuple[str, float], ...]
    reuse: tuple[tuple[str, bool], ...]

    @property
    def total_footprint(self) -> float:
        return sum(v for _, v in self.footprint)

    @property
    def total_movement(self) -> float:
        return sum(v for _, v in self.movement)

    def of(self, tensor: str) -> float:
        return dict(self.movement).get(tensor, 0.0)


def box_lines(accesses: Sequence[Access], ext: Mapping[int, int],
              line_bytes: int = LINE_BYTES) -> float:
    """Cache lines in the hull of ``accesses`` (one tensor) as the variables in ``ext`` vary."""
    first = accesses[0]
    dims = len(first.shape)
    lo = [math.inf] * dims
    hi = [-math.inf] * dims
    distinct = [0] * dims
    for a in accesses:
        for d in range(min(dims, len(a.indices))):
            x, y, count = a.bounds(d, ext)
            lo[d], hi[d] = min(lo[d], x), max(hi[d], y)
            distinct[d] += count
    spans = [int(min(hi[d] - lo[d] + 1, first.shape[d] or 1)) if hi[d] >= lo[d] else 1
             for d in range(dims)]
    counts = [max(1, min(spans[d], distinct[d] or 1)) for d in range(dims)]
    if dims == 0:
        return 1.0
    # Elements contiguous in memory: the innermost span, merged with outer dimensions
    # for as long as the inner ones are covered completely.
    run = 1
    j = dims - 1
    while j >= 0:
        run *= spans[j]
        if spans[j] < first.shape[j]:
            break
        j -= 1
    outer = math.prod(counts[:max(j, 0)]) if j > 0 else 1
    lines = outer * math.ceil(run * first.elem_bytes / line_bytes)
    return float(max(1, min(lines, math.prod(counts))))


def data_movement(node: Node, cache_lines: float, line_bytes: int = LINE_BYTES) -> Movement:
    """VISIT-Node: footprint, movement and reuse status of ``node`` for a cache of
    ``cache_lines`` lines."""
    return _visit(node, cache_lines, line_bytes)[0]


Visited = tuple[Movement, list[Access], dict[int, int]]


def _visit(node: Node, cache: float, line_bytes: int) -> Visited:
    """(movement, accesses below, extents of the loop variables below) of ``node``."""
    if isinstance(node, Access):
        m = Movement(((node.tensor, 1.0),), ((node.tensor, 1.0),), ((node.tensor, True),))
        return m, [node], {}
    results = [_visit(c, cache, line_bytes) for c in node.children]
    accesses = [a for _, accs, _ in results for a in accs]
    by_tensor: dict[str, list[Access]] = {}
    for a in accesses:
        by_tensor.setdefault(a.tensor, []).append(a)
    inner: dict[int, int] = {}
    for child, (_, _, below) in zip(node.children, results):
        inner.update(below)
        if isinstance(child, LoopNode) and child.var is not None:
            inner[child.var] = child.extent
    whole = dict(inner)
    if node.var is not None:
        whole[node.var] = node.extent
    fp1 = {t: box_lines(accs, inner, line_bytes) for t, accs in by_tensor.items()}
    fp = {t: box_lines(accs, whole, line_bytes) for t, accs in by_tensor.items()}
    moved_iter: dict[str, float] = {}
    reuse_in: dict[str, bool] = {}
    for m, _, _ in results:
        for t, v in m.movement:
            moved_iter[t] = moved_iter.get(t, 0.0) + v
        for t, r in m.reuse:
            reuse_in[t] = reuse_in.get(t, True) and r
    if sum(fp1.values()) <= cache:
        movement = dict(fp)
        reuse = reuse_in
    else:
        movement, reuse = {}, {}
        for t in by_tensor:
            invariant = node.var is not None and node.extent > 1 and not any(
                node.var in a.variables for a in by_tensor[t])
            keep = (reuse_in.get(t, True) and fp1[t] <= cache
                    and _gap(results, t) <= cache and not invariant)
            movement[t] = fp[t] if keep else moved_iter.get(t, 0.0) * node.extent
            reuse[t] = keep
    return Movement(tuple(sorted(fp.items())), tuple(sorted(movement.items())),
                    tuple(sorted(reuse.items()))), accesses, inner


def _gap(results: Sequence[Visited], tensor: str) -> float:
    """The largest footprint of consecutive children (wrapping into the next iteration)
    that do not access ``tensor``."""
    sizes = [m.total_footprint if tensor not in dict(m.footprint) else None
             for m, _, _ in results]
    if all(s is not None for s in sizes):
        return 0.0  # never accessed here: nothing to reuse
    best = run = 0.0
    for s in sizes + sizes:
        run = run + s if s is not None else 0.0
        best = max(best, run)
    return best
