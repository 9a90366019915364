"""The ``cpu`` space generator: dispatches each operator to its template module.

``apply_config`` is what build workers call (by the name in ``Space.schedule_fn``): it
rebuilds the PrimFunc from the frozen task, applies the config and returns the module.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.options import one_of
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.templates import cpu_conv2d, cpu_depthwise, cpu_matmul
from plugins.templates.common import samplable, schedule_module

SCHEDULE_FN = "plugins.templates.cpu:apply_config"
GENERATOR = "cpu"

_FAMILIES: dict[str, ModuleType] = {
    "dense": cpu_matmul,
    "batch_matmul": cpu_matmul,
    "conv2d": cpu_conv2d,
    "depthwise_conv2d": cpu_depthwise,
}


def family(task: Task) -> ModuleType:
    """The template module for ``task`` (InvalidConfigError if there is none)."""
    try:
        return _FAMILIES[task.op]
    except KeyError:
        raise InvalidConfigError(f"no CPU template for operator {task.op!r}") from None


CHECKS = ("full", "relaxed", "off")


class CpuTemplates:
    """Tiled, vectorized, parallel CPU templates for dense, batch_matmul, conv2d and
    depthwise_conv2d (float32).

    ``check`` decides which configs the space offers: ``full`` (default) rejects register
    tiles with poor vector use or reuse and too little parallelism; ``relaxed`` keeps only
    the hard limit (register tiles that fit the registers), so the space holds poor configs
    as AutoTVM's templates do and a search must learn to avoid them; ``off`` offers every
    knob combination (spilling tiles build slowly).
    """

    def __init__(self, check: str = "full") -> None:
        self.check = one_of("space generator 'cpu'", "check", check, CHECKS)

    def supports(self, task: Task, target: TargetInfo) -> bool:
        """True for the four operators on an LLVM (CPU) target."""
        return target.kind == "llvm" and task.op in _FAMILIES and task.dtype == "float32"

    def generate(self, task: Task, target: TargetInfo) -> Space:
        """The template's knobs for ``task`` with the check ``check`` names."""
        fam = family(task)
        knobs = tuple(fam.knobs(task, target))
        check: Any = fam.make_check(task, target, list(knobs))
        notes: tuple[str, ...] = (f"template {fam.__name__.rsplit('.', 1)[-1]}",)
        # The checks from strictest to none; ``check`` picks where to start.
        chain: list[tuple[Any, str]] = [(check, ""),
                                        (dataclasses.replace(check, relaxed=True), "check relaxed"),
                                        (None, "check dropped")]
        start = CHECKS.index(self.check)
        check, note = chain[start]
        if note:  # asked for, not a fallback: the note says so (the run keys on the option)
            notes += (f"{note} (check={self.check})",)
        fallbacks = chain[start + 1:]
        space = Space(task=task, generator=GENERATOR, knobs=knobs, schedule_fn=SCHEDULE_FN,
                      check=check, notes=notes)
        # Thresholds are lowered per axis to what the shape allows, but together they
        # can still exclude everything on odd shapes: then keep only the hard limit,
        # and as a last resort no check at all.
        for fallback, note in fallbacks:
            if samplable(space, 3000):
                break
            space = dataclasses.replace(space, check=fallback, notes=(*space.notes, note))
        return space


def apply_config(task: Task, config: Config, target: TargetInfo) -> Any:
    """The scheduled ``tvm.IRModule`` of ``task`` under ``config`` for ``target``.

    Raises InvalidConfigError (one line) when the config does not fit the template or a
    schedule primitive rejects it.
    """
    return schedule_module(family(task), task, config, target)
