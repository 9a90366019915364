"""Conformance tests a searcher or cost model can inherit (as Optuna ships optuna.testing).

Usage in a plugin's test suite::

    from orchestrator.testing import SearcherConformance

    class TestMySearcher(SearcherConformance):
        def create_searcher(self):
            return MySearcher()

pytest collects the inherited ``test_*`` methods. They use the synthetic toy space, so
they need no compiler and no hardware.
"""

from __future__ import annotations

import math
from typing import Any

from orchestrator.components import SearchContext
from orchestrator.target import TargetInfo
from orchestrator.testing.replay import ReplayMeasurer
from orchestrator.testing.toy import TOY_TASK, toy_results, toy_space

TOY_TARGET = TargetInfo(kind="llvm", tvm=(("kind", "llvm"), ("mcpu", "toy")), cores=1,
                        simd_bits=256, fma=True, l1d_bytes=32768, l2_bytes=1 << 20,
                        l3_bytes=8 << 20, clock_ghz=1.0, peak_gflops=32.0, arch="toy",
                        simulated=True)


def _context(seed: int = 0, prior: tuple = (), cost_model: Any = None) -> SearchContext:
    return SearchContext(TOY_TASK, TOY_TARGET, toy_space(), seed, cost_model, prior)


def _drive(searcher: Any, rounds: int, batch: int, seed: int = 0, prior: tuple = ()) -> list:
    space = toy_space()
    measurer = ReplayMeasurer(results=toy_results(space))
    searcher.start(_context(seed, prior))
    proposed = []
    for _ in range(rounds):
        configs = searcher.propose(batch)
        if not configs:
            break
        assert len(configs) <= batch, f"asked for {batch} configs, got {len(configs)}"
        proposed.extend(configs)
        searcher.tell(measurer.measure(space, TOY_TARGET, configs))
    return proposed


class SearcherConformance:
    """Inherit and implement ``create_searcher`` to check a searcher's contract."""

    rounds = 6
    batch = 8

    def create_searcher(self) -> Any:
        raise NotImplementedError

    def test_proposals_are_valid_configs_of_the_space(self) -> None:
        space = toy_space()
        for cfg in _drive(self.create_searcher(), self.rounds, self.batch):
            assert space.validate(cfg) is None, space.validate(cfg)

    def test_never_proposes_a_config_twice(self) -> None:
        keys = [c.key for c in _drive(self.create_searcher(), self.rounds, self.batch)]
        assert len(keys) == len(set(keys))
        assert keys, "the searcher proposed nothing"

    def test_same_seed_same_proposals(self) -> None:
        a = _drive(self.create_searcher(), 3, self.batch, seed=7)
        b = _drive(self.create_searcher(), 3, self.batch, seed=7)
        assert [c.key for c in a] == [c.key for c in b]

    def test_skips_configs_already_in_history(self) -> None:
        prior = tuple(toy_results(n=40, seed=1))
        known = {r.config.key for r in prior}
        proposed = _drive(self.create_searcher(), self.rounds, self.batch, prior=prior)
        assert not known & {c.key for c in proposed}

    def test_handles_failed_results(self) -> None:
        from orchestrator.result import MeasureResult, MeasureStatus

        searcher = self.create_searcher()
        searcher.start(_context())
        configs = searcher.propose(self.batch)
        searcher.tell([MeasureResult(c, MeasureStatus.BUILD_ERROR, error="x") for c in configs])
        assert isinstance(searcher.propose(self.batch), list)


class CostModelConformance:
    """Inherit and implement ``create_cost_model`` to check a cost model's contract."""

    def create_cost_model(self) -> Any:
        raise NotImplementedError

    def test_predicts_one_finite_score_per_config(self) -> None:
        model = self.create_cost_model()
        space = toy_space()
        model.fit(space, toy_results(space, n=64, seed=0))
        configs = [r.config for r in toy_results(space, n=32, seed=3)]
        scores = model.predict(space, configs)
        assert len(scores) == len(configs)
        assert all(math.isfinite(float(s)) for s in scores)

    def test_fit_accepts_failed_results_and_no_results(self) -> None:
        from orchestrator.result import MeasureResult, MeasureStatus

        model = self.create_cost_model()
        space = toy_space()
        model.fit(space, [])
        bad = [MeasureResult(r.config, MeasureStatus.RUN_ERROR, error="x")
               for r in toy_results(space, n=8)]
        model.fit(space, bad)
        assert len(model.predict(space, [r.config for r in bad])) == len(bad)
