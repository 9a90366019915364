"""Upgrading databases written by older schemas, on a real one: data/schema1-dense.db was
written by the orchestrator at schema 1 (commit cefffb6), by
``orchestrator tune --op dense --shape M=16,N=32,K=32 --trials 6 --batch-size 3``."""

from __future__ import annotations

import logging
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from history.migrate import upgrade
from history.models import SCHEMA_VERSION
from history.store import HistoryStore
from orchestrator.errors import HistoryError
from orchestrator.space import LEGACY_TEMPLATE

SCHEMA1 = Path(__file__).parent / "data" / "schema1-dense.db"


@pytest.fixture
def old_db(tmp_path) -> Path:
    path = tmp_path / "old.db"
    shutil.copyfile(SCHEMA1, path)
    return path


def _rows(path: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_schema1_database_is_upgraded_in_place_and_keeps_every_row(old_db, caplog):
    before = _rows(old_db, "SELECT id, run_id, config_id, status, latency, latencies "
                           "FROM measurements ORDER BY id")
    runs = _rows(old_db, "SELECT id, resume_key, status FROM runs")
    assert len(before) == 6 and _rows(old_db, "SELECT version FROM schema_info") == [(1,)]
    with caplog.at_level(logging.WARNING, logger="history.migrate"):
        store = HistoryStore.open(old_db, create=False)
    assert "from schema 1 to 2" in caplog.text
    assert [(r.id, r.result.config.key) for r in store.records()] == \
        [(i, k) for (i, k) in _rows(old_db, "SELECT m.id, c.key FROM measurements m "
                                            "JOIN configs c ON c.id = m.config_id ORDER BY m.id")]
    assert {r.template for r in store.records()} == {LEGACY_TEMPLATE}
    store.close()
    assert _rows(old_db, "SELECT version FROM schema_info") == [(SCHEMA_VERSION,)]
    assert _rows(old_db, "SELECT id, run_id, config_id, status, latency, latencies "
                         "FROM measurements ORDER BY id") == before
    assert _rows(old_db, "SELECT id, resume_key, status FROM runs") == runs
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="history.migrate"):
        HistoryStore.open(old_db).close()  # once upgraded, opened as is
    assert caplog.text == ""


def test_a_first_template_version_reuses_the_upgraded_measurements_a_later_one_does_not(old_db):
    store = HistoryStore.open(old_db)
    [(task_id, task)] = store.tasks()
    target_id = _rows(old_db, "SELECT id FROM targets")[0][0]
    assert len(store.results(task_id, target_id, templates=("cpu@1", LEGACY_TEMPLATE))) == 6
    assert store.results(task_id, target_id, templates=("cpu@2",)) == []
    store.close()


def test_an_upgrade_that_fails_changes_nothing_and_says_why(old_db):
    # A column of the new schema already there (a hand-edited file): the step fails.
    con = sqlite3.connect(old_db)
    con.execute("ALTER TABLE measurements ADD COLUMN template VARCHAR")
    con.commit()
    con.close()
    schema = _rows(old_db, "SELECT name, sql FROM sqlite_master ORDER BY name")
    with pytest.raises(HistoryError, match=r"cannot upgrade history database .* from schema 1 "
                                           r"to 2: duplicate column name: template; nothing "
                                           r"was changed"):
        HistoryStore.open(old_db)
    assert _rows(old_db, "SELECT version FROM schema_info") == [(1,)]
    assert _rows(old_db, "SELECT count(*) FROM measurements") == [(6,)]
    assert _rows(old_db, "SELECT name, sql FROM sqlite_master ORDER BY name") == schema


def test_an_upgrade_another_process_already_made_is_skipped(old_db):
    HistoryStore.open(old_db).close()
    engine = create_engine(f"sqlite:///{old_db}")
    try:
        upgrade(engine, str(old_db), 1)  # as a second process that read version 1 would
    finally:
        engine.dispose()
    assert _rows(old_db, "SELECT version FROM schema_info") == [(SCHEMA_VERSION,)]


def test_a_step_that_fails_after_its_ddl_leaves_no_trace_of_it(old_db, monkeypatch):
    import history.migrate as migrate

    def failing_update(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error (simulated after the ALTER TABLE)")

    monkeypatch.setattr(migrate, "update", failing_update)
    with pytest.raises(Exception, match="simulated"):
        upgrade(create_engine(f"sqlite:///{old_db}"), str(old_db), 1)
    columns = [row[1] for row in _rows(old_db, "PRAGMA table_info(measurements)")]
    assert "template" not in columns  # the step's DDL rolled back with it
    assert _rows(old_db, "SELECT version FROM schema_info") == [(1,)]
    monkeypatch.undo()
    HistoryStore.open(old_db, create=False).close()  # and a later open upgrades it
    assert _rows(old_db, "SELECT version FROM schema_info") == [(SCHEMA_VERSION,)]
