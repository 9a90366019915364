"""Tasks, targets and a SYNTHETIC latency function shared by the CNNOpt tests."""

from __future__ import annotations

import math

from orchestrator.gpus import GPUS, GpuSpec
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.suite import read_suite, select
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cnnopt.analytical import analyze
from plugins.cnnopt.schema import dims_of, tiles_of

H100: TargetInfo = GPUS["h100"].target()
T4: TargetInfo = GPUS["t4"].target()
R18 = [t for t in read_suite() if (t.name or "").startswith("r18_")]


def layer(name: str) -> Task:
    return select(read_suite(), [name])[0]


def synthetic_seconds(space: Space, config: Config, gpu: GpuSpec) -> float:
    """A SYNTHETIC latency (no GPU here): the analytical estimate bent by effects the
    analytical model ignores (S kernel slower, large register tiles slower)."""
    dims = dims_of(space.task)
    t = tiles_of(dims, config)
    est = analyze(dims, t, gpu).est_seconds
    penalty = (1.4 if t.kernel == "s" else 1.0) * (1.0 + 0.01 * t.outputs_per_thread)
    return est * penalty * (1.0 + 0.2 * math.sin(t.rk + 3 * t.rx))


def synthetic_results(space: Space, configs: list[Config], gpu: GpuSpec,
                      measurer: str = "cuda") -> list[MeasureResult]:
    """SYNTHETIC ok results of ``configs`` (as if measured by ``measurer``)."""
    return [MeasureResult(c, MeasureStatus.OK, (synthetic_seconds(space, c, gpu),),
                          measurer=measurer) for c in configs]


def cnnopt_plugins(*extra: tuple[str, object]):
    """The plugin set with ``cnnopt`` (added by hand until its entry point is installed)."""
    from importlib.metadata import entry_points

    import plugins.cnnopt
    from orchestrator.manager import load_plugins

    installed = any(ep.name == "cnnopt" for ep in entry_points(group="orchestrator"))
    own = [] if installed else [("cnnopt", plugins.cnnopt)]
    return load_plugins(extra=[*own, *extra])
