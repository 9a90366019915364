"""One config as a TVM library: scheduled by its space's template, compiled, exported, and
its output checked against the operator's NumPy reference.

The local measurer's build and run workers use :func:`as_module` and :func:`compare`;
``orchestrator build`` uses :func:`build_library` and :func:`check_library` to hand the
best recorded config to the user as a library a program loads with
``tvm.runtime.load_module``.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task

ENTRY = "main"  # the library's function: inputs, then the output buffer


def as_module(value: Any) -> Any:
    """Accept what a schedule function may return: an IRModule, an s_tir Schedule (its
    ``mod``) or a bare PrimFunc; returns the IRModule."""
    import tvm

    if isinstance(value, tvm.IRModule):
        return value
    if isinstance(getattr(value, "mod", None), tvm.IRModule):
        return value.mod
    if isinstance(value, tvm.tirx.PrimFunc):
        return tvm.IRModule({ENTRY: value})
    raise TypeError(f"the schedule function returned {type(value).__name__}, not an IRModule")


def compare(out: Any, ref: Any, rtol: float, atol: float) -> str:
    """'' if ``out`` matches ``ref`` elementwise, else a one-line description.

    ``atol`` is scaled by the reference's largest magnitude (at least 1): long fp32
    reductions lose precision in proportion to the size of what they sum.
    """
    import numpy as np

    if out.shape != ref.shape:
        return f"output shape {out.shape} differs from the reference's {ref.shape}"
    scale = max(1.0, float(np.max(np.abs(ref)))) if ref.size else 1.0
    diff = np.abs(out.astype("float64") - ref)
    bad = ~(diff <= atol * scale + rtol * np.abs(ref))  # NaN counts as bad
    if not bad.any():
        return ""
    worst = np.where(np.isnan(diff), np.inf, diff)
    at = np.unravel_index(int(np.argmax(worst)), out.shape)
    return (f"max abs error {float(worst[at]):.4g} at {tuple(int(i) for i in at)} "
            f"(got {float(out[at]):.6g}, expected {float(ref[at]):.6g}); "
            f"{int(bad.sum())}/{bad.size} elements off (rtol={rtol:g}, "
            f"atol={atol:g}x{scale:.3g})")


@functools.cache
def schedule_function(name: str) -> Callable[..., Any]:
    """The template function ``f(task, config, target)`` a space's ``schedule_fn`` names
    (``package.module:function``), imported once per process."""
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def build_library(space: Space, config: Config, target: TargetInfo,
                  path: str | os.PathLike[str]) -> None:
    """Schedule ``config`` with ``space``'s template, compile it for ``target`` and export
    the library to ``path`` (exceptions from TVM propagate)."""
    import tvm

    mod = as_module(schedule_function(space.schedule_fn)(space.task, config, target))
    tvm.compile(mod, target=target.tvm_target()).export_library(os.fspath(path))


@dataclass(frozen=True)
class KernelCheck:
    """What running a library once on random inputs gave: ``mismatch`` is '' when its
    output matched the reference, and ``latencies`` (seconds) are the timings then."""

    mismatch: str
    latencies: tuple[float, ...] = ()
    threads: int = 0  # TVM's runtime threads then (TVM_NUM_THREADS when TVM was imported)

    @property
    def ok(self) -> bool:
        return not self.mismatch

    @property
    def latency(self) -> float:
        """The median timing (inf when there is none)."""
        ordered = sorted(self.latencies)
        return ordered[len(ordered) // 2] if ordered else float("inf")


def call(module: Any, inputs: Sequence[Any], output_shape: Sequence[int], dev: Any) -> list[Any]:
    """Call ``module``'s entry once on fresh device copies of ``inputs`` (a wrong kernel may
    write into them) and an output filled with NaN (so that what it leaves unwritten
    shows); returns the arguments, the output last."""
    import numpy as np
    import tvm

    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    args.append(tvm.runtime.tensor(np.full(tuple(output_shape), np.nan, "float32"), dev))
    module[ENTRY](*args)
    return args


def check_library(path: str | os.PathLike[str], task: Task, *, repeat: int = 5,
                  rtol: float = 1e-3, atol: float = 1e-3, seed: int = 0) -> KernelCheck:
    """Load the CPU library at ``path`` in this process, compare its output on random
    inputs with the NumPy reference and, when it matches, time it ``repeat`` times (as
    the local measurer does: at least 50 ms a timing). TVM runs it on as many threads as
    ``TVM_NUM_THREADS`` said when TVM was imported (the measurer sets the core count)."""
    import numpy as np
    import tvm

    dev = tvm.cpu()
    inputs: Sequence[Any] = task.operator.random_inputs(task.params, seed)
    reference = np.asarray(task.operator.reference(inputs, task.params), dtype="float32")
    module = tvm.runtime.load_module(os.fspath(path))
    args = call(module, inputs, reference.shape, dev)
    threads = int(tvm.runtime.num_threads())
    mismatch = compare(args[-1].numpy(), reference, rtol, atol)
    if mismatch:
        return KernelCheck(mismatch, threads=threads)
    timer = module.time_evaluator(ENTRY, dev, number=1, repeat=repeat, min_repeat_ms=50)
    return KernelCheck("", tuple(float(s) for s in timer(*args).results), threads)
