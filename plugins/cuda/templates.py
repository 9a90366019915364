"""The ``cuda`` space generator: multi-level tiled CUDA templates for dense and conv2d.

``apply_config`` (the spaces' ``schedule_fn``) rebuilds the PrimFunc from the frozen task
and schedules it; ``kernel_plan`` (their ``plan_fn``) derives the launch, resources and
traffic of a config from its knobs alone, without TVM.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import gpu_spec
from orchestrator.kernel_plan import KernelPlan
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cuda import conv2d, dense
from plugins.cuda.common import Limits
from plugins.templates.common import samplable, schedule_module

GENERATOR = "cuda"
SCHEDULE_FN = "plugins.cuda.templates:apply_config"
PLAN_FN = "plugins.cuda.templates:kernel_plan"

_FAMILIES: dict[str, ModuleType] = {"dense": dense, "conv2d": conv2d}


def family(task: Task) -> ModuleType:
    """The template module for ``task`` (InvalidConfigError if there is none)."""
    try:
        return _FAMILIES[task.op]
    except KeyError:
        raise InvalidConfigError(f"no CUDA template for operator {task.op!r}") from None


@dataclass(frozen=True)
class CudaCheck:
    """Rejects configs a GPU cannot launch (threads, shared memory, registers) and, unless
    relaxed, blocks of fewer threads than a warp and duplicates (picklable)."""

    task: Task
    target: TargetInfo
    limits: Limits
    min_threads: int
    relaxed: bool = False

    def __call__(self, config: Config) -> str | None:
        try:
            p = kernel_plan(self.task, config, self.target)
        except InvalidConfigError as exc:
            return str(exc)
        reason = self.limits.violation(p)
        if reason or self.relaxed:
            return reason
        if p.threads_per_block < self.min_threads:
            return (f"{p.threads_per_block} threads per block (< {self.min_threads}) waste "
                    "warp lanes")
        return family(self.task).redundant(self.task, config)


class CudaTemplates:
    """Multi-level tiled CUDA templates (grid / thread block / register tile, shared-memory
    stages, register accumulation) for dense and conv2d (float32, NCHW)."""

    def supports(self, task: Task, target: TargetInfo) -> bool:
        """True for dense and conv2d on a CUDA target."""
        return target.kind == "cuda" and task.op in _FAMILIES and task.dtype == "float32"

    def generate(self, task: Task, target: TargetInfo) -> Space:
        """The template's knobs for ``task``, with a check against ``target``'s limits."""
        fam = family(task)
        limits = Limits.of(gpu_spec(target))
        knobs = tuple(fam.knobs(task, target))
        max_threads = max(_thread_counts(knobs))
        check = CudaCheck(task, target, limits, min(limits.warp_size, max_threads))
        space = Space(task=task, generator=GENERATOR, knobs=knobs, schedule_fn=SCHEDULE_FN,
                      check=check, plan_fn=PLAN_FN,
                      notes=(f"template cuda {fam.__name__.rsplit('.', 1)[-1]}",
                             f"limits of {limits.name}"))
        if not samplable(space, 2000):
            space = dataclasses.replace(space, check=dataclasses.replace(check, relaxed=True),
                                        notes=(*space.notes, "check relaxed"))
        return space


def _thread_counts(knobs: tuple[Any, ...]) -> list[int]:
    """Every threads-per-block count the split knobs can form (the thread factors' products)."""
    counts = [1]
    for knob in knobs:
        if getattr(knob, "parts", 0) == 3:
            factors = {c[1] for c in knob.choices}
            counts = sorted({a * b for a in counts for b in factors if a * b <= 4096})
    return counts


def kernel_plan(task: Task, config: Config, target: TargetInfo) -> KernelPlan:
    """The KernelPlan of ``config`` (InvalidConfigError when it does not fit the template)."""
    return family(task).plan(task, config, target)


def apply_config(task: Task, config: Config, target: TargetInfo) -> Any:
    """The scheduled ``tvm.IRModule`` of ``task`` under ``config`` for a CUDA ``target``.

    Raises InvalidConfigError (one line) when the config does not fit the template or a
    schedule primitive rejects it.
    """
    return schedule_module(family(task), task, config, target)
