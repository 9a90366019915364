"""The Tuna feature vector of one config: build, lower, emit assembly, analyze.

Features (all per thread, i.e. along the critical path of the parallel loop):

``instructions`` every executed instruction (one issue slot each)
``fma``        executed FMA instructions (x86 vfmadd*/vfmsub*, AArch64 fmla/fmls ...)
``vload``      executed vector loads, memory operands of vector arithmetic included
``vstore``     executed vector stores
``ilp``        cycles of the list scheduler per basic block x block executions (a block
               that loops on itself costs its steady-state cycles per iteration)
``l1``         L1 data movement in cache lines (Algorithm 2, L1d capacity and sets)
``l2``         the same model with the L2 capacity and sets (lines from L3 or DRAM)

An FMA, load or store is counted in ``instructions`` and again in its own class: the
class features carry what such an instruction costs beyond its issue slot.

The first four come from Algorithm 1 (assembly blocks matched to TIR loops), ``ilp``
from the list scheduler, ``l1``/``l2`` from Algorithm 2 on the scheduled TIR.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from orchestrator.kernels import as_module, schedule_function
from orchestrator.space import Config
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.tuna.arch import model_for
from plugins.tuna.asm import parse_asm
from plugins.tuna.datamove import LINE_BYTES, data_movement
from plugins.tuna.isa import isa_for
from plugins.tuna.loopmap import count_program
from plugins.tuna.looptree import loop_tree
from plugins.tuna.lowering import codegen, lower
from plugins.tuna.programs import ProgramCache, program_key
from plugins.tuna.tirwalk import lowered_loops

FEATURES: tuple[str, ...] = ("instructions", "fma", "vload", "vstore", "ilp", "l1", "l2")


def feature_names(family: str) -> tuple[str, ...]:
    """The scored features of a family: CPU ones, or the GPU ones for ``cuda``."""
    if family == "cuda":
        from plugins.tuna.gpu_features import GPU_FEATURES

        return GPU_FEATURES
    return FEATURES
# Bumped whenever a feature's definition changes: it is part of the cache key.
# 5: Algorithm 2's fit tests count the cache sets a footprint maps to (associativity).
FEATURE_VERSION = 5


@dataclass(frozen=True)
class Features:
    """A config's feature values plus diagnostics of the loop matching."""

    values: tuple[tuple[str, float], ...]
    asm_loops: int = 0
    matched_loops: int = 0
    seconds: float = 0.0

    def __getitem__(self, name: str) -> float:
        return dict(self.values)[name]

    def vector(self, names: tuple[str, ...] = FEATURES) -> list[float]:
        d = dict(self.values)
        return [float(d.get(n, 0.0)) for n in names]

    def to_dict(self) -> dict[str, Any]:
        return {"values": dict(self.values), "asm_loops": self.asm_loops,
                "matched_loops": self.matched_loops, "seconds": round(self.seconds, 4)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Features:
        values = data["values"]
        names = (*FEATURES, *(n for n in values if n not in FEATURES)) \
            if any(n in values for n in FEATURES) else tuple(values)
        return cls(tuple((n, float(values.get(n, 0.0))) for n in names),
                   int(data.get("asm_loops", 0)), int(data.get("matched_loops", 0)),
                   float(data.get("seconds", 0.0)))


def triple_of(target: TargetInfo) -> str:
    return str(dict(target.tvm).get("mtriple", "") or ("aarch64" if target.arch.startswith(
        ("neoverse", "cortex", "apple")) else "x86_64"))


def codegen_target(target: TargetInfo, opt_level: int | None = None) -> Any:
    """The TVM target the analysis lowers and generates code for: ``target``'s own, or
    with LLVM's optimization level set to ``opt_level`` (see :data:`OPT_LEVELS`)."""
    if opt_level is None:
        return target.tvm_target()
    import tvm

    return tvm.target.Target({**target.tvm_json, "opt-level": int(opt_level)})


#: LLVM optimization levels the analysis may generate code at. TVM builds at 3 (the
#: default, what runs). 2 skips O3's passes: on the Xeon reference it analyzed about
#: 15% more configs per second and ranked them worse (docs/results/tuna.md).
OPT_LEVELS = (0, 1, 2, 3)


def raw_counts(mod: Any, target: TargetInfo, programs: ProgramCache | None = None,
               opt_level: int | None = None) -> dict[str, float]:
    """Everything the features are made of, for a scheduled IRModule (s_tir): executed
    instructions per class (``c_<class>``, classes of ``Isa.effect``; ``c_instructions``
    is the total), scheduled ``cycles``, data movement ``l1`` and ``l2``, and the loop
    matching (``loops`` in the assembly, ``matched`` of them). With ``programs``, the
    counts of a lowered module seen before are reused instead of generating code again;
    ``opt_level`` overrides LLVM's optimization level (:func:`codegen_target`)."""
    cores = max(1, int(target.cores))
    tree = loop_tree(mod["main"], cores)
    raw = {"l1": float(data_movement(tree, target.l1d_bytes / LINE_BYTES, LINE_BYTES,
                                     target.cache_sets(1, LINE_BYTES)).total_movement),
           "l2": float(data_movement(tree, target.l2_bytes / LINE_BYTES, LINE_BYTES,
                                     target.cache_sets(2, LINE_BYTES)).total_movement)}
    tvm_target = codegen_target(target, opt_level)
    lowered = lower(mod, tvm_target)
    key, counted = "", None
    if programs is not None:
        key = program_identity(lowered, target, opt_level)
        counted = programs.get(key)
    if counted is None:
        isa = isa_for(triple_of(target))
        functions = parse_asm(codegen(lowered, tvm_target), isa)
        counts = count_program(functions, lowered_loops(lowered), isa, model_for(target), cores)
        counted = {f"c_{cls}": float(v) for cls, v in counts.counts}
        counted.update(cycles=float(counts.cycles), loops=float(len(counts.loops)),
                       matched=float(counts.matched))
        if programs is not None:
            programs.put(key, counted)
    return {**counted, **raw}


def program_identity(lowered: Any, target: TargetInfo, opt_level: int | None = None) -> str:
    """What a lowered module's counts are shared under: its text, the counting code's
    version, the target and the optimization level (configs with equal identities
    compile to one kernel)."""
    level = "" if opt_level is None else f"/O{int(opt_level)}"
    return program_key(lowered,
                       f"{FEATURE_VERSION}/{target.key}/{max(1, int(target.cores))}{level}")


def raw_count(raw: dict[str, float], cls: str) -> float:
    """Executed instructions of class ``cls`` in ``raw_counts``."""
    return raw.get(f"c_{cls}", 0.0)


def feature_values(raw: dict[str, float]) -> dict[str, float]:
    """The scored features (``FEATURES``) from ``raw_counts``."""
    return {"instructions": raw_count(raw, "instructions"), "fma": raw_count(raw, "fma"),
            "vload": raw_count(raw, "vload") + raw_count(raw, "folded_vload"),
            "vstore": raw_count(raw, "vstore"), "ilp": raw["cycles"], "l1": raw["l1"],
            "l2": raw["l2"]}


def analyze_module(mod: Any, target: TargetInfo, programs: ProgramCache | None = None,
                   opt_level: int | None = None) -> Features:
    """Features of a scheduled IRModule (s_tir) for ``target``."""
    start = time.perf_counter()
    raw = raw_counts(mod, target, programs, opt_level)
    values = feature_values(raw)
    return Features(tuple((n, float(values[n])) for n in FEATURES), int(raw["loops"]),
                    int(raw["matched"]), time.perf_counter() - start)


def scheduled_module(schedule_fn: str, task: Task, config: Config, target: TargetInfo) -> Any:
    """The IRModule that the space's schedule function builds for ``config``."""
    return as_module(schedule_function(schedule_fn)(task, config, target))


def analyze(schedule_fn: str, task: Task, config: Config, target: TargetInfo,
            programs: ProgramCache | None = None, opt_level: int | None = None) -> Features:
    """Features of ``config``: the space's schedule function builds the module; CPU
    programs already counted in ``programs`` are not generated again; ``opt_level``
    (CPU only) overrides LLVM's optimization level of the code analyzed."""
    mod = scheduled_module(schedule_fn, task, config, target)
    if target.kind == "cuda":
        from plugins.tuna.gpu_features import analyze_cuda

        return analyze_cuda(mod, target)
    return analyze_module(mod, target, programs, opt_level)
