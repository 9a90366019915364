"""A small hand-scheduled matmul space for the Tuna tests (independent of the templates).

``apply`` is named by ``SCHEDULE_FN``: dense tasks, knobs ``vec`` (vectorize the inner
16 columns or not), ``par`` (parallel outer loop or not) and ``mode`` (``ok``, or a way
to fail: ``invalid`` raises InvalidConfigError, ``error`` a plain exception).
"""

from __future__ import annotations

from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.space import ChoiceKnob, Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task

SCHEDULE_FN = "tests.plugins.tuna.helpers:apply"

ZNVER4 = TargetInfo(kind="llvm", tvm=(("kind", "llvm"), ("mcpu", "znver4"),
                                      ("mtriple", "x86_64-linux-gnu"), ("num-cores", 1)),
                    cores=1, simd_bits=512, fma=True, l1d_bytes=32768, l2_bytes=1 << 20,
                    l3_bytes=32 << 20, clock_ghz=2.5, peak_gflops=80.0, arch="znver4")
NEOVERSE = TargetInfo(kind="llvm", tvm=(("kind", "llvm"), ("mcpu", "neoverse-n1"),
                                        ("mtriple", "aarch64-linux-gnu"), ("num-cores", 1)),
                      cores=1, simd_bits=128, fma=True, l1d_bytes=65536, l2_bytes=1 << 20,
                      l3_bytes=32 << 20, clock_ghz=2.5, peak_gflops=20.0, arch="neoverse-n1")


def dense_task(m: int = 64, k: int = 64, n: int = 64) -> Task:
    return Task.create("dense", {"M": m, "K": k, "N": n})


def space(task: Task | None = None) -> Space:
    return Space(task=task or dense_task(), generator="tuna-test",
                 knobs=(ChoiceKnob("vec", ("yes", "no")), ChoiceKnob("par", ("no", "yes")),
                        ChoiceKnob("mode", ("ok", "invalid", "error"))),
                 schedule_fn=SCHEDULE_FN)


def config(vec: str = "yes", par: str = "no", mode: str = "ok") -> Config:
    return Config.of({"vec": vec, "par": par, "mode": mode})


def scheduled(task: Task, vec: bool = True, par: bool = False, rows: int = 4) -> Any:
    """C = A x B tiled ``rows`` x 16 (rows unrolled, columns vectorized), k split by 4."""
    from tvm.s_tir import Schedule

    sch = Schedule(task.operator.prim_func(task.params))
    block = sch.get_sblock(task.operator.main_block)
    i, j, k = sch.get_loops(block)
    i0, i1 = sch.split(i, factors=[None, rows])
    j0, j1 = sch.split(j, factors=[None, 16])
    k0, k1 = sch.split(k, factors=[None, 4])
    sch.reorder(i0, j0, k0, k1, i1, j1)
    sch.unroll(i1)
    if vec:
        sch.vectorize(j1)
    if par:
        sch.parallel(i0)
    sch.decompose_reduction(block, k0)
    return sch.mod


def apply(task: Task, config: Config, target: TargetInfo) -> Any:
    mode = config["mode"]
    if mode == "invalid":
        raise InvalidConfigError("mode 'invalid' cannot be applied")
    if mode == "error":
        raise RuntimeError("a template bug\nthe meaningful last line")
    return scheduled(task, vec=config["vec"] == "yes", par=config["par"] == "yes")
