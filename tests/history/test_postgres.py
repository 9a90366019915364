"""The store on PostgreSQL, when a server is given: set ORCHESTRATOR_TEST_POSTGRES to the URL
of a database the test may empty (``postgresql+psycopg://user@host:port/db``; psycopg must be
installed). Skipped otherwise, as in CI, which has no server."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from history.models import SCHEMA_VERSION
from history.store import HistoryStore
from orchestrator.errors import HistoryError
from orchestrator.space import LEGACY_TEMPLATE
from orchestrator.testing import TOY_TASK, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET

URL = os.environ.get("ORCHESTRATOR_TEST_POSTGRES", "")
pytestmark = pytest.mark.skipif(not URL, reason="ORCHESTRATOR_TEST_POSTGRES is not set")


def _sql(*statements: str) -> list:
    engine = create_engine(URL)
    try:
        with engine.begin() as conn:
            return [conn.execute(text(s)).all() if s.startswith("SELECT") else conn.execute(text(s))
                    for s in statements]
    finally:
        engine.dispose()


@pytest.fixture
def empty() -> str:
    engine = create_engine(URL)
    SQLModel.metadata.drop_all(engine)
    engine.dispose()
    return URL


def test_a_schema1_database_on_postgres_is_upgraded_and_a_failed_upgrade_changes_nothing(empty):
    store = HistoryStore.open(empty)
    tid, gid = store.ensure_task(TOY_TASK), store.ensure_target(TOY_TARGET)
    store.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=5))
    store.close()
    # What schema 1 wrote: no template column.
    _sql('ALTER TABLE measurements DROP COLUMN "template"', "UPDATE schema_info SET version = 1")
    store = HistoryStore.open(empty)
    assert {r.template for r in store.records()} == {LEGACY_TEMPLATE}
    assert len(store.results(tid, gid, templates=toy_space().reusable_templates)) == 5
    store.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=2, seed=3),
                 template="toy@2")
    assert [r.template for r in store.records()] == [LEGACY_TEMPLATE] * 5 + ["toy@2"] * 2
    store.close()
    assert _sql("SELECT version FROM schema_info")[0] == [(SCHEMA_VERSION,)]
    _sql("UPDATE schema_info SET version = 1")  # the column is there: the step fails
    with pytest.raises(HistoryError, match="already exists; nothing was changed"):
        HistoryStore.open(empty)
    assert _sql("SELECT version FROM schema_info", "SELECT count(*) FROM measurements") == \
        [[(1,)], [(7,)]]
