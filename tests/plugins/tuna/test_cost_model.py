"""The ``tuna`` cost model: the conformance contract and a ranking it must get right."""

from __future__ import annotations

import dataclasses
import math

import pytest

from orchestrator.testing import CostModelConformance
from orchestrator.testing.conformance import TOY_TARGET
from plugins.tuna.cost_model import FAILED_SCORE, TunaCostModel
from tests.plugins.tuna.helpers import ZNVER4, config, dense_task, space


class TestTunaConformance(CostModelConformance):
    @pytest.fixture(autouse=True)
    def _cache(self, tmp_path):
        self.cache_dir = tmp_path / "cache"

    def create_cost_model(self) -> TunaCostModel:
        # The toy space cannot be built: every config scores the finite failure score.
        return TunaCostModel(workers=0, cache_dir=self.cache_dir, target=TOY_TARGET)


def test_failed_builds_score_below_everything(tmp_path):
    model = TunaCostModel(workers=0, cache_dir=tmp_path, target=ZNVER4)
    sp = space(dense_task(32, 32, 32))
    scores = model.predict(sp, [config(), config(mode="invalid"), config(mode="error")])
    assert math.isfinite(scores[0]) and scores[0] < 0  # minus predicted seconds
    assert scores[1] == scores[2] == FAILED_SCORE < scores[0]


def test_parallel_beats_serial_on_two_cores(tmp_path):
    two = dataclasses.replace(ZNVER4, cores=2)
    model = TunaCostModel(workers=0, cache_dir=tmp_path, target=two)
    serial, parallel = model.predict(space(), [config(par="no"), config(par="yes")])
    assert parallel > serial
