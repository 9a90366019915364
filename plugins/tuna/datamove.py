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

The paper's cache is a capacity. A real one is set associative: a line can only go to
the ``ways`` slots of one set, chosen by its address modulo ``sets x line`` (4 KiB for a
48 KiB 12-way or 32 KiB 8-way L1d). Rows of a tensor whose stride is a multiple of that
period all land in the same sets: 16 rows of a 1024-float matrix touch 16 lines of one
set, more than its ways, and evict each other although the cache is nearly empty. So
the fit tests above (conditions 1 and the iteration test) compare with the capacity
what a footprint *needs*: its lines, or, when they crowd into sets that cannot hold
them (more lines per set than ways), lines x sets / sets touched (``Cache.pressure``).
Movements are still counted in lines, and so is the gap of condition 2. With one set
(ways unknown) this is the paper's model.
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


@dataclass(frozen=True)
class Box:
    """The hull of one tensor's accesses as loop variables vary: per dimension its lowest
    index, its span and how many distinct indices it holds, with the tensor's shape."""

    low: tuple[int, ...]
    spans: tuple[int, ...]
    counts: tuple[int, ...]
    shape: tuple[int, ...]
    elem_bytes: int

    @cached_property
    def split(self) -> tuple[int, int]:
        """(j, run): the contiguous run of elements, merged from the innermost dimension
        outwards for as long as the inner ones are covered completely, starts at
        dimension ``j`` (-1 when the whole tensor is one run)."""
        run = 1
        j = len(self.spans) - 1
        while j >= 0:
            run *= self.spans[j]
            if self.spans[j] < self.shape[j]:
                break
            j -= 1
        return j, run

    def lines(self, line_bytes: int) -> float:
        """Cache lines the box touches: its rows (the distinct index combinations of the
        dimensions outside the contiguous run) times the lines of one run."""
        if not self.spans:
            return 1.0
        j, run = self.split
        outer = math.prod(self.counts[:j]) if j > 0 else 1
        lines = outer * math.ceil(run * self.elem_bytes / line_bytes)
        return float(max(1, min(lines, math.prod(self.counts))))

    def sets(self, line_bytes: int, sets: int, budget: int = 4096) -> int:
        """How many of a ``sets``-set cache's sets the box's lines map to, the tensor's
        first element taken as set-aligned (buffers are allocated at least line-aligned,
        large ones page-aligned). Rows whose starts fall on few residues modulo the
        cache's set period (power-of-two strides) share few sets; when the residues are
        too many to enumerate within ``budget`` steps, the rows are taken as spread."""
        if not self.spans:
            return 1
        lines = int(self.lines(line_bytes))
        if sets <= 1 or lines <= 1:
            return 1
        period = sets * line_bytes
        j, run = self.split
        run_lines = math.ceil(run * self.elem_bytes / line_bytes)
        if run_lines >= sets:
            return sets
        strides = [math.prod(self.shape[d + 1:]) * self.elem_bytes for d in range(len(self.shape))]
        start = sum(self.low[d] * strides[d] for d in range(len(self.shape))) % period
        starts = {start}
        for d in range(max(j, 0)):
            count = self.counts[d]
            if count <= 1:
                continue
            step = max(1, (self.spans[d] - 1) // (count - 1)) * strides[d] % period
            cycle = period // math.gcd(step, period) if step else 1
            if len(starts) * min(count, cycle) > budget:
                return min(sets, lines)
            offsets = {k * step % period for k in range(min(count, cycle))}
            starts = {(a + b) % period for a in starts for b in offsets}
        first_lines = {a // line_bytes for a in starts}
        if len(first_lines) * run_lines > budget:
            return min(sets, lines)
        run_bytes = run * self.elem_bytes
        touched: set[int] = set()
        for a in starts:
            first, last = a // line_bytes, (a + run_bytes - 1) // line_bytes
            touched.update(x % sets for x in range(first, last + 1))
        return max(1, min(len(touched), lines))


def box_of(accesses: Sequence[Access], ext: Mapping[int, int]) -> Box:
    """The hull of ``accesses`` (one tensor) as the variables in ``ext`` vary."""
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
    low = [max(0, int(lo[d])) if hi[d] >= lo[d] else 0 for d in range(dims)]
    return Box(tuple(low), tuple(spans), tuple(counts), tuple(first.shape), first.elem_bytes)


def box_lines(accesses: Sequence[Access], ext: Mapping[int, int],
              line_bytes: int = LINE_BYTES) -> float:
    """Cache lines in the hull of ``accesses`` (one tensor) as the variables in ``ext`` vary."""
    return box_of(accesses, ext).lines(line_bytes)


def data_movement(node: Node, cache_lines: float, line_bytes: int = LINE_BYTES,
                  sets: int = 1) -> Movement:
    """VISIT-Node: footprint, movement and reuse status of ``node`` for a cache of
    ``cache_lines`` lines in ``sets`` sets (1: fully associative, capacity alone)."""
    return _visit(node, Cache(cache_lines, line_bytes, max(1, sets)))[0]


@dataclass(frozen=True)
class Cache:
    """A cache's geometry: capacity in lines, line size, number of sets."""

    lines: float
    line_bytes: int = LINE_BYTES
    sets: int = 1

    @property
    def ways(self) -> float:
        return self.lines / self.sets

    def pressure(self, box: Box, lines: float) -> float:
        """The capacity a footprint of ``lines`` lines needs: its lines, unless they crowd
        into fewer sets than could hold them (more lines per set than ways), in which case
        the capacity at which its sets would be that full, lines x sets / sets touched,
        which exceeds the cache: such a footprint does not fit, however small it is."""
        if self.sets <= 1 or lines <= self.ways:
            return lines
        touched = box.sets(self.line_bytes, self.sets)
        if lines <= self.ways * touched:
            return lines
        return lines * self.sets / touched


Visited = tuple[Movement, list[Access], dict[int, int]]


def _visit(node: Node, cache: Cache) -> Visited:
    """(movement, accesses below, extents of the loop variables below) of ``node``."""
    if isinstance(node, Access):
        m = Movement(((node.tensor, 1.0),), ((node.tensor, 1.0),), ((node.tensor, True),))
        return m, [node], {}
    results = [_visit(c, cache) for c in node.children]
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
    boxes1 = {t: box_of(accs, inner) for t, accs in by_tensor.items()}
    fp1 = {t: b.lines(cache.line_bytes) for t, b in boxes1.items()}
    fp = {t: box_lines(accs, whole, cache.line_bytes) for t, accs in by_tensor.items()}
    # What one iteration needs of the cache; equal to fp1 unless lines crowd into few sets.
    need1 = {t: cache.pressure(boxes1[t], fp1[t]) for t in by_tensor}
    moved_iter: dict[str, float] = {}
    reuse_in: dict[str, bool] = {}
    for m, _, _ in results:
        for t, v in m.movement:
            moved_iter[t] = moved_iter.get(t, 0.0) + v
        for t, r in m.reuse:
            reuse_in[t] = reuse_in.get(t, True) and r
    if sum(need1.values()) <= cache.lines:
        movement = dict(fp)
        reuse = reuse_in
    else:
        movement, reuse = {}, {}
        for t in by_tensor:
            invariant = node.var is not None and node.extent > 1 and not any(
                node.var in a.variables for a in by_tensor[t])
            keep = (reuse_in.get(t, True) and need1[t] <= cache.lines
                    and _gap(results, t) <= cache.lines and not invariant)
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
