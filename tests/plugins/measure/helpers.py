"""Schedule functions for measurer tests: one per way a measurement can end.

``apply`` is named by ``SCHEDULE_FN`` and picks its behaviour from the ``variant`` knob.
The kernels target dense tasks; tvm is imported inside the functions, as in templates.
"""

from __future__ import annotations

import os
import signal
import time
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.space import ChoiceKnob, Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task

SCHEDULE_FN = "tests.plugins.measure.helpers:apply"
VARIANTS = ("ok", "split", "noisy", "invalid", "error", "slow", "die", "wrong", "crash", "hang")


def dense_task(m: int = 16, k: int = 16, n: int = 16) -> Task:
    return Task.create("dense", {"M": m, "K": k, "N": n})


def space(task: Task | None = None) -> Space:
    return Space(task=task or dense_task(), generator="test",
                 knobs=(ChoiceKnob("variant", VARIANTS),), schedule_fn=SCHEDULE_FN)


def config(variant: str) -> Config:
    return Config.of({"variant": variant})


def apply(task: Task, config: Config, target: TargetInfo) -> Any:
    import tvm

    variant = config["variant"]
    func = task.operator.prim_func(task.params)
    if variant == "ok":
        return tvm.IRModule({"main": func})
    if variant == "split":
        from tvm.s_tir import Schedule

        sch = Schedule(func)
        _, j, _ = sch.get_loops(sch.get_sblock(task.operator.main_block))
        sch.split(j, factors=[None, 4])
        return sch.mod
    if variant == "noisy":  # the protocol must survive prints on every level
        print("schedule function says hello on stdout")
        os.write(1, b"{\"status\": \"bogus\"}\nraw fd 1 output\n")
        return tvm.IRModule({"main": func})
    if variant == "invalid":
        raise InvalidConfigError("variant 'invalid' cannot be applied")
    if variant == "error":
        raise RuntimeError("first line of a long error\nthe meaningful last line")
    if variant == "slow":
        time.sleep(600)
    if variant == "die":
        os.kill(os.getpid(), signal.SIGSEGV)
    if variant == "wrong":
        return tvm.IRModule({"main": _transposed_dense(task)})
    if variant in ("crash", "hang"):
        return tvm.IRModule({"main": _misbehaving_kernel(task, variant)})
    raise InvalidConfigError(f"unknown variant {variant!r}")


def _transposed_dense(task: Task) -> Any:
    """A kernel with the dense buffers' shapes that computes A @ B.T (wrong for M=K=N)."""
    from tvm import te

    p = task.params
    a = te.placeholder((p["M"], p["K"]), "float32", name="A")
    b = te.placeholder((p["K"], p["N"]), "float32", name="B")
    k = te.reduce_axis((0, p["K"]), name="k")
    c = te.compute((p["M"], p["N"]), lambda i, j: te.sum(a[i, k] * b[j, k], axis=k), name="C")
    return te.create_prim_func([a, b, c])


def _misbehaving_kernel(task: Task, variant: str) -> Any:
    """A real kernel that calls ``abort()`` (crash) or spins forever (hang)."""
    from tvm.script import tirx as T

    sa, sb, sc = task.operator.buffer_shapes(task.params)

    @T.prim_func
    def crash(A: T.Buffer(sa, "float32"), B: T.Buffer(sb, "float32"),  # noqa: F821
              C: T.Buffer(sc, "float32")):  # noqa: F821 (dtypes, not forward references)
        T.func_attr({"global_symbol": "main", "tirx.noalias": True})
        T.evaluate(T.call_extern("int32", "abort"))

    @T.prim_func
    def hang(A: T.Buffer(sa, "float32"), B: T.Buffer(sb, "float32"),  # noqa: F821
             C: T.Buffer(sc, "float32")):  # noqa: F821
        T.func_attr({"global_symbol": "main", "tirx.noalias": True})
        with T.While(A[0, 0] == A[0, 0]):  # inputs are finite: never false
            C[0, 0] = C[0, 0] + T.float32(1)

    return crash if variant == "crash" else hang
