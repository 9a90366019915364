"""The three cost models, fitted and scored on a SYNTHETIC latency function (no GPU)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from orchestrator.errors import OptionError
from orchestrator.gpus import GPUS
from plugins.cnnopt.capacity import CapacityPruner
from plugins.cnnopt.cost_models import AnalyticalCostModel, RegressionCostModel
from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.metrics import top_n_lop
from plugins.cnnopt.regression import TrainedModel, load, user_path
from plugins.cnnopt.training import concat, task_samples, train
from tests.plugins.cnnopt.helpers import (
    H100, T4, cnnopt_plugins, layer, synthetic_results, synthetic_seconds)

GPU = GPUS["h100"]


@pytest.fixture(autouse=True)
def _no_user_models(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ORCHESTRATOR_CNNOPT_MODEL", raising=False)


def _pruned(name, target=H100):
    return CapacityPruner(rank=False).prune(CnnoptSpaces().generate(layer(name), target),
                                            target)


def _sample(space, n, seed=0):
    configs = list(space.candidates)
    random.Random(seed).shuffle(configs)
    return configs[:n]


@pytest.fixture(scope="module")
def synthetic_training():
    """SYNTHETIC measurements of three training layers (not the test layer r18_l4)."""
    parts = {"ml": [], "hybrid": []}
    for name in ("r18_l4a", "r18_l4ds", "r18_l3"):
        space = _pruned(name)
        results = synthetic_results(space, _sample(space, 250), GPU)
        for kind in parts:
            parts[kind].append(task_samples(space, results, kind, GPU))
    return {kind: concat(p, kind) for kind, p in parts.items()}


def test_synthetic_latency_hybrid_model_picks_near_best_top_30(synthetic_training, tmp_path):
    space = _pruned("r18_l4")
    configs = list(space.candidates)
    truth = [synthetic_seconds(space, c, GPU) for c in configs]
    lops = {}
    for kind in ("ml", "hybrid"):
        model = train(synthetic_training[kind], kind, "h100")
        path = model.save(tmp_path / f"{kind}.json")
        cm = RegressionCostModel(kind, target="cuda:h100", model=path)
        pred = cm.seconds(space, configs)
        assert np.all(np.isfinite(pred))
        lops[kind] = top_n_lop(pred, truth, 30)
    analytical = AnalyticalCostModel(target="cuda:h100").seconds(space, configs)
    lops["analytical"] = top_n_lop(analytical, truth, 30)
    assert lops["hybrid"] <= 0.05, lops
    assert lops["hybrid"] <= lops["ml"] + 1e-9, lops


def test_model_file_round_trip_and_user_dir(synthetic_training, tmp_path):
    model = train(synthetic_training["hybrid"], "hybrid", "h100", seed=3)
    path = model.save(user_path("h100", "hybrid"))
    assert path.is_relative_to(tmp_path / "config")
    again = load("h100", "hybrid")
    assert again is not None and again.info["samples"] == len(synthetic_training["hybrid"])
    x = synthetic_training["hybrid"].x[:20]
    np.testing.assert_allclose(again.forest.predict(x), model.forest.predict(x), rtol=1e-6)
    assert load("t4", "hybrid") is None
    with pytest.raises(CnnoptError, match="not cnnopt-ml"):
        load("h100", "ml", path)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    with pytest.raises(CnnoptError, match="not a CNNOpt model"):
        TrainedModel.read(bad)


def test_synthetic_latency_online_fit_without_a_trained_model():
    space = _pruned("r18_l4ds")
    configs = _sample(space, 120, seed=1)
    model = RegressionCostModel("hybrid")  # GPU from the space's notes
    analytical = AnalyticalCostModel().predict(space, configs)
    assert model.predict(space, configs) == analytical  # nothing learned yet
    model.fit(space, synthetic_results(space, configs[:60], GPU))
    scores = model.predict(space, configs[60:])
    truth = [synthetic_seconds(space, c, GPU) for c in configs[60:]]
    corr = np.corrcoef(np.argsort(np.argsort(scores)), np.argsort(np.argsort(truth)))[0, 1]
    assert corr < -0.6  # higher score = lower latency


def test_analytical_model_reads_the_gpu_from_the_space():
    space_t4 = _pruned("r18_l4", T4)
    configs = list(space_t4.candidates[:10])
    on_t4 = AnalyticalCostModel().predict(space_t4, configs)
    named = AnalyticalCostModel(target="cuda:t4").predict(space_t4, configs)
    on_h100 = AnalyticalCostModel(target="cuda:h100").predict(space_t4, configs)
    assert on_t4 == named != on_h100
    assert all(s < 0 for s in on_t4)


def test_plugin_registers_every_component():
    p = cnnopt_plugins()
    assert p.create("space_generator", "cnnopt").supports(layer("r18_l2"), H100)
    assert not p.create("space_generator", "cnnopt").supports(layer("r18_l2"),
                                                             _host_like())
    space = p.create("space_generator", "cnnopt").generate(layer("r18_l4"), H100)
    default = p.create("pruner", "cnnopt-capacity").prune(space, H100)
    paper_only = p.create("pruner", "cnnopt-capacity-only").prune(space, H100)
    assert (default.size, paper_only.size) == (232, 3426)
    for name in ("cnnopt-analytical", "cnnopt-ml", "cnnopt-hybrid"):
        assert p.create("cost_model", name).predict is not None


def _host_like():
    from dataclasses import replace

    return replace(H100, kind="llvm")


@pytest.mark.parametrize("options, message", [
    ({"min_online": 0}, r"^cost model 'cnnopt-hybrid': option min_online must be >= 1, got 0$"),
    ({"min_online": 2.5}, "option min_online takes a whole number, got 2.5$"),
    ({"seed": -3}, r"^cost model 'cnnopt-hybrid': option seed must be >= 0, got -3$"),
])
def test_numeric_options_are_checked_not_truncated(options, message):
    with pytest.raises(OptionError, match=message):
        RegressionCostModel("hybrid", **options)
    assert RegressionCostModel("ml", min_online="4").min_online == 4
