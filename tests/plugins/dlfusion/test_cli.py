"""plan_command: rich output, JSON, comparison and one-line errors."""

from __future__ import annotations

import json

import pytest

from orchestrator.errors import OrchestratorError
from plugins.dlfusion.cli import make_report, plan_command
from plugins.dlfusion.strategies import STRATEGY_NAMES, StrategyError


def test_plan_prints_blocks_fps_and_speedup(capsys):
    assert plan_command("alexnet", None, "mlu100", "dlfusion", False, False) == 0
    out = capsys.readouterr().out
    assert "SIMULATED" in out and "FPS" in out and "over no optimization" in out


def test_compare_lists_every_strategy(capsys):
    assert plan_command("alexnet", None, "mlu100", "dlfusion", True, False) == 0
    out = capsys.readouterr().out
    for name in STRATEGY_NAMES:
        assert name in out


def test_json_output(capsys):
    assert plan_command("resnet18", None, "mlu100", "optimal-dp", False, True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["simulated"] is True and data["model"] == "resnet18"
    res = data["results"][0]
    assert res["plan"]["strategy"] == "optimal-dp" and res["speedup"] > 1
    assert res["plan"]["blocks"][-1]["stop"] == data["layers"]


def test_report_to_dict_round_trips_through_json():
    report = make_report("mobilenet", None, compare=True)
    assert len(report.results) == len(STRATEGY_NAMES)
    assert json.loads(json.dumps(report.to_dict()))["results"][0]["speedup"] == 1.0


@pytest.mark.parametrize("kwargs, err", [
    ({"model": None, "onnx": None}, OrchestratorError),
    ({"model": "resnet18", "strategy": "magic"}, StrategyError),
    ({"model": "lenet"}, OrchestratorError),
    ({"model": "resnet18", "accelerator": "tpu"}, OrchestratorError),
])
def test_errors_are_one_line(kwargs, err):
    args = {"model": None, "onnx": None, "accelerator": "mlu100", "strategy": "dlfusion",
            "compare": False, "json_out": False} | kwargs
    with pytest.raises(err) as exc:
        plan_command(**args)
    assert "\n" not in str(exc.value)


def test_a_plugin_planner_is_used_through_the_planner_hook():
    """orchestrator_add_planners: a registered plugin's planner plans and is compared."""
    from orchestrator.hookspecs import hookimpl
    from orchestrator.manager import load_plugins
    from plugins.dlfusion.cli import make_report
    from plugins.dlfusion.plan import Block, Plan

    class HalfAndHalf:
        def plan(self, network, accelerator):
            mid = len(network) // 2
            return Plan("half-and-half", network.name,
                        (Block(0, mid, 8), Block(mid, len(network), 16)))

    class MyPlugin:
        @hookimpl
        def orchestrator_add_planners(self, registry):
            registry.add("half-and-half", HalfAndHalf)

    plugins = load_plugins(extra=[("mine", MyPlugin())])
    registry = plugins.registry("planner")
    assert {"dlfusion", "oracle", "optimal-dp", "half-and-half"} <= set(registry.names())
    one = make_report("alexnet", None, strategy="half-and-half", planners=registry)
    assert [b.block.mp for b in one.results[0].blocks] == [8, 16]
    every = make_report("alexnet", None, compare=True, planners=registry)
    names = [r.plan.strategy for r in every.results]
    assert names[-1] == "half-and-half" and "dlfusion" in names
    # the exact DP is never worse than any plan, the plugin's included
    dp = next(r for r in every.results if r.plan.strategy == "optimal-dp")
    assert all(dp.latency_s <= r.latency_s * (1 + 1e-9) for r in every.results)
