"""Assembly text -> functions -> basic blocks -> loops with their trip counts.

A basic block starts at a label that some branch targets and ends after a jump or a
return (LLVM prints no label for fall-through blocks). A loop is a jump back to a block
that dominates the jumping block (the paper's IDENTIFY-LOOP-LBB, a jump to a label
above it, made robust to LLVM's rotated layouts and to jumps back to shared exit
blocks); its body is the natural loop of that edge. Its trip count is read from the
induction variable when the code allows it: the constant the register starts from
(set in a block that runs before every entry), the step it is changed by in the latch,
and the bound the latch compares it with.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from plugins.tuna.isa import FLAGS, Instruction, Isa, split_operands

_X86_PREFIXES = {"rep", "repe", "repz", "repne", "repnz", "lock", "notrack", "data16"}
_LABEL = re.compile(r"^([A-Za-z_.$][\w.$]*):")
_FUNC_TYPE = re.compile(r"^\s*\.type\s+([\w.$]+)\s*,\s*[@%]function")


@dataclass(frozen=True)
class Block:
    """A basic block: its position in the function, its label (if any), its code."""

    index: int
    label: str | None
    instructions: tuple[Instruction, ...]


@dataclass(frozen=True)
class Loop:
    """A natural loop: its header and latch blocks, every block of its body, and its trip
    count (None when the code does not reveal it)."""

    header: int
    latch: int
    body: frozenset[int]
    trip: int | None

    def contains(self, other: Loop) -> bool:
        return other.body < self.body

    def covers(self, block: int) -> bool:
        return block in self.body


@dataclass(frozen=True)
class Function:
    """A function's blocks and loops. ``reach[b]`` is the chance that one pass through
    the enclosing loop bodies (loops taken once) executes block ``b``: 1 on straight
    paths, split evenly at branches inside a loop, 0 for error exits that leave it."""

    name: str
    blocks: tuple[Block, ...]
    loops: tuple[Loop, ...]
    reach: tuple[float, ...] = ()

    def executions(self, block: int, trips: dict[Loop, int]) -> float:
        """How often ``block`` runs when each loop makes ``trips[loop]`` iterations."""
        runs = self.reach[block] if self.reach else 1.0
        for loop, trip in trips.items():
            if block in loop.body:
                runs *= trip
        return runs



def _instructions(lines: list[str], isa: Isa) -> list[tuple[str | None, Instruction | None]]:
    """(label, None) and (None, instruction) items in text order."""
    out: list[tuple[str | None, Instruction | None]] = []
    for raw in lines:
        line = raw.split(isa.comment, 1)[0].rstrip() if isa.comment in raw else raw.rstrip()
        if not line.strip():
            continue
        m = _LABEL.match(line)
        if m:
            out.append((m.group(1), None))
            continue
        text = line.strip()
        if text.startswith("."):
            continue  # a directive
        parts = text.split(None, 1)
        op = parts[0].lower()
        rest = parts[1] if len(parts) > 1 else ""
        if op in _X86_PREFIXES and rest:
            sub = rest.split(None, 1)
            op, rest = sub[0].lower(), (sub[1] if len(sub) > 1 else "")
        out.append((None, Instruction(op, split_operands(rest))))
    return out


def split_functions(text: str) -> dict[str, list[str]]:
    """The lines of each function, by name, in text order."""
    lines = text.splitlines()
    names = {m.group(1) for m in map(_FUNC_TYPE.match, lines) if m}
    funcs: dict[str, list[str]] = {}
    current: str | None = None
    for line in lines:
        m = _LABEL.match(line)
        if m and m.group(1) in names:
            current = m.group(1)
            funcs[current] = []
            continue
        if current is None:
            continue
        if m and m.group(1).startswith(".Lfunc_end"):
            current = None
            continue
        stripped = line.strip()
        if stripped.startswith(".size") or stripped.startswith(".cfi_endproc"):
            if stripped.startswith(".size"):
                current = None
            continue
        funcs[current].append(line)
    return funcs


def parse_function(name: str, lines: list[str], isa: Isa) -> Function:
    """Split one function's lines into basic blocks and find its loops."""
    items = _instructions(lines, isa)
    targets = set()
    for _, inst in items:
        if inst is not None:
            br = isa.branch(inst)
            if br is not None:
                targets.add(br[0])
    blocks: list[Block] = []
    label: str | None = None
    cur: list[Instruction] = []

    def close() -> None:
        nonlocal cur, label
        if cur or label is not None:
            blocks.append(Block(len(blocks), label, tuple(cur)))
        cur, label = [], None

    for lab, inst in items:
        if lab is not None:
            if lab in targets:
                close()
                label = lab
            continue
        assert inst is not None
        cur.append(inst)
        if isa.ends_block(inst):
            close()
    close()
    loops, reach = _analyze_cfg(blocks, isa)
    return Function(name, tuple(blocks), loops, reach)


def _successors(block: Block, where: dict[str, int], isa: Isa, count: int) -> list[int]:
    nxt = [block.index + 1] if block.index + 1 < count else []
    if not block.instructions:
        return nxt
    last = block.instructions[-1]
    out = []
    br = isa.branch(last)
    if br is not None and br[0] in where:
        out.append(where[br[0]])
    if isa.falls_through(last):
        out.extend(nxt)
    return out


def _dominators(succ: list[list[int]]) -> list[set[int]]:
    """Dominator sets of every block (block 0 is the entry; unreachable blocks get all)."""
    n = len(succ)
    pred: list[list[int]] = [[] for _ in range(n)]
    for b, ss in enumerate(succ):
        for s in ss:
            pred[s].append(b)
    everything = set(range(n))
    dom = [everything.copy() for _ in range(n)]
    if n:
        dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in range(1, n):
            ps = [dom[p] for p in pred[b]]
            new = set.intersection(*ps) | {b} if ps else {b} | everything
            if new != dom[b]:
                dom[b] = new
                changed = True
    return dom


def _analyze_cfg(blocks: list[Block], isa: Isa) -> tuple[tuple[Loop, ...], tuple[float, ...]]:
    """Natural loops (a jump to a block that dominates the jumping block: in LLVM's
    layout nearly always a label above it) and the reach of every block."""
    where = {b.label: b.index for b in blocks if b.label is not None}
    succ = [_successors(b, where, isa, len(blocks)) for b in blocks]
    if not any(h <= b for b in range(len(blocks)) for h in succ[b]):
        return (), _reach(succ, set(), [])  # no jump upwards: no loop
    dom = _dominators(succ)
    back_edges = {(b, h) for b in range(len(blocks)) for h in succ[b] if h in dom[b]}
    pred: list[list[int]] = [[] for _ in blocks]
    for b, ss in enumerate(succ):
        for s in ss:
            pred[s].append(b)
    bodies: dict[int, set[int]] = {}
    latches: dict[int, int] = {}
    for b, h in sorted(back_edges):
        body = bodies.setdefault(h, {h})
        todo = [b]
        while todo:
            x = todo.pop()
            if x not in body:
                body.add(x)
                todo.extend(pred[x])
        latches[h] = max(latches.get(h, -1), b)
    loops = tuple(Loop(h, latches[h], frozenset(bodies[h]),
                       trip_count(blocks, h, latches[h], isa, _entry_chain(dom, bodies[h], h)))
                  for h in sorted(bodies))
    checks: dict[int, int | None] = {}  # block -> the successor its alias check takes
    before: list[Instruction] = []  # the code above the current block, in text order
    for b in blocks:
        taken = _runtime_check(before, b.instructions, isa)
        if taken is not None:
            target = where.get(isa.branch(b.instructions[-1])[0])
            checks[b.index] = target if taken else b.index + 1
        before.extend(b.instructions)
    return loops, _reach(succ, back_edges, loops, checks)


def _reach(succ: list[list[int]], back_edges: set[tuple[int, int]], loops: Sequence[Loop],
           checks: dict[int, int | None] | None = None) -> tuple[float, ...]:
    """Forward propagation of the chance to execute each block, back edges removed.

    At a branch the chance is split evenly between the successors. Inside a loop only
    the successors in the loop's body share it, and the loop's exits pass on, together,
    what entered the loop: one pass runs the body once and leaves once. The exits are
    the edges into an enclosing loop's body (LLVM's unrolled copies test the exit at
    the end of each copy), or, for an outermost loop or one without such edges, those
    of its exit block (the latch, or the header when the latch jumps back
    unconditionally): other edges out of a loop body are error paths in TVM's code. A
    branch on a runtime alias check inside a loop (``checks``: block -> the successor
    the check takes, see ``_runtime_check``) passes all of it to that successor.
    """
    n = len(succ)
    innermost: list[Loop | None] = [None] * n
    by_size = sorted(loops, key=lambda lp: -len(lp.body))
    for loop in by_size:
        for b in loop.body:
            innermost[b] = loop
    enclosing: dict[Loop, set[int]] = {}  # blocks of the loops around each loop
    for loop in loops:
        enclosing[loop] = set().union(*(o.body for o in by_size if o.contains(loop)))
    forward = [[t for t in succ[b] if (b, t) not in back_edges] for b in range(n)]
    headers = {lp.header for lp in loops}
    leads_to_loop = [b in headers for b in range(n)]
    for b in reversed(_topological(forward)):
        leads_to_loop[b] = leads_to_loop[b] or any(leads_to_loop[t] for t in forward[b])
    leaving_edges: set[tuple[int, int]] = set()
    for loop in loops:
        mine = [(b, t) for b in loop.body if innermost[b] is loop
                for t in forward[b] if t not in loop.body]
        found = [(b, t) for b, t in mine if t in enclosing[loop]]
        if not found:  # outermost, or it leaves its enclosing loops at once
            exits_at_latch = any(t not in loop.body for t in succ[loop.latch])
            exit_block = loop.latch if exits_at_latch else loop.header
            found = [(b, t) for b, t in mine if b == exit_block]
        leaving_edges.update(found)
    edges: list[list[tuple[int, float]]] = []
    exits: list[list[tuple[int, float, Loop]]] = [[] for _ in range(n)]
    for b in range(n):
        out = forward[b]
        loop = innermost[b]
        if loop is None:
            # Outside loops, the path into the loops is the one taken (TVM's other
            # branches are empty-range and error checks).
            out = [t for t in out if leads_to_loop[t]] or out
            edges.append([(t, 1.0 / len(out)) for t in out])
            continue
        inside = [t for t in out if t in loop.body]
        outside = [t for t in out if t not in loop.body]
        leave = [t for t in outside if (b, t) in leaving_edges]
        if checks and checks.get(b) in inside:
            inside = [checks[b]]  # a runtime alias check: its no-overlap side runs
        edges.append([(t, 1.0 / len(inside)) for t in inside])
        exits[b] = [(t, 1.0 / len(leave), loop) for t in leave]
        if not inside and not leave:
            edges[b] += [(t, 1.0 / len(outside)) for t in outside]
    order = _topological([[t for t, _ in e] + [t for t, _, _ in x]
                          for e, x in zip(edges, exits)])
    scale = {loop: 1.0 for loop in loops}
    depth = max((sum(1 for o in loops if o.contains(lp)) for lp in loops), default=0)
    for _ in range(depth + 2):
        reach = [0.0] * n
        if n:
            reach[0] = 1.0
        for b in order:
            for t, share in edges[b]:
                reach[t] += reach[b] * share
            for t, share, loop in exits[b]:
                reach[t] += reach[b] * share * scale[loop]
        # Scale each loop's exits to what entered it; inner loops settle first, so
        # nesting depth + 1 rounds suffice.
        leaving = {loop: 0.0 for loop in loops}
        for b in range(n):
            for _, share, loop in exits[b]:
                leaving[loop] += reach[b] * share
        scale = {loop: reach[loop.header] / leaving[loop] if leaving[loop] > 0 else 1.0
                 for loop in loops}
    return tuple(min(1.0, r) for r in reach)


def _topological(forward: list[list[int]]) -> list[int]:
    """Blocks in an order where every edge of the (acyclic) ``forward`` graph points ahead."""
    n = len(forward)
    indegree = [0] * n
    for b in range(n):
        for t in forward[b]:
            indegree[t] += 1
    ready = [b for b in range(n) if indegree[b] == 0]
    order = []
    while ready:
        b = ready.pop()
        order.append(b)
        for t in forward[b]:
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return order


def _entry_chain(dom: list[set[int]], body: set[int], header: int,
                 limit: int = 6) -> tuple[int, ...]:
    """The blocks that run before every entry into the loop (the header's dominators
    outside its body), nearest first."""
    outside = [d for d in dom[header] if d not in body]
    return tuple(sorted(outside, key=lambda d: -len(dom[d]))[:limit])


def _writes(inst: Instruction, reg: str, isa: Isa) -> bool:
    return reg in isa.effect(inst).writes


def _entry_value(blocks: Sequence[Block], entry: tuple[int, ...], reg: str,
                 isa: Isa) -> int | None:
    """The constant ``reg`` holds on entry to the loop, from the blocks leading into it."""
    for index in entry:
        for inst in reversed(blocks[index].instructions):
            if _writes(inst, reg, isa):
                const = isa.constant(inst)
                return const[1] if const and const[0] == reg else None
    return None


def _invariant_constant(blocks: Sequence[Block], header: int, latch: int, entry: tuple[int, ...],
                        reg: str, isa: Isa) -> int | None:
    for b in blocks[min(header, latch):max(header, latch) + 1]:
        if any(_writes(i, reg, isa) for i in b.instructions):
            return None
    return _entry_value(blocks, entry, reg, isa)


def trip_count(blocks: Sequence[Block], header: int, latch: int, isa: Isa,
               entry: tuple[int, ...] = ()) -> int | None:
    """Iterations of the loop ``header..latch`` per entry, or None if the code does not say."""
    code = blocks[latch].instructions
    if not code:
        return None
    br = isa.branch(code[-1])
    if br is None or not br[1]:
        return None
    cond = code[-1].op
    reg: str | None = isa.branch_on_zero(code[-1])
    bound: int | str | None = 0 if reg else None
    cmp_pos = len(code) - 1
    if reg is None:
        for pos in range(len(code) - 2, -1, -1):
            eff = isa.effect(code[pos])
            if FLAGS not in eff.writes:
                continue
            cmp = isa.compare(code[pos])
            step = isa.step(code[pos])
            if cmp is not None:
                reg, bound = cmp
            elif step is not None:  # flags set by the update itself: compared with zero
                reg, bound = step[0], 0
            cmp_pos = pos
            break
    if reg is None or bound is None:
        return None
    if isinstance(bound, str):
        bound = _invariant_constant(blocks, header, latch, entry, bound, isa)
        if bound is None:
            return None
    # The step: updates of the register in the latch (and the header, if separate).
    step_total = 0
    stepped_after_compare = False
    scan = [(latch, code)] + ([(header, blocks[header].instructions)] if header != latch else [])
    for index, insts in scan:
        for pos, inst in enumerate(insts):
            st = isa.step(inst)
            if st is not None and st[0] == reg:
                step_total += st[1]
                if index == latch and pos > cmp_pos:
                    stepped_after_compare = True
            elif _writes(inst, reg, isa) and st is None:
                return None  # the register is not a simple induction variable
    if step_total == 0:
        return None
    init = _entry_value(blocks, entry, reg, isa)
    if init is None:
        # The start is set on another path; counting up to a constant bound, it is an
        # offset below one step in LLVM's loops (e.g. after a peeled remainder).
        if step_total > 0 and bound >= step_total:
            return bound // step_total
        return None
    distance = bound - init
    if stepped_after_compare:
        distance += step_total  # the compare saw the value before this iteration's step
    if distance == 0 or (distance > 0) != (step_total > 0):
        return None
    trips = -(-abs(distance) // abs(step_total))
    if cond in ("jne", "b.ne", "cbnz") and abs(distance) % abs(step_total):
        return None  # would never hit the bound exactly: not what we think it is
    return trips if trips > 0 else None


# Functions TVM adds around every kernel (argument checking, error reporting, fp16
# helpers): the same code for every config, skipped by default.
RUNTIME_FUNCTIONS = ("__tvm_ffi_", "__tvm_set_raised", "__truncsfhf2", "__extendhfsf2",
                     "__gnu_", "__TVM")


def parse_asm(text: str, isa: Isa, *, skip: tuple[str, ...] = RUNTIME_FUNCTIONS) -> list[Function]:
    """The functions of an assembly listing, in text order (without those named in ``skip``)."""
    return [parse_function(name, lines, isa) for name, lines in split_functions(text).items()
            if not name.startswith(skip)]


def _runtime_check(before: Sequence[Instruction], code: Sequence[Instruction], isa: Isa,
                   window: int = 120) -> bool | None:
    """Whether the branch ending ``code`` (a block; ``before``: the code above it) is
    taken when it tests LLVM's runtime alias check (None when it does not). Such a flag
    is tested with ``test r, r`` and made only from unsigned ``set<cc>`` after
    register-register compares of pointer bounds: either "no overlap" (``setae``/``seta``
    joined by ``or``, true at run time: TVM's buffers never alias) or "overlap"
    (``setb``/``setbe`` joined by ``and``, false)."""
    br = isa.branch(code[-1]) if code else None
    if len(code) < 2 or br is None or not br[1] or code[-1].op not in ("je", "jne"):
        return None
    tested = isa.compare(code[-2]) if code[-2].op.startswith("test") else None
    if tested is None:
        return None
    flat = [*before, *code[:-2]]

    def value(pos: int, reg: str, depth: int) -> bool | None:
        for k in range(pos - 1, max(-1, pos - window), -1):
            inst = flat[k]
            if not _writes(inst, reg, isa):
                continue
            if inst.op in ("setae", "seta", "setb", "setbe"):
                for j in range(k - 1, max(-1, k - 8), -1):
                    if _writes(flat[j], FLAGS, isa):
                        cmp = isa.compare(flat[j])
                        if flat[j].op.startswith("cmp") and cmp and isinstance(cmp[1], str):
                            return inst.op in ("setae", "seta")
                        return None
                return None
            op = inst.op.rstrip("bwlq")
            if depth > 0 and op in ("or", "and") \
                    and sum(o.startswith("%") for o in inst.operands) == 2:
                a, b = isa.effect(inst).reads[:2]
                va, vb = value(k, a, depth - 1), value(k, b, depth - 1)
                if va is None or vb is None or va != vb or (op == "or") != va:
                    return None
                return va
            return None
        return None

    v = value(len(flat), tested[0], 3)
    if v is None:
        return None
    return v == (code[-1].op == "jne")
