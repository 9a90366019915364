"""The XGBoost cost model, the xgb and tl searchers, features and the history filter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchestrator.errors import OptionError
from orchestrator.testing import CostModelConformance, SearcherConformance, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from orchestrator.testing.replay import ReplayMeasurer
from plugins.tl.features import FeatureEncoder, IndexEncoder
from plugins.tl.history_filter import FeatureImportance, select_similar, weighted_similarity
from plugins.tl.model import XGBCostModel
from plugins.tl.searcher import TransferSearcher, XGBSearcher
from tests.plugins.gga.fake_history import FAR, NEAR, context, dense, toy_history

FAST = {"plan_size": 16, "sa_chains": 16, "sa_iters": 30, "rounds": 10}


class TestXGBCostModel(CostModelConformance):
    def create_cost_model(self):
        return XGBCostModel(rounds=30)


class TestXGBSearcher(SearcherConformance):
    def create_searcher(self):
        return XGBSearcher(**FAST)


class TestTLSearcher(SearcherConformance):
    def create_searcher(self):
        return TransferSearcher(**FAST)


def test_cost_model_ranks_the_toy_landscape():
    space = toy_space()
    model = XGBCostModel(rounds=50)
    train = toy_results(space, n=300, seed=0)
    model.fit(space, train)
    test = toy_results(space, n=200, seed=9)
    scores = model.predict(space, [r.config for r in test])
    corr = np.corrcoef(scores, [-r.latency for r in test])[0, 1]
    assert corr > 0.5


def test_features_of_knobs_and_task_specification():
    space = toy_space()
    enc = FeatureEncoder.for_space(space, with_task=True)
    cfg = toy_results(space, n=1)[0].config
    row = enc.encode(cfg, space.task)
    assert len(row) == enc.width == len(enc.names)
    m = cfg["tile_m"]
    assert row[:4] == [math.log2(m[0]), math.log2(m[1]), math.log2(m[2]), math.log2(m[1] * m[2])]
    assert enc.names[-1] == "task.flops" and row[-4] == math.log2(65)
    other = dense(48, 64, 96)
    assert enc.encode(cfg, other)[-4] == math.log2(49)
    fast = IndexEncoder.of(enc, space.task).matrix(np.asarray([space.indices(cfg)]))
    assert np.allclose(fast[0], row)


def test_weighted_similarity_ignores_features_without_importance():
    refs = np.asarray([[0.0, 0.0]])
    records = np.asarray([[0.0, 5.0], [1.0, 0.0], [3.0, 0.0]])
    sim = weighted_similarity(records, refs, np.asarray([1.0, 0.0]))
    assert sim[0] == 1.0 and sim[0] > sim[1] > sim[2]
    assert list(select_similar(sim, keep=0.5, min_keep=1)) == [0, 1]
    assert list(select_similar(sim, keep=0.1, min_keep=10)) == [0, 1, 2]


def test_before_measuring_only_the_task_specification_is_compared():
    # feature 0: a knob (unknown for the input yet), feature 1: the task specification
    refs = np.asarray([[np.nan, 2.0]])
    records = np.asarray([[9.0, 2.0], [0.0, 3.0], [np.nan, 5.0]])
    sim = weighted_similarity(records, refs, np.asarray([0.9, 0.0]))  # spec never split yet
    assert sim[0] == 1.0 and sim[0] > sim[1] > sim[2]


def test_importance_is_a_moving_average_of_split_counts():
    imp = FeatureImportance(decay=0.5)
    assert np.allclose(imp.weights(2), [0.5, 0.5])
    assert np.allclose(imp.update(np.asarray([3.0, 1.0])), [0.75, 0.25])
    assert np.allclose(imp.update(np.asarray([0.0, 4.0])), [0.375, 0.625])


def test_tl_learns_from_history_before_measuring_and_xgb_does_not():
    history = toy_history([*NEAR, *FAR])
    tl, xgb = TransferSearcher(**FAST), XGBSearcher(**FAST)
    tl.start(context(history))
    xgb.start(context(history))
    assert tl.fits == 1 and tl.plan and xgb.fits == 0 and not xgb.plan


def test_tl_filter_keeps_the_most_similar_share_of_history_and_can_be_disabled():
    history = toy_history([*NEAR, *FAR], n=200)
    with_filter = TransferSearcher(keep=0.25, min_keep=64, **FAST)
    with_filter.start(context(history))
    total = len(with_filter.hist_x)
    assert total > 400
    assert len(with_filter.hist_selected) == round(0.25 * total)
    assert with_filter.importance.values is not None
    assert math.isclose(with_filter.importance.values.sum(), 1.0)
    without = TransferSearcher(filter="false", **FAST)
    without.start(context(history))
    assert len(without.hist_selected) == total and without.importance.values is None


def test_tl_with_history_finds_good_configs_sooner_than_xgb_on_the_toy_space():
    space = toy_space()
    history = toy_history(NEAR, n=200)
    measurer = ReplayMeasurer(results=toy_results(space))
    best = {}
    for name, searcher in (("tl", TransferSearcher(**FAST)), ("xgb", XGBSearcher(**FAST))):
        searcher.start(context(history))
        lat = []
        for _ in range(2):
            res = measurer.measure(space, TOY_TARGET, searcher.propose(8))
            searcher.tell(res)
            lat += [r.latency for r in res]
        best[name] = min(lat)
    assert best["tl"] <= best["xgb"]


@pytest.mark.parametrize("make,options,message", [
    (XGBSearcher, {"sa_iters": 0}, "^searcher 'xgb': option sa_iters must be >= 1, got 0$"),
    (XGBSearcher, {"epsilon": 2}, r"^searcher 'xgb': option epsilon must be within \[0.0, 1.0\]"),
    (TransferSearcher, {"plan_size": 0}, "^searcher 'tl': option plan_size must be >= 1"),
    (TransferSearcher, {"references": 0}, "^searcher 'tl': option references must be >= 1"),
    (TransferSearcher, {"importance_decay": 1.5},
     "^searcher 'tl': option importance_decay must be within"),
    (TransferSearcher, {"keep": 0},
     r"^searcher 'tl': option keep must be within \(0.0, 1.0\], got 0.0$"),
    (TransferSearcher, {"keep": "1.5"},
     r"^searcher 'tl': option keep must be within \(0.0, 1.0\], got 1.5$"),
    (XGBSearcher, {"optimizer": "grid"},
     "^searcher 'xgb': option optimizer must be one of sa, pool, got 'grid'$"),
    (TransferSearcher, {"pool": 8}, "^searcher 'tl': unknown option 'pool'; known: epsilon, "
                                    "filter, importance_decay, keep, max_depth, min_keep, "
                                    "optimizer, plan_size, pool_size, references, rounds, "
                                    "sa_chains, sa_early_stop, sa_iters$"),
    (TransferSearcher, {"rounds": "ten"}, "^searcher 'tl': option rounds takes a whole number"),
    (XGBCostModel, {"max_depth": 0}, "^cost model 'xgb': option max_depth must be >= 1, got 0$"),
])
def test_bad_options_are_one_line_errors_naming_them(make, options, message):
    with pytest.raises(OptionError, match=message):
        make(**options)


def test_tl_passes_xgb_options_given_as_text_on_converted():
    s = TransferSearcher(plan_size="16", epsilon="0.1")
    assert s.plan_size == 16 and s.epsilon == 0.1
