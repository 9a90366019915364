"""Instruction-level parallelism: a small out-of-order list scheduler per basic block.

The dependency builder scans the block once and records two graphs: true dependencies
(read after write: the consumer starts once the producer's result is ready) and false
dependencies (write after read and write after write: the later writer may not start
before the earlier instruction). The scheduler then places instructions oldest first,
each in the earliest cycle where its dependencies allow it, the front end has delivered
it, an issue slot is free (structural hazard: at most ``issue_width`` per cycle) and
its unit pool has room. The block's cost is the cycle its last instruction completes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from plugins.tuna.arch import ArchModel
from plugins.tuna.isa import Effect


@dataclass(frozen=True)
class MicroOp:
    """What the scheduler schedules: a class, a latency, and the names it reads/writes."""

    cls: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    wide: bool = False


@dataclass(frozen=True)
class DependencyGraphs:
    """``true[i]``: (producer, latency) pairs; ``false[i]``: earlier instructions that
    must not start after ``i``."""

    true: tuple[tuple[tuple[int, int], ...], ...]
    false: tuple[tuple[int, ...], ...]


def micro_ops(effects: Sequence[Effect]) -> list[MicroOp]:
    """Split folded loads (x86 arithmetic with a memory operand) into load + operation."""
    out: list[MicroOp] = []
    for n, eff in enumerate(effects):
        if eff.folded_load:
            mem = tuple(r for r in eff.reads if r.startswith("mem:"))
            regs = tuple(r for r in eff.reads if not r.startswith("mem:"))
            tmp = f"tmp{n}"
            out.append(MicroOp("vload" if eff.cls != "alu" else "load", mem + regs, (tmp,),
                               eff.wide))
            out.append(MicroOp(eff.cls, regs + (tmp,), eff.writes, eff.wide))
        else:
            out.append(MicroOp(eff.cls, eff.reads, eff.writes, eff.wide))
    return out


def dependency_graphs(ops: Sequence[MicroOp], arch: ArchModel) -> DependencyGraphs:
    """True (RAW) and false (WAR, WAW) dependency graphs of a block."""
    last_writer: dict[str, int] = {}
    readers_since_write: dict[str, list[int]] = {}
    true: list[tuple[tuple[int, int], ...]] = []
    false: list[tuple[int, ...]] = []
    for i, op in enumerate(ops):
        t = []
        for r in op.reads:
            p = last_writer.get(r)
            if p is not None:
                t.append((p, arch.latency_of(ops[p].cls)))
        f: list[int] = []
        for w in op.writes:
            f.extend(x for x in readers_since_write.get(w, ()) if x != i)
            p = last_writer.get(w)
            if p is not None:
                f.append(p)
        true.append(tuple(t))
        false.append(tuple(sorted(set(f))))
        for r in op.reads:
            readers_since_write.setdefault(r, []).append(i)
        for w in op.writes:
            last_writer[w] = i
            readers_since_write[w] = []
    return DependencyGraphs(tuple(true), tuple(false))


@dataclass(frozen=True)
class Schedule:
    """Start cycle of every micro-op and the block's total cycles."""

    start: tuple[int, ...]
    cycles: int


def list_schedule(ops: Sequence[MicroOp], arch: ArchModel,
                  graphs: DependencyGraphs | None = None) -> Schedule:
    """Schedule ``ops`` (one basic block) on ``arch``; the first starts at cycle 0."""
    if not ops:
        return Schedule((), 0)
    graphs = graphs or dependency_graphs(ops, arch)
    issued: dict[int, int] = {}           # cycle -> instructions issued
    used: dict[tuple[int, str], int] = {}  # (cycle, unit) -> slots taken
    start: list[int] = []
    finish = 0
    width = arch.issue_width
    for i, op in enumerate(ops):
        earliest = i // width  # the front end delivers ``width`` instructions per cycle
        for p, lat in graphs.true[i]:
            earliest = max(earliest, start[p] + lat)
        for p in graphs.false[i]:
            earliest = max(earliest, start[p])
        unit = arch.unit_of(op.cls)
        slots = arch.wide_slots if op.wide and unit in ("vfp", "vshuf", "load", "store") else 1
        cap = arch.capacity_of(unit)
        slots = min(slots, cap)
        cycle = earliest
        while issued.get(cycle, 0) >= width or used.get((cycle, unit), 0) + slots > cap:
            cycle += 1
        issued[cycle] = issued.get(cycle, 0) + 1
        used[(cycle, unit)] = used.get((cycle, unit), 0) + slots
        start.append(cycle)
        finish = max(finish, cycle + max(1, arch.latency_of(op.cls)))
    return Schedule(tuple(start), finish)


def block_cycles(effects: Sequence[Effect], arch: ArchModel) -> int:
    """Cycles one execution of a basic block takes on ``arch``."""
    return list_schedule(micro_ops(effects), arch).cycles


def loop_block_cycles(effects: Sequence[Effect], arch: ArchModel) -> float:
    """Cycles per iteration of a loop that is a single block, in the steady state.

    An out-of-order core overlaps consecutive iterations, so a block that loops on
    itself costs less than its schedule length: the list scheduler is run on two
    copies of the block, and the second copy's increment is the per-iteration cost
    (bounded by the block's resources, its issue width and the dependencies carried
    from one iteration to the next, e.g. FMA accumulator chains).
    """
    ops = micro_ops(effects)
    once = list_schedule(ops, arch).cycles
    twice = list_schedule(ops + ops, arch).cycles
    return float(max(1, twice - once))
