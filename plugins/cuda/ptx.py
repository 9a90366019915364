"""Static facts about a CUDA kernel: its CUDA C, PTX, ptxas resource usage and
instruction counts, without a GPU (TVM generates the CUDA C, nvcc and ptxas do the rest).

Instruction counts (:func:`ptx_features`) come in two kinds:

* static: instructions as they appear in the PTX text;
* executed (``*_executed``): per thread, each instruction weighted by the trip counts of
  the loops around it. A loop is a backward branch ``@%p bra LABEL`` to an earlier
  label; its trip count is recovered when the branch predicate comes from a ``setp``
  inside the loop that compares a counter register against an immediate (or a register
  set once from an immediate before the loop), the counter is updated once in the loop
  by ``add``/``sub`` of an immediate, and it is set from an immediate (``mov``, possibly
  through register copies) before the loop. Rotated (compare after the update) and
  plain forms, ``lt le gt ge ne eq`` and their unsigned forms and negated predicates are
  handled, and so are loops with an unconditional back edge whose exit test is a
  conditional branch out of the body, entered in the middle or not. Instructions of a
  loop count trip-count times (one more than their real count when they follow a
  mid-body exit test).

Not recovered (the loop counts once, and ``loops_recovered < loops`` says so): loops
whose counter starts from a computed value (e.g. thread-dependent), loops that compare
pointers or run-time bounds, and counters updated more than once per iteration.
Branches that are not loops (if/else) and predicated instructions count as executed,
so executed counts are upper bounds for the paths a thread takes.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.errors import OrchestratorError
from orchestrator.target import TargetInfo

if TYPE_CHECKING:
    from orchestrator.space import Config, Space

# The flags TVM's runtime compiles CUDA C with (tvm.support.nvcc, nvcc mode).
NVCC_FLAGS: tuple[str, ...] = ("-O3", "--use_fast_math")
TOOL_TIMEOUT = 300.0


class PtxError(OrchestratorError):
    """nvcc or ptxas is missing or rejected a kernel; the message is one line."""


# -- CUDA C and PTX --------------------------------------------------------------------


def cuda_source(mod: Any, target: TargetInfo) -> str:
    """The CUDA C that TVM generates for a scheduled IRModule (or Schedule, or PrimFunc)."""
    import tvm

    from plugins.measure.worker import as_module

    _require_cuda(target)
    try:
        executable = tvm.compile(as_module(mod), target=target.tvm_target())
    except Exception as exc:  # TVM lowering errors
        raise PtxError(f"TVM cannot build the kernel for CUDA: {_one_line(str(exc))}") from None
    sources = [m.inspect_source("cuda") for m in executable.mod.imports if m.kind == "cuda"]
    source = "\n".join(s for s in sources if s)
    if not source:
        raise PtxError("TVM generated no CUDA source (is the module scheduled for a GPU, "
                       "with loops bound to blockIdx/threadIdx?)")
    return source


def arch_of(target: TargetInfo) -> str:
    """``sm_XY`` of a CUDA target."""
    _require_cuda(target)
    arch = str(target.tvm_json.get("arch") or "")
    if not re.fullmatch(r"sm_\d+[a-z]?", arch):
        raise PtxError(f"CUDA target {target.arch or target.kind!r} names no sm_XY arch")
    return arch


def ptx_of(mod: Any, target: TargetInfo) -> str:
    """PTX for the target's arch: ``nvcc --ptx -arch=sm_XY`` on :func:`cuda_source`."""
    return compile_source(cuda_source(mod, target), arch_of(target), "ptx").decode()


def compile_source(source: str, arch: str, fmt: str = "ptx",
                   timeout: float = TOOL_TIMEOUT) -> bytes:
    """CUDA C compiled by nvcc into ``fmt`` (``ptx``, ``cubin`` or ``fatbin``) for ``arch``."""
    nvcc = find_tool("nvcc")
    with tempfile.TemporaryDirectory(prefix="orchestrator-nvcc-") as tmp:
        (Path(tmp) / "kernel.cu").write_text(source)
        cmd = [nvcc, f"--{fmt}", *NVCC_FLAGS, f"-arch={arch}", "-w", "-o", f"kernel.{fmt}",
               "kernel.cu"]
        _run(cmd, f"nvcc --{fmt} -arch={arch}", timeout, cwd=tmp)
        return (Path(tmp) / f"kernel.{fmt}").read_bytes()


# -- ptxas -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PtxasUsage:
    """What ptxas allocates per thread (registers, spill bytes) and per block (smem).

    ``spill_bytes`` is spill stores plus spill loads; with several entry functions in
    the PTX each figure is the largest over them.
    """

    registers: int
    smem_bytes: int
    spill_bytes: int


_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def ptxas_usage(ptx: str, arch: str) -> PtxasUsage:
    """Registers, shared memory and spills of ``ptx`` for ``arch`` from ``ptxas -v``."""
    ptxas = find_tool("ptxas")
    with tempfile.TemporaryDirectory(prefix="orchestrator-ptxas-") as tmp:
        (Path(tmp) / "kernel.ptx").write_text(ptx)
        err = _run([ptxas, "-v", "--gpu-name", arch, "kernel.ptx", "-o", "kernel.cubin"],
                   f"ptxas --gpu-name {arch}", TOOL_TIMEOUT, cwd=tmp)
    return parse_ptxas(err)


def parse_ptxas(text: str) -> PtxasUsage:
    """PtxasUsage from the text of ``ptxas -v`` (PtxError when it reports no function)."""
    regs = [int(m) for m in _USED.findall(text)]
    if not regs:
        raise PtxError(f"ptxas -v reported no register usage: {_one_line(text) or 'no output'}")
    smem = [int(m) for m in _SMEM.findall(text)]
    spills = [int(a) + int(b) for a, b in _SPILL.findall(text)]
    return PtxasUsage(max(regs), max(smem, default=0), max(spills, default=0))


# -- instruction counts ----------------------------------------------------------------

_CLASSES = ("fma", "ld_global", "st_global", "ld_shared", "st_shared", "bar_sync")


@dataclass(frozen=True)
class PtxFeatures:
    """Static and loop-weighted executed (per thread) instruction counts of a PTX text."""

    fma: int
    ld_global: int
    st_global: int
    ld_shared: int
    st_shared: int
    bar_sync: int
    total: int
    fma_executed: float
    ld_global_executed: float
    st_global_executed: float
    ld_shared_executed: float
    st_shared_executed: float
    bar_sync_executed: float
    total_executed: float
    loops: int
    loops_recovered: int
    max_loop_depth: int

    def to_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class _Instr:
    guard: str        # predicate register, '' when unguarded
    negated: bool
    opcode: str
    operands: tuple[str, ...]


@dataclass(frozen=True)
class _Loop:
    head: int         # index of the first instruction of the body
    tail: int         # index of the backward branch
    trips: int | None


@dataclass(frozen=True)
class _Span:
    """A loop body ``head..tail`` (``tail`` is the backward branch), first entered at
    ``entry``; ``exits`` are the labels outside it."""

    head: int
    tail: int
    entry: int
    exits: frozenset[str]


def _classify(opcode: str) -> str | None:
    if opcode.startswith("fma.") and not opcode.startswith(("fma.lo", "fma.hi")):
        return "fma"
    for prefix, name in (("ld.global", "ld_global"), ("st.global", "st_global"),
                         ("ld.shared", "ld_shared"), ("st.shared", "st_shared"),
                         ("bar.sync", "bar_sync"), ("barrier.sync", "bar_sync")):
        if opcode.startswith(prefix):
            return name
    return None


_LABEL = re.compile(r"^([$\w.]+):")
_GUARD = re.compile(r"^@(!?)(%\w+)\s+")


def _parse(ptx: str) -> tuple[list[_Instr], dict[str, int]]:
    """The instructions of ``ptx`` in order, and label -> index of the next instruction."""
    instrs: list[_Instr] = []
    labels: dict[str, int] = {}
    for raw in ptx.splitlines():
        line = raw.split("//", 1)[0].strip()
        while line:
            m = _LABEL.match(line)
            if not m:
                break
            labels[m.group(1)] = len(instrs)
            line = line[m.end():].strip()
        if not line or line.startswith((".", "{", "}", ")")) or not line.endswith(";"):
            continue
        line = line[:-1].strip()
        guard, negated = "", False
        g = _GUARD.match(line)
        if g:
            negated, guard = g.group(1) == "!", g.group(2)
            line = line[g.end():]
        opcode, _, rest = line.partition(" ")
        operands = tuple(o.strip() for o in _split_operands(rest.strip()))
        instrs.append(_Instr(guard, negated, opcode.strip(), operands))
    return instrs, labels


def _split_operands(text: str) -> list[str]:
    """Top-level comma-separated operands (braces and brackets kept whole)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def _imm(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


def _defs(instr: _Instr) -> list[str]:
    """Registers ``instr`` writes (its first operand, or both predicates of a setp pair)."""
    if not instr.operands or instr.opcode.startswith(("st.", "bar", "bra", "ret", "red.")):
        return []
    return instr.operands[0].split("|")


def _trip_count(instrs: list[_Instr], loop: _Span) -> int | None:
    """The loop's trip count (see the module docstring), or None when not recovered.

    The test is the back edge's predicate, or for an unconditional back edge a
    conditional branch out of the body.
    """
    head, tail = loop.head, loop.tail
    branch = instrs[tail]
    if branch.guard:
        tests = [(tail, branch.guard, branch.negated)]
    else:  # continue while the exit branch is not taken
        tests = [(i, ins.guard, not ins.negated) for i, ins in enumerate(instrs[head:tail], head)
                 if ins.guard and ins.opcode.startswith("bra") and ins.operands
                 and ins.operands[0] in loop.exits]
    for at, pred, negated in tests:
        trips = _count(instrs, loop, at, pred, negated)
        if trips is not None:
            return trips
    return None


def _count(instrs: list[_Instr], loop: _Span, at: int, pred: str,
           negated: bool) -> int | None:
    """Iterations of ``loop`` that continues while ``pred`` (set by a setp before ``at``)
    holds (or does not, when ``negated``)."""
    head, tail, entry = loop.head, loop.tail, loop.entry
    setp_at = next((i for i in range(at - 1, head - 1, -1) if pred in _defs(instrs[i])), None)
    if setp_at is None or not instrs[setp_at].opcode.startswith("setp."):
        return None
    setp = instrs[setp_at]
    cmp = setp.opcode.split(".")[1]
    a, b = setp.operands[1], setp.operands[2]
    bound = _const_value(instrs, head, tail, b)
    counter = a
    if bound is None:
        bound, counter = _const_value(instrs, head, tail, a), b
        cmp = _FLIP.get(cmp, "")
    if bound is None or not counter.startswith("%"):
        return None
    updates = [i for i in range(head, tail) if counter in _defs(instrs[i])]
    if len(updates) != 1:
        return None
    upd = instrs[updates[0]]
    if upd.opcode.split(".")[0] not in ("add", "sub") or len(upd.operands) != 3 or upd.guard:
        return None
    x, y = upd.operands[1], upd.operands[2]
    step = _imm(y) if x == counter else _imm(x) if y == counter else None
    if step is None or (upd.opcode.startswith("sub") and x != counter):
        return None
    if upd.opcode.startswith("sub"):
        step = -step
    init = _initial_value(instrs, head, counter)
    if init is None or step == 0:
        return None
    # Execution order of one iteration starts at the entry and wraps around to it.
    def order(i: int) -> int:
        return i - entry if i >= entry else i - entry + (tail - head + 1)

    # The value compared in iteration i (1-based) is start + (i-1) * step.
    start = init + step if order(updates[0]) < order(setp_at) else init
    if negated:
        cmp = _NEGATE.get(cmp, "")
    return _iterations(cmp, start, step, bound)


_FLIP = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
         "ls": "hs", "hs": "ls", "ne": "ne", "eq": "eq"}
_NEGATE = {"lt": "ge", "ge": "lt", "le": "gt", "gt": "le", "lo": "hs", "hs": "lo",
           "ls": "hi", "hi": "ls", "ne": "eq", "eq": "ne"}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def _iterations(cmp: str, start: int, step: int, bound: int) -> int | None:
    """Iterations of a loop that continues while ``start + (i-1)*step <cmp> bound``."""
    cmp = _UNSIGNED.get(cmp, cmp)
    if cmp == "lt" and step > 0:
        return max(1, math.ceil((bound - start) / step) + 1) if start < bound else 1
    if cmp == "le" and step > 0:
        return (bound - start) // step + 2 if start <= bound else 1
    if cmp == "gt" and step < 0:
        return max(1, math.ceil((start - bound) / -step) + 1) if start > bound else 1
    if cmp == "ge" and step < 0:
        return (start - bound) // -step + 2 if start >= bound else 1
    if cmp == "ne":
        if start == bound:
            return 1
        if (bound - start) % step == 0 and (bound - start) // step > 0:
            return (bound - start) // step + 1
        return None
    if cmp == "eq":
        return 2 if start == bound else 1
    return None


def _const_value(instrs: list[_Instr], head: int, tail: int, operand: str) -> int | None:
    """An immediate, or a register not written in the loop and set from an immediate."""
    value = _imm(operand)
    if value is not None or not operand.startswith("%"):
        return value
    if any(operand in _defs(instrs[i]) for i in range(head, tail + 1)):
        return None
    return _initial_value(instrs, head, operand)


def _initial_value(instrs: list[_Instr], before: int, reg: str) -> int | None:
    """The immediate ``reg`` was last set to before index ``before`` (through ``mov``
    of an immediate, or of a register so set)."""
    for i in range(before - 1, -1, -1):
        if reg in _defs(instrs[i]):
            ins = instrs[i]
            if not ins.opcode.startswith("mov.") or len(ins.operands) != 2 or ins.guard:
                return None
            value = _imm(ins.operands[1])
            if value is None and ins.operands[1].startswith("%r"):
                return _initial_value(instrs, i, ins.operands[1])
            return value
    return None


def _loops(instrs: list[_Instr], labels: dict[str, int]) -> list[_Loop]:
    """Every backward branch's loop, with its trip count when it can be recovered."""
    branches = [(i, ins.operands[0]) for i, ins in enumerate(instrs)
                if ins.opcode.startswith("bra") and ins.operands and ins.operands[0] in labels]
    loops: dict[tuple[int, int], _Loop] = {}
    for tail, label in branches:
        head = labels[label]
        if head > tail or (head, tail) in loops:
            continue
        # Entered in the middle when a branch from outside jumps into the body.
        entries = [labels[t] for i, t in branches
                   if (i < head or i > tail) and head < labels[t] <= tail]
        exits = frozenset(t for t, at in labels.items() if at > tail or at < head)
        span = _Span(head, tail, min(entries) if entries else head, exits)
        loops[(head, tail)] = _Loop(head, tail, _trip_count(instrs, span))
    return list(loops.values())


def ptx_features(ptx: str) -> PtxFeatures:
    """Instruction counts of ``ptx``, static and loop-weighted (see the module docstring)."""
    instrs, labels = _parse(ptx)
    loops = _loops(instrs, labels)
    static = dict.fromkeys(_CLASSES, 0)
    executed = dict.fromkeys(_CLASSES, 0.0)
    total_executed = 0.0
    max_depth = 0
    for i, ins in enumerate(instrs):
        around = [lp for lp in loops if lp.head <= i <= lp.tail]
        max_depth = max(max_depth, len(around))
        weight = float(math.prod(lp.trips or 1 for lp in around))
        total_executed += weight
        cls = _classify(ins.opcode)
        if cls:
            static[cls] += 1
            executed[cls] += weight
    return PtxFeatures(
        **static, total=len(instrs),
        **{f"{k}_executed": v for k, v in executed.items()},
        total_executed=total_executed, loops=len(loops),
        loops_recovered=sum(lp.trips is not None for lp in loops), max_loop_depth=max_depth)


# -- everything at once ----------------------------------------------------------------


def static_features(space: Space, config: Config, target: TargetInfo) -> dict[str, float]:
    """One flat dict for ``config``: ptxas usage (``ptxas_*``) and PTX counts, from a build
    through ``space.schedule_fn`` (InvalidConfigError when the template rejects it)."""
    import importlib

    module, _, attr = space.schedule_fn.partition(":")
    schedule = getattr(importlib.import_module(module), attr)
    ptx = ptx_of(schedule(space.task, config, target), target)
    usage = ptxas_usage(ptx, arch_of(target))
    out = {f"ptxas_{k}": float(v) for k, v in asdict(usage).items()}
    out.update(ptx_features(ptx).to_dict())
    return out


# -- tools -----------------------------------------------------------------------------


def find_tool(name: str) -> str:
    """The path of a CUDA toolkit program (PATH, then $CUDA_HOME/bin, /usr/local/cuda/bin)."""
    found = shutil.which(name)
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).is_file():
            return str(Path(root) / "bin" / name)
    raise PtxError(f"{name} not found: install the CUDA toolkit or put its bin directory "
                   "on PATH (or set CUDA_HOME)")


def _run(cmd: list[str], what: str, timeout: float, cwd: str | None = None) -> str:
    """Run a toolkit command; its stderr, or PtxError with its first error line."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False,
                              cwd=cwd)
    except subprocess.TimeoutExpired:
        raise PtxError(f"{what} took more than {timeout:g} s") from None
    except OSError as exc:
        raise PtxError(f"cannot run {what}: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        raise PtxError(f"{what} failed: {_error_line(proc.stderr + proc.stdout)}")
    return proc.stderr


def _error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    line = (errors or lines or ["no output"])[0]
    return line if len(line) <= 300 else line[:297] + "..."


def _one_line(text: str) -> str:
    from plugins.measure.workerpool import one_line

    return one_line(text)


def _require_cuda(target: TargetInfo) -> None:
    if target.kind != "cuda":
        raise PtxError(f"target {target.arch or target.kind!r} is not a CUDA GPU; use "
                       "--target cuda:<gpu>")
