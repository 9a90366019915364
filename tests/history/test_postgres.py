"""The store on PostgreSQL: on $ORCHESTRATOR_TEST_POSTGRES (the URL of a database the
tests may empty, ``postgresql+psycopg://user@host:port/db``) or else on a throwaway server
where PostgreSQL is installed (``postgres_url`` in tests/conftest.py); skipped otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from sqlalchemy import create_engine, text
from sqlmodel import SQLModel

from history.models import SCHEMA_VERSION
from history.store import HistoryStore
from orchestrator.errors import HistoryError
from orchestrator.loop import tune
from orchestrator.manager import load_plugins
from orchestrator.space import LEGACY_TEMPLATE
from orchestrator.testing import TOY_TASK, InterruptAfter, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from tests.history.at_once import ensure_at_once, open_at_once, row_counts

def _sql(url: str, *statements: str) -> list:
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            return [conn.execute(text(s)).all() if s.startswith("SELECT") else conn.execute(text(s))
                    for s in statements]
    finally:
        engine.dispose()


def _drop_all(url: str) -> None:
    engine = create_engine(url)
    SQLModel.metadata.drop_all(engine)
    engine.dispose()


@pytest.fixture
def empty(postgres_url: str) -> str:
    _drop_all(postgres_url)
    return postgres_url


def test_a_schema1_database_on_postgres_is_upgraded_and_a_failed_upgrade_changes_nothing(empty):
    store = HistoryStore.open(empty)
    tid, gid = store.ensure_task(TOY_TASK), store.ensure_target(TOY_TARGET)
    store.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=5))
    store.close()
    # What schema 1 wrote: no template column.
    _sql(empty, 'ALTER TABLE measurements DROP COLUMN "template"',
         "UPDATE schema_info SET version = 1")
    store = HistoryStore.open(empty)
    assert {r.template for r in store.records()} == {LEGACY_TEMPLATE}
    assert len(store.results(tid, gid, templates=toy_space().reusable_templates)) == 5
    store.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=2, seed=3),
                 template="toy@2")
    assert [r.template for r in store.records()] == [LEGACY_TEMPLATE] * 5 + ["toy@2"] * 2
    store.close()
    assert _sql(empty, "SELECT version FROM schema_info")[0] == [(SCHEMA_VERSION,)]
    _sql(empty, "UPDATE schema_info SET version = 1")  # the column is there: the step fails
    with pytest.raises(HistoryError, match="already exists; nothing was changed"):
        HistoryStore.open(empty)
    assert _sql(empty, "SELECT version FROM schema_info", "SELECT count(*) FROM measurements") == \
        [[(1,)], [(7,)]]


def test_an_interrupted_run_resumes_on_postgres_without_measuring_again(empty, toy_plugin,
                                                                        toy_plugins):
    stopping = load_plugins(extra=[("toy", toy_plugin), ("stop", InterruptAfter(2))], autoload=False)
    store = HistoryStore.open(empty)
    options = dict(target=TOY_TARGET, db=store, measurer="toy-replay", space_generator="toy",
                   trials=40, seed=3, batch_size=8)
    with pytest.raises(KeyboardInterrupt):
        tune(TOY_TASK, plugins=stopping, **options)
    assert [r.status for r in store.runs()] == ["interrupted"]
    calls = toy_plugin.measurer.calls
    s = tune(TOY_TASK, plugins=toy_plugins, **options)
    assert (s.run.resumed_trials, s.trials, s.measured) == (16, 40, 24)
    assert toy_plugin.measurer.calls - calls == 24
    keys = [r.config.key for r in store.results(1, 1)]
    assert len(keys) == len(set(keys)) == 40 and store.runs()[0].status == "finished"
    store.close()


def test_history_moves_between_postgres_and_sqlite_and_back(empty, tmp_path):
    from history.io import export_records, import_records

    store = HistoryStore.open(empty)
    tid, gid = store.ensure_task(TOY_TASK), store.ensure_target(TOY_TARGET)
    store.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=9),
                 template="toy@1")
    assert export_records(store, tmp_path / "all.jsonl", "jsonl", []) == 9
    local = HistoryStore.open(tmp_path / "copy.db")
    assert import_records(local, tmp_path / "all.jsonl", "jsonl")[0] == 9
    assert sorted(r.result.latency for r in local.records()) == \
        sorted(r.result.latency for r in store.records())
    assert import_records(store, tmp_path / "all.jsonl", "jsonl")[0] == 0  # all present
    assert len(store.records()) == 9
    local.close()
    store.close()


def _cli(*args: str, cwd) -> subprocess.Popen:
    env = {**os.environ, "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.Popen([sys.executable, "-m", "orchestrator", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_commands_tune_real_kernels_into_one_postgres_history_at_once(empty, tmp_path):
    shapes = ["M=16,K=32,N=16", "M=32,K=16,N=16"]
    procs = [_cli("tune", "--op", "dense", "--shape", shape, "--trials", "4", "--db", empty,
                  "--json", cwd=tmp_path) for shape in shapes]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    assert [json.loads(o)[0]["measured"] for o, _ in outs] == [4, 4]
    again = _cli("tune", "--op", "dense", "--shape", shapes[0], "--trials", "4", "--db", empty,
                 "--json", cwd=tmp_path)
    out, errs = again.communicate(timeout=600)
    assert again.returncode == 0, errs
    assert json.loads(out)[0]["measured"] == 0  # a rerun: everything is recorded
    store = HistoryStore.open(empty, create=False)
    runs = store.runs()
    assert len(runs) == 2 and {r.status for r in runs} == {"finished"}
    assert len(store.records()) == 8
    store.close()


def test_commands_that_create_a_new_postgres_history_at_once_all_open_it(empty):
    for _ in range(5):
        _drop_all(empty)
        assert open_at_once(empty) == []
        store = HistoryStore.open(empty, create=False)
        assert store.count() == 0
        store.close()
        assert _sql(empty, "SELECT count(*) FROM schema_info") == [[(1,)]]


def test_commands_that_start_on_a_new_task_at_once_share_its_row_on_postgres(empty):
    for _ in range(5):
        _drop_all(empty)
        HistoryStore.open(empty).close()
        got = ensure_at_once(empty)
        assert len(got) == 4 and len(set(got)) == 1, got
        # one row per config, four timings of each
        assert row_counts(empty, "configs", "measurements") == [3, 12]
