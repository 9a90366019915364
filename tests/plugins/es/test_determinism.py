"""Seeds select the proposals, and DEAP's use of ``random`` does not leak in or out."""

from __future__ import annotations

import random

import pytest

from tests.plugins.es.helpers import SEARCHERS, context, run, toy_measurer
from orchestrator.testing import toy_space
from orchestrator.testing.conformance import TOY_TARGET


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_other_seeds_give_other_proposals(name: str) -> None:
    a = [r.config.key for r in run(SEARCHERS[name](), 16, seed=1)]
    b = [r.config.key for r in run(SEARCHERS[name](), 16, seed=2)]
    assert a != b


@pytest.mark.parametrize("name", ["deap-ga", "deap-es"])
def test_deap_searchers_leave_the_global_random_state_alone(name: str) -> None:
    random.seed(123)
    before = random.getstate()
    run(SEARCHERS[name](), 32, seed=4)
    assert random.getstate() == before


@pytest.mark.parametrize("name", ["deap-ga", "deap-es"])
def test_interleaved_searchers_do_not_disturb_each_other(name: str) -> None:
    alone = [r.config.key for r in run(SEARCHERS[name](), 32, seed=4)]
    space, measurer = toy_space(), toy_measurer()
    first, second = SEARCHERS[name](), SEARCHERS[name]()
    first.start(context(4))
    second.start(context(9))
    together = []
    while len(together) < 32:
        for searcher in (first, second):
            configs = searcher.propose(8)
            results = measurer.measure(space, TOY_TARGET, configs)
            searcher.tell(results)
            random.random()  # the caller draws from the module too
            if searcher is first:
                together.extend(r.config.key for r in results)
    assert together[:len(alone)] == alone
