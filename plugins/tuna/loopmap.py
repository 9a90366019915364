"""Algorithm 1 of the paper: match assembly loops to TIR loops, then count instructions.

The TIR loops that survive lowering are listed in pre-order (PREORDER-DFS-FOR-LOOP),
the assembly loops of each function too (IDENTIFY-LOOP-LBB, nesting order). Walking
the assembly loops, each is matched to the next TIR loop with the same iteration bound
(PATTERN-MATCH-LOOP): equal to the trip count read from the code, or a multiple of it
when LLVM unrolled the loop by that factor; a loop whose count the code hides matches
on nesting alone. TIR loops that LLVM unrolled completely have no assembly loop and
are skipped; the loops inside them then appear as alike sibling copies (as many as the
unrolled loop's extent), each matched with the same TIR loop and counted in full.
Outlined parallel bodies (``.L__tvm_parallel_lambda*``) are matched with the parallel
loop they came from.

A block runs (its reach x the product of the trip counts of the loops around it)
times, where the reach is the chance a pass executes it (branches inside a loop split
it; see ``asm._reach``); a loop's trip count is the one read from the code, else its
matched TIR loop's extent. A parallel loop counts the iterations of one thread,
``ceil(extent / cores)``, so that every figure is per thread (the critical path), as a
latency is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from plugins.tuna.arch import ArchModel
from plugins.tuna.asm import Function, Loop
from plugins.tuna.ilp import block_cycles, loop_block_cycles
from plugins.tuna.isa import Isa
from plugins.tuna.tirwalk import TirLoop

MAX_UNROLL = 64
_VECTOR = ("fma", "varith", "vdiv", "vshuf", "vmov")


@dataclass(frozen=True)
class MappedLoop:
    """One assembly loop and what it was matched with."""

    function: str
    header: int
    asm_trip: int | None
    tir_index: int | None
    tir_extent: int | None
    trip: int


@dataclass(frozen=True)
class ProgramCounts:
    """Executed instruction counts by class, scheduled cycles, and the loop matching."""

    counts: tuple[tuple[str, float], ...]
    cycles: float
    loops: tuple[MappedLoop, ...]

    def count(self, cls: str) -> float:
        return dict(self.counts).get(cls, 0.0)

    @property
    def total(self) -> float:
        """Executed instructions (a folded load is part of its instruction)."""
        return self.count("instructions")

    @property
    def matched(self) -> int:
        return sum(1 for m in self.loops if m.tir_index is not None or m.asm_trip is not None)


def preorder(function: Function) -> list[Loop]:
    """The function's loops, outer before inner, in code order."""
    loops = sorted(function.loops, key=lambda lp: (min(lp.body), -len(lp.body)))
    out: list[Loop] = []

    def visit(parent: Loop | None) -> None:
        kids = [lp for lp in loops if lp is not parent and _parent_of(loops, lp) is parent]
        for kid in kids:
            out.append(kid)
            visit(kid)

    visit(None)
    return out


def _parent_of(loops: Sequence[Loop], loop: Loop) -> Loop | None:
    outer = [lp for lp in loops if lp.contains(loop)]
    return min(outer, key=lambda lp: len(lp.body)) if outer else None


def pattern_match(tir: TirLoop, trip: int | None, inner_loops: int) -> bool:
    """PATTERN-MATCH-LOOP: same iteration bound (up to LLVM unrolling); a loop with loops
    inside matches no innermost TIR loop. (Inner loop counts may differ: unrolling a
    loop completely removes it, or copies the loops inside it.)"""
    if inner_loops and not tir.descendants:
        return False
    if trip is None:
        return True
    if tir.extent is None:
        return False
    return tir.extent % trip == 0 and tir.extent // trip <= MAX_UNROLL


def regions_of(functions: Sequence[Function], tir_loops: Sequence[TirLoop]) -> list[int | None]:
    """The TIR region each function's loops come from (None: match against all)."""
    parallel = max((t.region for t in tir_loops), default=0)
    lambdas = [f for f in functions if "parallel_lambda" in f.name]
    if len(lambdas) != parallel:
        return [None] * len(functions)
    out: list[int | None] = []
    k = 0
    for f in functions:
        if "parallel_lambda" in f.name:
            k += 1
            out.append(k)
        else:
            out.append(0)
    return out


def map_loops(functions: Sequence[Function], tir_loops: Sequence[TirLoop],
              cores: int) -> list[dict[Loop, MappedLoop]]:
    """LOOP-Map: for each function, its assembly loops with their matched TIR loop.

    Matching follows both nests: the loops inside a matched assembly loop are matched
    among the TIR loops inside its TIR loop, and the next sibling after the TIR loop's
    subtree. A loop whose trip count the code hides prefers a TIR loop with at least
    as many loops inside it (else the one with the most).
    """
    out = []
    for function, region in zip(functions, regions_of(functions, tir_loops)):
        pool = [t for t in tir_loops if region is None or t.region == region]
        loops = list(function.loops)
        children: dict[Loop | None, list[Loop]] = {}
        for loop in preorder(function):
            children.setdefault(_parent_of(loops, loop), []).append(loop)
        mapped: dict[Loop, MappedLoop] = {}

        def inner_count(loop: Loop) -> int:
            return sum(1 for other in loops if loop.contains(other))

        def shape(loop: Loop) -> tuple[int, int | None, tuple[int | None, ...]]:
            """What LLVM's copies of one loop share: size, trip count, and the trip
            counts of the loops inside, in code order."""
            inside = sorted((lp for lp in loops if loop.contains(lp)), key=lambda lp: min(lp.body))
            return (len(loop.body), loop.trip, tuple(lp.trip for lp in inside))

        def copies(level: list[Loop], i: int) -> int:
            """How many loops from ``level[i]`` on are alike (LLVM's copies of one loop)."""
            n = 1
            while i + n < len(level) and shape(level[i + n]) == shape(level[i]):
                n += 1
            return n

        def match(level: list[Loop], cands: list[TirLoop]) -> None:
            next_index = 0
            prev: tuple[Loop, int] | None = None  # the last sibling matched, and its TIR loop
            for i, loop in enumerate(level):
                inner = inner_count(loop)
                hits = [j for j in range(next_index, len(cands))
                        if pattern_match(cands[j], loop.trip, inner)]
                roomy = [j for j in hits if cands[j].descendants >= inner]
                if roomy and loop.trip is None:
                    outer, first = cands[roomy[0]], roomy[0] + 1
                    if (outer.extent is not None and outer.extent == copies(level, i)
                            and first < len(cands) and cands[first].parent == outer.index
                            and cands[first].descendants >= inner):
                        # As many alike loops as the TIR loop's extent: LLVM unrolled that
                        # loop completely, and these are copies of the loop inside it.
                        roomy = [first]
                if roomy:
                    j: int | None = roomy[0]
                elif hits:
                    # LLVM copied inner loops (unrolled a loop around them): take the TIR
                    # loop whose nest explains most of them by trip count, then the one
                    # with most inside.
                    def explained(k: int, loop: Loop = loop) -> int:
                        below = cands[k + 1:k + 1 + cands[k].descendants]
                        return sum(1 for other in loops if loop.contains(other)
                                   and other.trip is not None
                                   and any(pattern_match(t, other.trip, 0) for t in below))

                    j = max(hits, key=lambda k: (explained(k), cands[k].descendants, -k))
                else:
                    j = None
                tir: TirLoop | None = cands[j] if j is not None else None
                if tir is None and prev is not None and shape(prev[0]) == shape(loop):
                    # A copy of the sibling before it (LLVM unrolled a loop around both):
                    # the same TIR loop, and the same loops inside.
                    tir = cands[prev[1]]
                    inside = cands[prev[1] + 1:prev[1] + 1 + tir.descendants]
                elif tir is None:
                    # A copy of a loop already matched (LLVM unrolled the loop around it).
                    back = [k for k in range(next_index - 1, -1, -1)
                            if pattern_match(cands[k], loop.trip, inner)]
                    tir = cands[back[0]] if back else None
                    inside = cands[next_index:]
                else:
                    assert j is not None
                    inside = cands[j + 1:j + 1 + tir.descendants]
                    next_index = j + 1 + tir.descendants
                    prev = (loop, j)
                mapped[loop] = MappedLoop(function.name, loop.header, loop.trip,
                                          tir.index if tir else None,
                                          tir.extent if tir else None,
                                          _effective_trip(loop, tir, cores))
                match(children.get(loop, []), inside)

        match(children.get(None, []), pool)
        out.append(mapped)
    return out


def _effective_trip(loop: Loop, tir: TirLoop | None, cores: int) -> int:
    if tir is not None and tir.kind == "parallel" and tir.extent:
        return math.ceil(tir.extent / max(1, cores))
    if loop.trip is not None:
        return loop.trip
    if tir is not None and tir.extent:
        return tir.extent
    return 1


def count_program(functions: Sequence[Function], tir_loops: Sequence[TirLoop], isa: Isa,
                  arch: ArchModel, cores: int) -> ProgramCounts:
    """COUNT-Instruction plus the ILP cost: per-block figures times block executions."""
    counts: dict[str, float] = {}
    cycles = 0.0
    all_loops: list[MappedLoop] = []
    for function, mapped in zip(functions, map_loops(functions, tir_loops, cores)):
        all_loops.extend(mapped.values())
        trips = {loop: m.trip for loop, m in mapped.items()}
        self_loops = {lp.header for lp in function.loops if len(lp.body) == 1}
        for block in function.blocks:
            if not block.instructions:
                continue
            runs = function.executions(block.index, trips)
            if runs == 0:
                continue
            effects = [isa.effect(i) for i in block.instructions]
            counts["instructions"] = counts.get("instructions", 0.0) + runs * len(effects)
            for eff in effects:
                counts[eff.cls] = counts.get(eff.cls, 0.0) + runs
                if eff.folded_load:  # the memory operand is a load of its own
                    key = "folded_vload" if eff.cls in _VECTOR else "folded_load"
                    counts[key] = counts.get(key, 0.0) + runs
            if runs > 1 and block.index in self_loops:
                cycles += loop_block_cycles(effects, arch) * runs
            elif runs > 1:
                cycles += block_cycles(effects, arch) * runs
            else:  # code outside the loops: not worth scheduling
                cycles += math.ceil(len(effects) / arch.issue_width) * runs
    return ProgramCounts(tuple(sorted(counts.items())), cycles, tuple(all_loops))
