"""Fixtures shared by the tests of the gga scripts."""

from __future__ import annotations

import pytest

from tests.plugins.gga.test_reproduce_script import toy_experiment
from tests.scripts_under_test import load_script


@pytest.fixture(scope="module")
def turns(tmp_path_factory):
    """Finished turns of one layer, with confirmed bests: (experiment, layer result)."""
    tmp_path = tmp_path_factory.mktemp("turns")
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=24,
                         budgets={"xgb": 24, "gga": 16, "ga": 16}, pruned=False, confirm=1)
    rg.run_all(exp, history_only=True)
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    return exp, gt.layer_turns(exp, job.task)
