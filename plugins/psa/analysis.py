"""PSA latencies of a space's configs, read from the space's kernel plans."""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterable
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import GpuSpec, gpu_spec
from orchestrator.kernel_plan import KernelPlan
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.psa.latency import l_total
from plugins.psa.penalties import PsaError

_PLAN_FUNCTIONS: dict[str, Callable[..., KernelPlan]] = {}


def plan_function(space: Space, who: str = "psa") -> Callable[..., KernelPlan]:
    """The space's ``plan_fn`` imported; PsaError when the space has none."""
    name = space.plan_fn
    if not name:
        raise PsaError(f"{who} needs a GPU space with a kernel plan (Space.plan_fn); space "
                       f"generator {space.generator!r} gives none for {space.task.op}")
    fn = _PLAN_FUNCTIONS.get(name)
    if fn is None:
        module, _, attr = name.partition(":")
        try:
            fn = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise PsaError(f"{who}: cannot import the space's plan function {name!r}: "
                           f"{exc}") from None
        _PLAN_FUNCTIONS[name] = fn
    return fn


class Analyzer:
    """Estimates L_total for configs of one space on one CUDA target."""

    def __init__(self, space: Space, target: TargetInfo, who: str = "psa") -> None:
        self.space, self.target = space, target
        self.plan_fn = plan_function(space, who)
        self.gpu: GpuSpec = gpu_spec(target)

    def plan(self, config: Config) -> KernelPlan | None:
        """The config's kernel plan, or None when the template rejects the config."""
        try:
            return self.plan_fn(self.space.task, config, self.target)
        except InvalidConfigError:
            return None

    def latency(self, config: Config) -> float:
        """Estimated seconds (equation 4); inf when the config cannot launch."""
        plan = self.plan(config)
        return math.inf if plan is None else l_total(plan, self.gpu)

    def latencies(self, configs: Iterable[Config]) -> list[float]:
        """Estimated seconds for each config, in order."""
        return [self.latency(c) for c in configs]


def describe(target: Any) -> str:
    """A short name of a target for notes (``cuda:h100``)."""
    arch = getattr(target, "arch", "") or ""
    return f"{target.kind}:{arch}" if arch else str(getattr(target, "kind", target))
