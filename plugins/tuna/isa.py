"""What one assembly instruction does, for x86-64 (AT&T syntax) and AArch64.

Each ISA turns an (opcode, operands) pair into an :class:`Effect`: the registers and
memory it reads and writes, its instruction class (``fma``, ``vload``, ``alu`` ...)
and, for loop analysis, whether it defines a constant, steps an induction variable or
compares a register with a bound. Register names are normalized so that aliases share
one name (``%eax`` -> ``rax``, ``%zmm3`` -> ``v3``, ``w8`` -> ``r8``, ``q5`` -> ``v5``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

FLAGS = "flags"
MEMORY_PREFIX = "mem:"

# Instruction classes. The significant SIMD classes of the paper are fma, vload, vstore.
CLASSES = ("fma", "varith", "vdiv", "vshuf", "vmov", "vload", "vstore", "load", "store",
           "alu", "mul", "div", "branch", "call", "nop")


@dataclass(frozen=True)
class Effect:
    """Dataflow and class of one instruction.

    ``folded_load`` marks an arithmetic instruction with a memory source operand (x86),
    which the scheduler splits into a load micro-op and the operation. ``wide`` marks a
    vector operation on the widest registers (zmm), which some cores execute in two
    halves.
    """

    cls: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    folded_load: bool = False
    wide: bool = False


@dataclass(frozen=True)
class Instruction:
    """One parsed instruction: lower-case opcode and its operand texts."""

    op: str
    operands: tuple[str, ...]

    def text(self) -> str:
        return f"{self.op} {', '.join(self.operands)}".strip()


def split_operands(text: str) -> tuple[str, ...]:
    """Operands separated by commas outside (), [] and {}."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last:
        out.append(last)
    return tuple(out)


def parse_int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


class Isa:
    """Interface both ISAs implement (see :class:`X86` and :class:`AArch64`)."""

    name = ""
    comment = "#"

    def __init__(self) -> None:
        self._effects: dict[Instruction, Effect] = {}

    def effect(self, inst: Instruction) -> Effect:
        """The instruction's :class:`Effect` (memoized: listings repeat instructions)."""
        eff = self._effects.get(inst)
        if eff is None:
            if len(self._effects) > 200_000:
                self._effects.clear()
            eff = self._effects[inst] = self._effect(inst)
        return eff

    def _effect(self, inst: Instruction) -> Effect:
        raise NotImplementedError

    def branch(self, inst: Instruction) -> tuple[str, bool] | None:
        """(target label, conditional) for a direct branch; None otherwise."""
        raise NotImplementedError

    def ends_block(self, inst: Instruction) -> bool:
        """True for jumps and returns (a basic block ends after them)."""
        raise NotImplementedError

    def falls_through(self, inst: Instruction) -> bool:
        """False for unconditional jumps and returns."""
        raise NotImplementedError

    def constant(self, inst: Instruction) -> tuple[str, int] | None:
        """(register, value) when the instruction sets a register to a constant."""
        raise NotImplementedError

    def step(self, inst: Instruction) -> tuple[str, int] | None:
        """(register, increment) when it adds a constant to a register in place."""
        raise NotImplementedError

    def compare(self, inst: Instruction) -> tuple[str, int | str] | None:
        """(register, bound) for a compare of a register with a constant or register."""
        raise NotImplementedError

    def branch_on_zero(self, inst: Instruction) -> str | None:
        """The register a compare-and-branch instruction tests against zero (AArch64)."""
        return None


# -- x86-64, AT&T syntax -----------------------------------------------------------------

_X86_GPR = {}
for _base in ("ax", "bx", "cx", "dx"):
    for _alias in (f"r{_base}", f"e{_base}", _base, f"{_base[0]}l", f"{_base[0]}h"):
        _X86_GPR[_alias] = f"r{_base}"
for _base in ("si", "di", "bp", "sp"):
    for _alias in (f"r{_base}", f"e{_base}", _base, f"{_base}l"):
        _X86_GPR[_alias] = f"r{_base}"
for _n in range(8, 16):
    for _suffix in ("", "d", "w", "b"):
        _X86_GPR[f"r{_n}{_suffix}"] = f"r{_n}"
_X86_VEC = re.compile(r"^[xyz]mm(\d+)$")
_X86_REG = re.compile(r"%([a-z0-9]+)")
_X86_MASK = re.compile(r"\{[^}]*\}")

_X86_JCC = re.compile(r"^j(?!mp)[a-z]+$")
_X86_FLAG_READERS = re.compile(r"^(j(?!mp)[a-z]+|cmov[a-z]+|set[a-z]+|adc[a-z]?|sbb[a-z]?)$")
_X86_FLAG_WRITERS = re.compile(
    r"^(add|sub|and|or|xor|inc|dec|neg|cmp|test|shl|shr|sar|sal|rol|ror|imul|adc|sbb|bt|"
    r"v?u?comis[sd]|v?ptest)[bwlq]?$")
_X86_FMA = re.compile(r"^v?f(n?)m(add|sub)(\d{3})?(ps|pd|ss|sd)$")
_X86_VDIV = re.compile(r"^v?(div|sqrt|rcp|rsqrt)[a-z0-9]*(ps|pd|ss|sd)$")
_X86_VARITH = re.compile(
    r"^v?(add|sub|mul|max|min|and|andn|or|xor|cmp|round|blend|blendv|cvt[a-z0-9]*|hadd)"
    r"(ps|pd|ss|sd)$|^v?p(add|sub|mul|max|min|and|andn|or|xor|sll|srl|sra|cmp)[a-z0-9]*$")
_X86_VSHUF = re.compile(
    r"^v?(shuf|unpck|perm|insert|extract|broadcast|pshuf|palignr|movhl|movlh|movsh|movdup|"
    r"pblend|pbroadcast|pinsr|pextr|valign|expand|compress|movmsk)[a-z0-9]*$")
_X86_VMOV = re.compile(r"^v?(mov(aps|apd|ups|upd|dqa|dqu|dqa32|dqa64|dqu8|dqu16|dqu32|dqu64|"
                       r"ss|sd|d|q|ntps|ntpd|ntdq)|pmov[sz]x[a-z]+)$")
_X86_READS_DEST_VEC = re.compile(r"^v(f(n?)m(add|sub)|permt2|permi2|pdpbusd|pdpwssd)")
_X86_NO_SOURCE_READ = {"xor", "xorl", "xorq", "sub", "subl", "subq", "pxor", "vpxor", "vpxord",
                       "vpxorq", "xorps", "vxorps", "xorpd", "vxorpd"}


def _x86_reg(name: str) -> str | None:
    name = name.lower()
    m = _X86_VEC.match(name)
    if m:
        return f"v{m.group(1)}"
    if name in _X86_GPR:
        return _X86_GPR[name]
    if re.fullmatch(r"k[0-7]", name):
        return name
    return None


def _x86_regs_in(operand: str) -> list[str]:
    out = []
    for raw in _X86_REG.findall(operand):
        reg = _x86_reg(raw)
        if reg is not None and raw != "rip":
            out.append(reg)
    return out


def _x86_is_mem(operand: str) -> bool:
    core = _X86_MASK.sub("", operand).strip()
    return "(" in core or (not core.startswith(("%", "$")) and not core.startswith("*%")
                           and bool(core))


def _x86_mem_key(operand: str) -> str:
    return MEMORY_PREFIX + _X86_MASK.sub("", operand).strip()


@dataclass(frozen=True)
class _OpFacts:
    base: str
    reads_flags: bool
    writes_flags: bool
    compares: bool
    moves: bool
    cmov: bool
    vec_reads_dest: bool


@functools.lru_cache(maxsize=4096)
def _x86_facts(op: str) -> _OpFacts:
    base = X86._base(op)
    moves = (base == "mov" or op.startswith(("movs", "movz", "cmov", "set", "vmov",
                                             "vbroadcast", "vpbroadcast", "cvt", "vcvt",
                                             "movabs", "vpmov", "pmov"))
             or _X86_VMOV.match(op) is not None)
    return _OpFacts(
        base, _X86_FLAG_READERS.match(op) is not None, _X86_FLAG_WRITERS.match(op) is not None,
        base in ("cmp", "test", "bt") or op.startswith(
            ("vucomis", "vcomis", "ucomis", "comis", "ptest", "vptest")),
        moves, op.startswith("cmov"), _X86_READS_DEST_VEC.match(op) is not None)


@dataclass(frozen=True)
class _Operand:
    core: str
    is_mem: bool
    regs: tuple[str, ...]
    masks: tuple[str, ...]
    zmm: bool

    @property
    def mem_key(self) -> str:
        return MEMORY_PREFIX + self.core


@functools.lru_cache(maxsize=65536)
def _x86_operand(text: str) -> _Operand:
    core = _X86_MASK.sub("", text).strip()
    masks = tuple(re.findall(r"\{%(k[0-7])\}", text))
    return _Operand(core, _x86_is_mem(text), tuple(_x86_regs_in(core)), masks, "zmm" in text)


class X86(Isa):
    """x86-64 in the AT&T syntax LLVM prints (``op src, ..., dst``)."""

    name = "x86"
    comment = "#"

    def branch(self, inst: Instruction) -> tuple[str, bool] | None:
        op = inst.op
        if not inst.operands or inst.operands[0].startswith("*"):
            return None
        if op == "jmp" or op == "jmpq":
            return inst.operands[0], False
        if _X86_JCC.match(op):
            return inst.operands[0], True
        return None

    def ends_block(self, inst: Instruction) -> bool:
        return inst.op.startswith("j") or inst.op.startswith("ret")

    def falls_through(self, inst: Instruction) -> bool:
        return not (inst.op in ("jmp", "jmpq") or inst.op.startswith("ret")
                    or inst.op in ("ud2", "ud1"))

    @staticmethod
    def _base(op: str) -> str:
        """The opcode without its AT&T size suffix for integer instructions."""
        if len(op) > 2 and op[-1] in "bwlq" and op[:-1] in (
                "add", "sub", "and", "or", "xor", "inc", "dec", "neg", "not", "cmp", "test",
                "shl", "shr", "sar", "sal", "mov", "lea", "imul", "idiv", "div", "mul",
                "push", "pop", "adc", "sbb", "rol", "ror", "bt", "call", "ret"):
            return op[:-1]
        return op

    def _effect(self, inst: Instruction) -> Effect:
        op = inst.op
        ops = inst.operands
        facts = _x86_facts(op)
        base = facts.base
        parsed = [_x86_operand(o) for o in ops]
        wide = any(p.zmm for p in parsed)
        reads: list[str] = [m for p in parsed for m in p.masks]  # AVX-512 masks are read
        writes: list[str] = []
        if facts.reads_flags:
            reads.append(FLAGS)
        if facts.writes_flags:
            writes.append(FLAGS)

        if self.branch(inst) is not None or op.startswith("ret"):
            return Effect("branch", tuple(reads) + (("rsp",) if op.startswith("ret") else ()),
                          tuple(writes))
        if base == "call" or op.startswith("call"):
            regs = [r for p in parsed for r in p.regs]
            return Effect("call", tuple(regs + ["rsp", "rdi", "rsi", "rdx", "rcx"]),
                          ("rax", "rsp", "v0"))
        if op in ("vzeroupper", "nop", "nopw", "nopl", "endbr64", "int3", "ud2"):
            return Effect("nop", (), ())
        if base == "push":
            return Effect("store", parsed[0].regs + ("rsp",), ("rsp", MEMORY_PREFIX + "stack"))
        if base == "pop":
            return Effect("load", ("rsp", MEMORY_PREFIX + "stack"), parsed[0].regs + ("rsp",))
        if op in ("cltd", "cqto", "cltq", "cwtl"):
            return Effect("alu", ("rax",), ("rdx",) if op in ("cltd", "cqto") else ("rax",))
        if base in ("idiv", "div"):
            return Effect("div", tuple(reads + ["rax", "rdx", *parsed[0].regs]),
                          tuple(writes + ["rax", "rdx"]))
        if not ops:
            return Effect("alu", tuple(reads), tuple(writes))

        dst = parsed[-1]
        srcs = parsed[:-1]
        src_mem = [p for p in srcs if p.is_mem]
        is_vector = any(r[0] == "v" for p in parsed for r in p.regs)
        # A zeroing idiom (xor r, r) reads nothing.
        zero_idiom = (base in _X86_NO_SOURCE_READ and len(ops) >= 2
                      and len({p.core for p in parsed}) == 1)
        # Registers used for addressing are read, whatever the operand's role.
        for p in parsed:
            if p.is_mem:
                reads.extend(p.regs)
        if base == "lea":
            return Effect("alu", tuple(reads), tuple(writes) + dst.regs)
        if not zero_idiom:
            for p in srcs:
                if not p.is_mem:
                    reads.extend(p.regs)
            reads.extend(p.mem_key for p in src_mem)
        if facts.compares:
            reads.extend([dst.mem_key] if dst.is_mem else dst.regs)
            return Effect("alu", tuple(reads), tuple(writes))
        # Does the instruction read its destination? Two-operand integer and SSE forms
        # do; VEX/EVEX three-operand forms and moves do not, FMA does.
        reads_dest = facts.cmov or (not zero_idiom and not facts.moves and (
            not op.startswith("v") or len(ops) <= 2 or facts.vec_reads_dest))
        if dst.is_mem:
            if reads_dest:
                reads.append(dst.mem_key)
            writes.append(dst.mem_key)
        else:
            if reads_dest:
                reads.extend(dst.regs)
            writes.extend(dst.regs)
        cls = self._classify(op, base, is_vector, dst.is_mem, bool(src_mem))
        folded = bool(src_mem) and cls in ("fma", "varith", "vdiv", "vshuf", "alu", "mul")
        return Effect(cls, tuple(dict.fromkeys(reads)), tuple(dict.fromkeys(writes)),
                      folded_load=folded, wide=wide)

    def _classify(self, op: str, base: str, is_vector: bool, dst_mem: bool,
                  src_mem: bool) -> str:
        if _X86_FMA.match(op):
            return "fma"
        if _X86_VDIV.match(op):
            return "vdiv"
        if is_vector and (_X86_VMOV.match(op) or op.startswith(("vbroadcast", "vpbroadcast",
                                                                "vmovdqu", "vmovdqa"))):
            if dst_mem:
                return "vstore"
            if src_mem:
                return "vload"
            return "vshuf" if "broadcast" in op else "vmov"
        if _X86_VARITH.match(op):
            return "varith"
        if _X86_VSHUF.match(op):
            return "vshuf"
        if is_vector and op.startswith("v"):
            return "vstore" if dst_mem else ("vload" if src_mem and op.startswith("vmov")
                                             else "varith")
        if base in ("imul", "mul"):
            return "mul"
        if dst_mem:
            return "store"
        if src_mem and (base == "mov" or op.startswith(("movs", "movz"))):
            return "load"
        return "alu"

    def constant(self, inst: Instruction) -> tuple[str, int] | None:
        base = self._base(inst.op)
        ops = inst.operands
        if len(ops) != 2:
            return None
        if (base == "mov" or inst.op == "movabsq") and ops[0].startswith("$"):
            regs = _x86_regs_in(ops[1])
            value = parse_int(ops[0][1:])
            if regs and not _x86_is_mem(ops[1]) and value is not None:
                return regs[0], value
        if base in ("xor", "sub") and ops[0] == ops[1] and ops[0].startswith("%"):
            reg = _x86_reg(ops[0][1:])
            return (reg, 0) if reg else None
        return None

    def step(self, inst: Instruction) -> tuple[str, int] | None:
        base = self._base(inst.op)
        ops = inst.operands
        if base in ("inc", "dec") and len(ops) == 1 and ops[0].startswith("%"):
            reg = _x86_reg(ops[0][1:])
            return (reg, 1 if base == "inc" else -1) if reg else None
        if base in ("add", "sub") and len(ops) == 2 and ops[0].startswith("$") \
                and ops[1].startswith("%"):
            value = parse_int(ops[0][1:])
            reg = _x86_reg(ops[1][1:])
            if value is None or reg is None:
                return None
            return reg, value if base == "add" else -value
        if base == "lea" and len(ops) == 2 and ops[1].startswith("%"):
            m = re.fullmatch(r"(-?\w*)\(%(\w+)\)", ops[0])
            reg = _x86_reg(ops[1][1:])
            if m and reg and _x86_reg(m.group(2)) == reg:
                value = parse_int(m.group(1) or "0")
                return (reg, value) if value is not None else None
        return None

    def compare(self, inst: Instruction) -> tuple[str, int | str] | None:
        base = self._base(inst.op)
        ops = inst.operands
        if base == "cmp" and len(ops) == 2 and ops[1].startswith("%"):
            reg = _x86_reg(ops[1][1:])
            if reg is None:
                return None
            if ops[0].startswith("$"):
                value = parse_int(ops[0][1:])
                return (reg, value) if value is not None else None
            if ops[0].startswith("%"):
                other = _x86_reg(ops[0][1:])
                return (reg, other) if other else None
        if base == "test" and len(ops) == 2 and ops[0] == ops[1] and ops[0].startswith("%"):
            reg = _x86_reg(ops[0][1:])
            return (reg, 0) if reg else None
        return None


# -- AArch64 -------------------------------------------------------------------------------

_A64_GPR = re.compile(r"^[xw](\d+)$")
_A64_FP = re.compile(r"^[vqdshb](\d+)(\.\w+)?(\[\d+\])?$")
_A64_STORES = re.compile(r"^(st(r|p|ur|np|lr|xr|1|2|3|4)[a-z0-9]*)$")
_A64_LOADS = re.compile(r"^(ld(r|p|ur|np|ar|xr|1|2|3|4)[a-z0-9]*)$")
_A64_FMA = re.compile(r"^(fmla|fmls|fmadd|fmsub|fnmadd|fnmsub|bfmla[bt]?|fmlal2?|fmlsl2?|"
                      r"fdot|bfdot|sdot|udot|smmla|ummla|bfmmla)$")
_A64_VARITH = re.compile(r"^(fadd|fsub|fmul|fmulx|fmax|fmin|fmaxnm|fminnm|fabs|fneg|fcvt\w*|"
                         r"scvtf|ucvtf|frint\w*|faddp|fmaxp|fminp|fcm\w+|bsl|bit|bif|"
                         r"mla|mls|sqadd|uqadd|shl|ushr|sshr)$")
_A64_VDIV = re.compile(r"^(fdiv|fsqrt|frecpe|frsqrte)$")
_A64_VSHUF = re.compile(r"^(dup|ins|zip[12]|uzp[12]|trn[12]|ext|tbl|tbx|rev\d*|umov|smov|"
                        r"xtn2?|uxtl2?|sxtl2?)$")
_A64_READS_DEST = re.compile(r"^(fmla|fmls|mla|mls|bsl|bit|bif|ins|movk|bfi|bfxil|fmlal2?|"
                             r"fmlsl2?|fdot|bfdot|sdot|udot|bfmla[bt]?|smmla|ummla|bfmmla)$")
_A64_FLAG_WRITERS = re.compile(r"^(cmp|cmn|tst|fcmp|fcmpe|ccmp|ccmn|adds|subs|ands|bics|"
                               r"negs|adcs|sbcs)$")
_A64_FLAG_READERS = re.compile(r"^(b\.\w+|csel|csinc|csinv|csneg|cset|csetm|cinc|cinv|cneg|"
                               r"adc|sbc|adcs|sbcs|ccmp|ccmn|fcsel)$")


def _a64_reg(token: str) -> str | None:
    token = token.strip().lower()
    if token in ("sp", "wsp"):
        return "sp"
    if token in ("xzr", "wzr"):
        return None
    m = _A64_GPR.match(token)
    if m:
        return f"r{m.group(1)}"
    m = _A64_FP.match(token)
    if m:
        return f"v{m.group(1)}"
    return None


def _a64_regs_in(operand: str) -> list[str]:
    tokens = re.split(r"[\s,\[\]{}!]+", operand)
    out = []
    for t in tokens:
        if not t or t.startswith("#") or t.startswith(":"):
            continue
        reg = _a64_reg(t)
        if reg is not None:
            out.append(reg)
    return out


class AArch64(Isa):
    """AArch64 as LLVM prints it (``op dst, src, ...``; stores list sources first)."""

    name = "aarch64"
    comment = "//"

    def branch(self, inst: Instruction) -> tuple[str, bool] | None:
        op, ops = inst.op, inst.operands
        if op == "b" and ops:
            return ops[0], False
        if op.startswith("b.") and ops:
            return ops[0], True
        if op in ("cbz", "cbnz") and len(ops) == 2:
            return ops[1], True
        if op in ("tbz", "tbnz") and len(ops) == 3:
            return ops[2], True
        return None

    def ends_block(self, inst: Instruction) -> bool:
        return self.branch(inst) is not None or inst.op in ("ret", "br")

    def falls_through(self, inst: Instruction) -> bool:
        return inst.op not in ("b", "ret", "br", "brk", "udf")

    def _effect(self, inst: Instruction) -> Effect:
        op, ops = inst.op, inst.operands
        reads: list[str] = []
        writes: list[str] = []
        if _A64_FLAG_READERS.match(op):
            reads.append(FLAGS)
        if _A64_FLAG_WRITERS.match(op):
            writes.append(FLAGS)
        if self.branch(inst) is not None or op in ("ret", "br"):
            for o in ops[:-1] if op in ("cbz", "cbnz", "tbz", "tbnz") else ():
                reads.extend(_a64_regs_in(o))
            return Effect("branch", tuple(reads), tuple(writes))
        if op in ("bl", "blr"):
            regs = [r for o in ops for r in _a64_regs_in(o)]
            return Effect("call", tuple(regs + ["r0", "r1", "r2", "r3"]), ("r0", "v0"))
        if op in ("nop", "hint", "prfm", "prfum", "dmb", "isb"):
            return Effect("nop", (), ())
        mem_idx = next((i for i, o in enumerate(ops) if o.startswith("[")), None)
        if mem_idx is not None:
            mem = ops[mem_idx]
            addr = _a64_regs_in(mem)
            writeback = mem.endswith("!") or mem_idx < len(ops) - 1
            key = MEMORY_PREFIX + mem.rstrip("!")
            data = [r for o in ops[:mem_idx] for r in _a64_regs_in(o)]
            vector = any(r.startswith("v") for r in data)
            if _A64_STORES.match(op):
                return Effect("vstore" if vector else "store", tuple(reads + data + addr),
                              tuple(writes + [key] + (addr[:1] if writeback else [])))
            if _A64_LOADS.match(op):
                return Effect("vload" if vector else "load", tuple(reads + addr + [key]),
                              tuple(writes + data + (addr[:1] if writeback else [])))
        if op in ("cmp", "cmn", "tst", "fcmp", "fcmpe", "ccmp", "ccmn"):
            regs = [r for o in ops for r in _a64_regs_in(o)]
            return Effect("alu", tuple(reads + regs), tuple(writes))
        if not ops:
            return Effect("alu", tuple(reads), tuple(writes))
        dst = _a64_regs_in(ops[0])
        srcs = [r for o in ops[1:] for r in _a64_regs_in(o)]
        if _A64_READS_DEST.match(op):
            srcs = dst + srcs
        if op in ("eor", "movi") and len(ops) >= 3 and ops[1] == ops[2]:
            srcs = []
        is_vector = any(r.startswith("v") for r in dst + srcs)
        cls = self._classify(op, is_vector)
        return Effect(cls, tuple(dict.fromkeys(reads + srcs)), tuple(dict.fromkeys(writes + dst)),
                      wide=False)

    def _classify(self, op: str, is_vector: bool) -> str:
        if _A64_FMA.match(op):
            return "fma"
        if _A64_VDIV.match(op):
            return "vdiv"
        if _A64_VSHUF.match(op):
            return "vshuf"
        if _A64_VARITH.match(op):
            return "varith"
        if op in ("mov", "fmov", "movi", "mvni", "orr", "and", "eor") and is_vector:
            return "vmov" if op in ("mov", "fmov", "movi", "mvni") else "varith"
        if op in ("mul", "madd", "msub", "smull", "umull", "smaddl", "umaddl", "mneg",
                  "smulh", "umulh"):
            return "mul"
        if op in ("sdiv", "udiv"):
            return "div"
        return "varith" if is_vector else "alu"

    def constant(self, inst: Instruction) -> tuple[str, int] | None:
        op, ops = inst.op, inst.operands
        if op in ("mov", "movz") and len(ops) == 2:
            reg = _a64_reg(ops[0])
            if reg is None or not reg.startswith("r"):
                return None
            if ops[1] in ("xzr", "wzr"):
                return reg, 0
            if ops[1].startswith("#"):
                value = parse_int(ops[1][1:])
                return (reg, value) if value is not None else None
        if op == "orr" and len(ops) == 3 and ops[1] in ("xzr", "wzr") and ops[2].startswith("#"):
            reg = _a64_reg(ops[0])
            value = parse_int(ops[2][1:])
            return (reg, value) if reg and value is not None else None
        return None

    def step(self, inst: Instruction) -> tuple[str, int] | None:
        op, ops = inst.op, inst.operands
        if op in ("add", "sub", "adds", "subs") and len(ops) == 3 and ops[2].startswith("#"):
            dst, src = _a64_reg(ops[0]), _a64_reg(ops[1])
            value = parse_int(ops[2][1:])
            if dst is None or dst != src or value is None:
                return None
            return dst, value if op.startswith("add") else -value
        return None

    def compare(self, inst: Instruction) -> tuple[str, int | str] | None:
        op, ops = inst.op, inst.operands
        if op in ("cmp", "cmn") and len(ops) == 2:
            reg = _a64_reg(ops[0])
            if reg is None:
                return None
            if ops[1].startswith("#"):
                value = parse_int(ops[1][1:])
                if value is None:
                    return None
                return reg, value if op == "cmp" else -value
            other = _a64_reg(ops[1])
            return (reg, other) if other else None
        if op in ("subs", "adds") and len(ops) == 3 and ops[2].startswith("#"):
            if _a64_reg(ops[0]) == _a64_reg(ops[1]) and _a64_reg(ops[0]):
                return _a64_reg(ops[0]), 0  # type: ignore[return-value]
        return None

    def branch_on_zero(self, inst: Instruction) -> str | None:
        if inst.op in ("cbz", "cbnz") and inst.operands:
            return _a64_reg(inst.operands[0])
        return None


def isa_for(triple_or_arch: str) -> Isa:
    """The ISA of an LLVM target triple or an architecture family name."""
    text = triple_or_arch.lower()
    if text.startswith(("aarch64", "arm64", "neon")) or "aarch64" in text:
        return AArch64()
    return X86()
