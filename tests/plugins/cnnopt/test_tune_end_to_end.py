"""The tuning loop with the cnnopt space, pruner and hybrid cost model on cuda:h100,
measured by a SYNTHETIC latency function (no GPU here)."""

from __future__ import annotations

from orchestrator.gpus import GPUS
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import tune
from orchestrator.result import MeasureResult, MeasureStatus
from tests.plugins.cnnopt.helpers import H100, cnnopt_plugins, layer, synthetic_seconds


class SyntheticGpu:
    """A measurer answering with the SYNTHETIC latency of helpers.synthetic_seconds."""

    name = "synthetic"

    def __init__(self) -> None:
        self.seen = 0

    def measure(self, space, target, configs):
        self.seen += len(configs)
        return [MeasureResult(c, MeasureStatus.OK,
                              (synthetic_seconds(space, c, GPUS[target.arch]),),
                              measurer=self.name) for c in configs]

    def close(self) -> None:
        pass


class SyntheticPlugin:
    def __init__(self) -> None:
        self.measurer = SyntheticGpu()

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        registry.add("synthetic-gpu", lambda: self.measurer)


def test_synthetic_latency_tune_with_cnnopt_space_pruner_and_hybrid_model(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    extra = SyntheticPlugin()
    p = cnnopt_plugins(("synthetic", extra))
    summary = tune(layer("r18_l4"), target=H100, db=str(tmp_path / "h.db"), plugins=p,
                   space_generator="cnnopt", pruners=("cnnopt-capacity",),
                   cost_model="cnnopt-hybrid", searcher="tuna-es", measurer="synthetic-gpu",
                   trials=24, batch_size=8, seed=0)
    assert summary.best is not None and summary.measured == extra.measurer.seen == 24
    assert summary.run.space.candidates is not None
    assert summary.run.space.size == 232
