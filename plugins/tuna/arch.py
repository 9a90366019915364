"""Per-architecture machine models: issue width, execution units and latencies.

The figures are rounded public numbers (vendor optimization manuals, uops.info,
Agner Fog's tables) for the unit classes of :mod:`plugins.tuna.isa`; the list scheduler
only needs them roughly right, and the score's coefficients absorb the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from orchestrator.target import TargetInfo


@dataclass(frozen=True)
class ArchModel:
    """One micro-architecture family as the list scheduler sees it.

    ``units`` maps each instruction class to the unit pool it issues to and
    ``capacity`` gives how many instructions a pool accepts per cycle. ``wide_slots``
    is how many slots a widest-register (zmm) operation takes in its pool: 2 on Zen 4,
    which runs AVX-512 on 256-bit pipes.
    """

    name: str
    isa: str
    issue_width: int
    latency: tuple[tuple[str, int], ...]
    units: tuple[tuple[str, str], ...]
    capacity: tuple[tuple[str, int], ...]
    wide_slots: int = 1

    @cached_property
    def _latency(self) -> dict[str, int]:
        return dict(self.latency)

    @cached_property
    def _units(self) -> dict[str, str]:
        return dict(self.units)

    @cached_property
    def _capacity(self) -> dict[str, int]:
        return dict(self.capacity)

    def latency_of(self, cls: str) -> int:
        return self._latency.get(cls, 1)

    def unit_of(self, cls: str) -> str:
        return self._units.get(cls, "alu")

    def capacity_of(self, unit: str) -> int:
        return self._capacity.get(unit, 1)


# Instruction class -> unit pool, shared by every model below.
_UNITS = (("fma", "vfp"), ("varith", "vfp"), ("vdiv", "vdiv"), ("vshuf", "vshuf"),
          ("vmov", "vfp"), ("vload", "load"), ("load", "load"), ("vstore", "store"),
          ("store", "store"), ("alu", "alu"), ("mul", "mul"), ("div", "div"),
          ("branch", "branch"), ("call", "branch"), ("nop", "alu"))

ZNVER4 = ArchModel(
    name="znver4", isa="x86", issue_width=6,
    latency=(("fma", 4), ("varith", 3), ("vdiv", 11), ("vshuf", 2), ("vmov", 1),
             ("vload", 7), ("load", 4), ("vstore", 1), ("store", 1), ("alu", 1), ("mul", 3),
             ("div", 14), ("branch", 1), ("call", 5), ("nop", 0)),
    units=_UNITS,
    capacity=(("vfp", 4), ("vdiv", 1), ("vshuf", 2), ("load", 3), ("store", 2), ("alu", 4),
              ("mul", 1), ("div", 1), ("branch", 2)),
    wide_slots=2,
)

AVX512 = ArchModel(
    name="avx512", isa="x86", issue_width=4,
    latency=(("fma", 4), ("varith", 4), ("vdiv", 14), ("vshuf", 3), ("vmov", 1),
             ("vload", 7), ("load", 5), ("vstore", 1), ("store", 1), ("alu", 1), ("mul", 3),
             ("div", 20), ("branch", 1), ("call", 5), ("nop", 0)),
    units=_UNITS,
    capacity=(("vfp", 2), ("vdiv", 1), ("vshuf", 1), ("load", 2), ("store", 1), ("alu", 4),
              ("mul", 1), ("div", 1), ("branch", 2)),
)

AVX2 = ArchModel(
    name="avx2", isa="x86", issue_width=4,
    latency=(("fma", 5), ("varith", 4), ("vdiv", 13), ("vshuf", 3), ("vmov", 1),
             ("vload", 6), ("load", 5), ("vstore", 1), ("store", 1), ("alu", 1), ("mul", 3),
             ("div", 22), ("branch", 1), ("call", 5), ("nop", 0)),
    units=_UNITS,
    capacity=(("vfp", 2), ("vdiv", 1), ("vshuf", 1), ("load", 2), ("store", 1), ("alu", 4),
              ("mul", 1), ("div", 1), ("branch", 2)),
)

# Arm Neoverse N1 (AWS Graviton2), 128-bit Neon.
NEON = ArchModel(
    name="neon", isa="aarch64", issue_width=4,
    latency=(("fma", 4), ("varith", 3), ("vdiv", 10), ("vshuf", 2), ("vmov", 2),
             ("vload", 5), ("load", 4), ("vstore", 1), ("store", 1), ("alu", 1), ("mul", 3),
             ("div", 12), ("branch", 1), ("call", 5), ("nop", 0)),
    units=_UNITS,
    capacity=(("vfp", 2), ("vdiv", 1), ("vshuf", 2), ("load", 2), ("store", 1), ("alu", 3),
              ("mul", 1), ("div", 1), ("branch", 1)),
)

MODELS: dict[str, ArchModel] = {m.name: m for m in (ZNVER4, AVX512, AVX2, NEON)}


def family(target: TargetInfo) -> str:
    """The model family of a target: znver4, avx512, avx2, neon, or cuda for GPUs."""
    if target.kind == "cuda":
        return "cuda"
    tvm = dict(target.tvm)
    triple = str(tvm.get("mtriple", "")).lower()
    arch = target.arch.lower()
    if triple.startswith(("aarch64", "arm64")) or arch.startswith(
            ("neoverse", "cortex", "apple", "aarch64", "arm", "graviton")):
        return "neon"
    if arch.startswith(("znver4", "znver5")):
        return "znver4"
    if target.simd_bits >= 512:
        return "avx512"
    return "avx2"


def model_for(target: TargetInfo) -> ArchModel:
    return MODELS[family(target)]
