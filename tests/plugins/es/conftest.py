"""The conformance tests rebuild the toy results and the replay table (most of a second)
for every test; memoise both here so that the suite stays fast."""

from __future__ import annotations

import pytest

from orchestrator.testing import ReplayMeasurer, conformance, toy
from tests.plugins.es.helpers import cached_toy_results, toy_measurer


@pytest.fixture(autouse=True)
def _fast_toy_results(monkeypatch: pytest.MonkeyPatch) -> None:
    def toy_results(space=None, n=None, seed=0):  # noqa: ANN001, ANN202
        if space is not None and space != toy.toy_space():
            return toy.toy_results(space, n, seed)
        return cached_toy_results(n, seed)  # shared: the conformance tests only read it

    def replay(db=None, results=()):  # noqa: ANN001, ANN202
        if db is None and results is cached_toy_results():
            return toy_measurer()
        return ReplayMeasurer(db, results)

    monkeypatch.setattr(conformance, "toy_results", toy_results)
    monkeypatch.setattr(conformance, "ReplayMeasurer", replay)
