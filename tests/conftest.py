"""Shared fixtures: a temporary history database and a plugin set on the toy space."""

from __future__ import annotations

import dataclasses
import os

# TVM reads this when it is first imported; measure with every core, as the CLI does.
os.environ.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))

import pytest

from history.store import HistoryStore
from orchestrator.hookspecs import hookimpl
from orchestrator.manager import Plugins, load_plugins
from orchestrator.testing import ReplayMeasurer, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET


class ToyPlugin:
    """Contributes the synthetic toy space (of one template version) and a replay measurer
    over its landscape."""

    def __init__(self, template_version: int = 1) -> None:
        self.measurer = ReplayMeasurer(results=toy_results())
        self.template_version = template_version

    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        version = self.template_version

        class ToyGenerator:
            def supports(self, task, target):
                return target.arch == "toy"

            def generate(self, task, target):
                return dataclasses.replace(toy_space(task), template_version=version)

        registry.add("toy", ToyGenerator)

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        registry.add("toy-replay", lambda: self.measurer)


@pytest.fixture
def db(tmp_path) -> HistoryStore:
    store = HistoryStore.open(tmp_path / "history.db")
    yield store
    store.close()


@pytest.fixture
def toy_plugin() -> ToyPlugin:
    return ToyPlugin()


@pytest.fixture
def toy_plugins(toy_plugin) -> Plugins:
    return load_plugins(extra=[("toy", toy_plugin)], autoload=False)


@pytest.fixture
def toy_target():
    return TOY_TARGET


@pytest.fixture(scope="session")
def postgres_url():
    """A PostgreSQL URL the tests may empty: $ORCHESTRATOR_TEST_POSTGRES if set, else a
    throwaway server (tests/postgres_server.py) where PostgreSQL is installed; skipped
    where neither is."""
    from tests.postgres_server import throwaway_server, unavailable

    given = os.environ.get("ORCHESTRATOR_TEST_POSTGRES", "")
    if given:
        yield given
        return
    why = unavailable()
    if why:
        pytest.skip(f"no PostgreSQL: ORCHESTRATOR_TEST_POSTGRES is not set and {why}")
    with throwaway_server() as url:
        yield url
