from __future__ import annotations

import dataclasses
import sqlite3
import sys

import pytest

from history import store as store_mod
from history.models import MeasurementRow, SchemaInfo, TaskRow
from history.store import HistoryStore, database_url
from orchestrator.errors import HistoryError, SchemaVersionError
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config
from orchestrator.task import Task
from orchestrator.testing import TOY_TASK, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET


def _ok(config, seconds):
    return MeasureResult(config, MeasureStatus.OK, (seconds,), measurer="local")


def _ids(db):
    return db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)


def test_results_round_trip_with_every_sample(db):
    task_id, target_id = _ids(db)
    rs = toy_results(n=5) + [MeasureResult(Config.of({"x": 1}), MeasureStatus.BUILD_TIMEOUT,
                                           error="too slow", measurer="local")]
    db.record(run_id=None, task_id=task_id, target_id=target_id, results=rs)
    back = db.results(task_id, target_id)
    assert back == rs
    assert [r.status for r in db.results(task_id, target_id, ok_only=True)] == [MeasureStatus.OK] * 5
    best = db.best(task_id, target_id, k=2)
    assert [b.result.latency for b in best] == sorted(r.latency for r in rs[:5])[:2]


def test_best_lists_each_config_once_at_its_fastest_timing(db):
    task_id, target_id = _ids(db)
    a, b, c = (Config.of({"x": i}) for i in range(3))

    # a timed three times (as --confirm does), b once, c twice with equal timings.
    db.record(run_id=None, task_id=task_id, target_id=target_id,
              results=[_ok(a, 3.0), _ok(b, 2.0), _ok(a, 1.0), _ok(c, 4.0), _ok(a, 5.0),
                       _ok(c, 4.0)])
    best = db.best(task_id, target_id, k=3)
    assert [(r.result.config, r.result.latency) for r in best] == [(a, 1.0), (b, 2.0), (c, 4.0)]
    assert [r.result.config for r in db.best(task_id, k=2)] == [a, b]  # on any target


def test_fastest_pages_through_each_config_once_at_its_fastest_timing(db):
    task_id, target_id = _ids(db)
    other = db.ensure_target(dataclasses.replace(TOY_TARGET, tvm=(("kind", "llvm"),
                                                                  ("mcpu", "other"))))
    a, b, c, d = (Config.of({"x": i}) for i in range(4))

    failed = MeasureResult(d, MeasureStatus.RUN_ERROR, error="crashed", measurer="local")
    untimed = MeasureResult(d, MeasureStatus.OK, (), measurer="local")  # not ok: no timings
    db.record(run_id=None, task_id=task_id, target_id=target_id,
              results=[_ok(a, 3.0), _ok(b, 2.0), _ok(a, 1.0), _ok(c, 4.0), failed, untimed,
                       _ok(c, 4.0)])
    db.record(run_id=None, task_id=task_id, target_id=other, results=[_ok(b, 0.5), _ok(d, 9.0)])
    assert [(r.config, r.latency) for r in db.fastest(task_id, target_id)] == \
        [(a, 1.0), (b, 2.0), (c, 4.0)]
    assert [r.config for r in db.fastest(task_id)] == [b, a, c, d]  # on any target
    assert [r.config for r in db.fastest(task_id, offset=1, limit=2)] == [a, c]
    pages = list(db.reader().fastest(TOY_TASK, None, page=1))  # pages of 1, 2, 4
    assert [r.config for r in pages] == [b, a, c, d]
    assert list(db.reader().fastest(Task.create("dense", {"M": 3, "K": 3, "N": 3}))) == []


def test_the_readers_pages_give_each_config_once_when_results_come_in_between(db):
    task_id, target_id = _ids(db)
    a, b, c = (Config.of({"x": i}) for i in range(3))

    db.record(run_id=None, task_id=task_id, target_id=target_id,
              results=[_ok(a, 1.0), _ok(b, 2.0), _ok(c, 3.0)])
    pages = db.reader().fastest(TOY_TASK, None, page=1)
    assert next(pages).config == a
    # b timed again, faster than a: the next page (offset 1) now starts with a again
    db.record(run_id=None, task_id=task_id, target_id=target_id, results=[_ok(b, 0.5)])
    assert [r.config for r in pages] == [c]


def test_tasks_and_targets_are_deduplicated_by_key(db):
    a, _ = _ids(db)
    assert db.ensure_task(Task.from_dict(TOY_TASK.to_dict())) == a
    other = Task.create("dense", {"M": 64, "K": 64, "N": 32})
    assert db.ensure_task(other) != a


def test_a_hash_collision_does_not_return_the_wrong_task(db, monkeypatch):
    a = db.ensure_task(TOY_TASK)
    other = Task.create("dense", {"M": 1, "K": 1, "N": 1})
    colliding = TOY_TASK.key_hash
    monkeypatch.setattr(Task, "key_hash", property(lambda self: colliding))
    assert db.find_task(other) is None
    assert db.ensure_task(other) != a


def test_sqlite_is_in_wal_mode(tmp_path):
    HistoryStore.open(tmp_path / "h.db").close()
    con = sqlite3.connect(tmp_path / "h.db")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schemas_and_older_ones_without_an_upgrade_are_refused(tmp_path, monkeypatch):
    path = tmp_path / "h.db"
    HistoryStore.open(path).close()
    monkeypatch.setattr(store_mod, "SCHEMA_VERSION", 1)
    with pytest.raises(SchemaVersionError, match="schema version 2, this orchestrator uses 1; upgrade"):
        HistoryStore.open(path)
    monkeypatch.undo()
    con = sqlite3.connect(path)
    con.execute("UPDATE schema_info SET version = 0")  # older than any upgrade step
    con.commit()
    con.close()
    with pytest.raises(SchemaVersionError, match="schema version 0, this orchestrator uses 2; export it"):
        HistoryStore.open(path)


def test_corrupted_and_foreign_files_are_refused_without_damage(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(HistoryError, match="cannot open history database"):
        HistoryStore.open(bad)
    assert bad.read_bytes() == b"this is not a database" * 100
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("create table people (name text)")
    con.commit()
    con.close()
    with pytest.raises(HistoryError, match="not an orchestrator history database"):
        HistoryStore.open(foreign)


@pytest.mark.parametrize("url,match", [
    ("nosuchdialect://x/y", "cannot use database URL"),
    ("sqlite:////no/such/dir/h.db", "does not exist"),
])
def test_bad_urls(url, match):
    with pytest.raises(HistoryError, match=match):
        HistoryStore.open(url)


def test_a_postgres_url_without_its_driver_says_which_extra_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(HistoryError, match=r"pip install 'tuning-orchestrator\[postgres\]'$"):
        HistoryStore.open("postgresql+psycopg://u@127.0.0.1:9/x")


def test_plain_paths_become_sqlite_urls(tmp_path, monkeypatch):
    assert database_url(tmp_path / "x.db") == f"sqlite:///{tmp_path / 'x.db'}"
    monkeypatch.setenv("ORCHESTRATOR_DB", "postgresql://u@localhost/db")
    assert database_url(None) == "postgresql://u@localhost/db"


def test_records_filter_with_sqlalchemy_expressions(db):
    task_id, target_id = _ids(db)
    db.record(run_id=None, task_id=task_id, target_id=target_id, results=toy_results(n=4))
    assert len(db.records(where=[TaskRow.op == "dense", MeasurementRow.status == "ok"])) == 4
    assert db.records(where=[TaskRow.op == "conv2d"]) == []
    assert SchemaInfo.__tablename__ == "schema_info"


def test_records_of_several_tasks_carry_each_row_its_own_task_and_result(db):
    target_id = db.ensure_target(TOY_TARGET)
    other = Task.create("dense", {"M": 64, "K": 64, "N": 32}, name="small")
    toy, small = toy_results(n=3), toy_results(n=2, seed=1)
    # interleaved, so that rows of one task are apart
    for task, results in ((TOY_TASK, toy[:1]), (other, small), (TOY_TASK, toy[1:])):
        db.record(run_id=None, task_id=db.ensure_task(task), target_id=target_id, results=results)
    recs = db.records()
    assert [r.result for r in recs] == toy[:1] + small + toy[1:]
    assert [r.task for r in recs] == [TOY_TASK, other, other, TOY_TASK, TOY_TASK]
    assert [r.task.name for r in recs] == [TOY_TASK.name, "small", "small", TOY_TASK.name, TOY_TASK.name]
    assert all(r.target_key == TOY_TARGET.key and r.created_at for r in recs)


def test_opening_a_missing_database_read_only_says_so(tmp_path):
    with pytest.raises(HistoryError, match="no history database"):
        HistoryStore.open(tmp_path / "none.db", create=False)


def test_the_reader_gives_plugins_frozen_results_only(db):
    task_id, target_id = _ids(db)
    db.record(run_id=None, task_id=task_id, target_id=target_id,
              results=toy_results(n=3) + [MeasureResult(Config.of({"x": 1}), MeasureStatus.RUN_ERROR)])
    reader = db.reader()
    assert reader.tasks("dense") == [TOY_TASK] and reader.tasks("conv2d") == []
    assert len(reader.results(TOY_TASK)) == 3 and len(reader.results(TOY_TASK, ok_only=False)) == 4
    assert len(reader.results(TOY_TASK, TOY_TARGET)) == 3
    assert reader.results(Task.create("dense", {"M": 1, "K": 1, "N": 1})) == []


def test_a_run_measured_all_at_once_is_stored_finished_or_not_at_all(db, monkeypatch):
    tid, gid = db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)
    results = toy_results(n=3)
    fields = dict(task_id=tid, target_id=gid, resume_key='{"k": 1}', searcher="remeasure",
                  measurer="synthetic", space_generator="toy", pruners=(), seed=0,
                  max_trials=6, space_size=10, stop_reason="trials")
    run_id = db.record_finished_run(results=results, **fields)
    [run] = db.runs()
    assert run.id == run_id and run.status == "finished" and run.stop_reason == "trials"
    assert run.max_trials == 6 and run.measured == 3 and run.finished_at is not None
    assert db.results(tid, gid, run_id=run_id) == results
    assert db.find_run('{"k": 1}', status="finished") == run_id
    assert db.find_run('{"k": 1}', status="running") is None
    assert db.run_state(run_id) == ("finished", 0) and db.run_state(run_id + 1) == (None, 0)
    db.add_reused(run_id, 3)  # what a resumed run counts among its trials
    assert db.run_state(run_id) == ("finished", 3)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(db, "_insert_measurements", broken)
    with pytest.raises(RuntimeError):
        db.record_finished_run(results=results, **{**fields, "resume_key": '{"k": 2}'})
    assert db.find_run('{"k": 2}') is None and len(db.runs()) == 1


def test_results_can_be_limited_to_the_templates_that_built_them(db):
    tid, gid = db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)
    results = toy_results(n=9)
    db.record(run_id=None, task_id=tid, target_id=gid, results=results[:3])  # no template
    db.record(run_id=None, task_id=tid, target_id=gid, results=results[3:6], template="toy@1")
    db.record(run_id=None, task_id=tid, target_id=gid, results=results[6:], template="toy@2")
    assert db.results(tid, gid) == results
    assert db.results(tid, gid, templates=toy_space().reusable_templates) == results[:6]
    bumped = dataclasses.replace(toy_space(), template_version=2)
    assert db.results(tid, gid, templates=bumped.reusable_templates) == results[6:]
    assert [r.template for r in db.records()] == [""] * 3 + ["toy@1"] * 3 + ["toy@2"] * 3


def test_best_can_be_limited_to_the_templates_that_built_them(db):
    tid, gid = _ids(db)
    a, b, c = (Config.of({"x": i}) for i in range(3))
    db.record(run_id=None, task_id=tid, target_id=gid, results=[_ok(a, 1.0)])  # no template
    db.record(run_id=None, task_id=tid, target_id=gid, results=[_ok(b, 2.0), _ok(c, 5.0)],
              template="toy@1")
    # c rebuilt by a bumped template runs faster: its fastest timing is of toy@2
    db.record(run_id=None, task_id=tid, target_id=gid, results=[_ok(c, 3.0)], template="toy@2")
    assert [(r.result.config, r.template) for r in db.best(tid, gid)] == \
        [(a, ""), (b, "toy@1"), (c, "toy@2")]
    assert [(r.result.config, r.result.latency) for r in db.best(tid, gid, templates=["toy@1"])] \
        == [(b, 2.0), (c, 5.0)]
    assert [r.result.config for r in db.best(tid, gid, templates=["toy@2", ""])] == [a, c]
    assert db.best(tid, gid, templates=["toy@3"]) == []


def test_commands_that_create_a_new_sqlite_history_at_once_all_open_it(tmp_path):
    from tests.history.at_once import open_at_once

    for i in range(5):
        path = tmp_path / f"new{i}.db"
        assert open_at_once(str(path)) == []
        store = HistoryStore.open(path, create=False)
        assert store.count() == 0
        with store.engine.connect() as conn:
            assert len(conn.exec_driver_sql("SELECT * FROM schema_info").all()) == 1
        store.close()


def test_commands_that_start_on_a_new_task_at_once_share_its_row(tmp_path):
    from tests.history.at_once import ensure_at_once, row_counts

    for i in range(5):
        path = tmp_path / f"task{i}.db"
        HistoryStore.open(path).close()
        got = ensure_at_once(str(path))
        assert len(got) == 4 and len(set(got)) == 1, got
        # one row per config, four timings of each
        assert row_counts(str(path), "configs", "measurements") == [3, 12]
