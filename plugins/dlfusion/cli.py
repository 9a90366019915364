"""``orchestrator plan``: DLFusion plans for a model on the SIMULATED accelerator.

:func:`plan_command` prints; :func:`make_report` returns the same data (frozen, with
``to_dict()``) for callers that store plans. Errors are :class:`OrchestratorError`
subclasses with a one-line message; the orchestrator's entry point prints them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from orchestrator.errors import OrchestratorError
from orchestrator.registry import ComponentRegistry
from plugins.dlfusion.accelerator import SimulatedAccelerator
from plugins.dlfusion.layers import Network
from plugins.dlfusion.models import builtin_model
from plugins.dlfusion.plan import PlanResult
from plugins.dlfusion.strategies import (
    STRATEGY_NAMES, Strategy, compare_strategies, make_plan, strategy_info,
)


@dataclass(frozen=True)
class PlanReport:
    """Plans of one model: ``results[0]`` is the requested strategy (or all, with compare)."""

    network: Network
    accelerator: SimulatedAccelerator
    baseline: PlanResult
    results: tuple[PlanResult, ...]

    def speedup(self, result: PlanResult) -> float:
        return self.baseline.latency_s / result.latency_s

    def to_dict(self) -> dict[str, object]:
        return {
            "model": self.network.name, "model_source": self.network.source,
            "layers": len(self.network), "total_ops": self.network.total_ops,
            "accelerator": self.accelerator.params.to_dict(), "simulated": True,
            "baseline_fps": self.baseline.fps,
            "results": [{**r.to_dict(), "speedup": self.speedup(r)} for r in self.results],
        }


def load_network(model: str | None, onnx: Path | None) -> Network:
    if (model is None) == (onnx is None):
        raise OrchestratorError("give exactly one of --model NAME or --onnx FILE")
    if onnx is not None:
        from plugins.dlfusion.onnx_import import load_onnx
        return load_onnx(onnx)
    assert model is not None
    return builtin_model(model)


def make_report(model: str | None, onnx: Path | None, accelerator: str = "mlu100",
                strategy: str = "dlfusion", compare: bool = False,
                planners: ComponentRegistry | None = None) -> PlanReport:
    """Plan ``model`` (built-in name) or ``onnx`` (file) with one strategy or all of them.

    ``planners`` (the plugin manager's ``planner`` registry) adds planners of other
    plugins to the built-in strategies; without it only the built-in ones are known.
    """
    extra = [n for n in (planners.names() if planners is not None else [])
             if n not in STRATEGY_NAMES]
    if strategy not in extra:
        strategy_info(strategy)
    net = load_network(model, onnx)
    acc = SimulatedAccelerator.load(accelerator)

    def run(name: str) -> PlanResult:
        plan = (planners.create(name).plan(net, acc) if name in extra and planners is not None
                else make_plan(name, net, acc))
        return acc.measure_plan(net, plan)

    if compare:
        results = compare_strategies(net, acc) + tuple(run(n) for n in extra)
        baseline = results[STRATEGY_NAMES.index("none")]
    else:
        baseline = run("none")
        results = (baseline if strategy == "none" else run(strategy),)
    return PlanReport(net, acc, baseline, tuple(results))


def describe(name: str) -> Strategy:
    """Table III's description of a strategy, or a generic one for a plugin's planner."""
    try:
        return strategy_info(name)
    except OrchestratorError:
        return Strategy(name, "-", name, "planner from a plugin")


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def _layer_range(net: Network, start: int, stop: int) -> str:
    first, last = net.layers[start].name, net.layers[stop - 1].name
    return f"{start}-{stop - 1} ({first} .. {last})" if stop - start > 1 else f"{start} ({first})"


def print_report(report: PlanReport, console: Console | None = None) -> None:
    con = console or Console()
    net, acc = report.network, report.accelerator
    con.print(f"[bold]{net.name}[/bold]: {len(net)} layers, {net.total_ops / 1e9:.2f} GOP "
              f"(eq. 1/2), on [bold]{acc.name}[/bold] — SIMULATED accelerator model, "
              "not a hardware measurement")
    if len(report.results) > 1:
        table = Table(title="Strategies (Table III), SIMULATED FPS")
        for col in ("#", "strategy", "blocks", "MPs", "latency ms", "FPS", "speedup"):
            table.add_column(col, justify="right" if col not in ("strategy", "MPs") else "left")
        for r in report.results:
            info = describe(r.plan.strategy)
            mps = sorted({b.mp for b in r.plan.blocks})
            table.add_row(info.number, f"{info.name} ({info.label})", str(len(r.plan.blocks)),
                          ",".join(map(str, mps)), _ms(r.latency_s), f"{r.fps:.1f}",
                          f"{report.speedup(r):.2f}x")
        con.print(table)
        return
    r = report.results[0]
    info = describe(r.plan.strategy)
    table = Table(title=f"{info.name} ({info.label}): {info.description}")
    for col in ("block", "layers", "MP", "mode", "ops/core M", "eff", "redund.",
                "latency ms"):
        table.add_column(col, justify="left" if col in ("layers", "mode") else "right")
    for k, b in enumerate(r.blocks):
        table.add_row(str(k), _layer_range(net, b.block.start, b.block.stop), str(b.block.mp),
                      b.mode, f"{b.ops_per_core / 1e6:.1f}", f"{b.efficiency:.2f}",
                      f"{b.redundancy:.2f}", _ms(b.latency_s))
    con.print(table)
    con.print(f"latency {_ms(r.latency_s)} ms, [bold]{r.fps:.1f} FPS[/bold] (simulated), "
              f"{report.speedup(r):.2f}x over no optimization ({report.baseline.fps:.1f} FPS)")


def plan_command(model: str | None, onnx: Path | None, accelerator: str, strategy: str,
                 compare: bool, json_out: bool) -> int:
    """Print the plan (or, with ``compare``, every strategy); returns the exit code."""
    from orchestrator.manager import load_plugins

    report = make_report(model, onnx, accelerator, strategy, compare,
                         load_plugins().registry("planner"))
    if json_out:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        print_report(report)
    return 0
