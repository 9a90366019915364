from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from history.io import export_records, import_records
from history.store import HistoryStore
from orchestrator.errors import HistoryError
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import LEGACY_TEMPLATE
from orchestrator.testing import TOY_TASK, toy_results
from orchestrator.testing.conformance import TOY_TARGET


@pytest.fixture
def filled(db):
    tid, gid = db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)
    results = toy_results(n=12)  # by two versions of the template
    db.record(run_id=None, task_id=tid, target_id=gid, results=results[:8], template="toy@1")
    db.record(run_id=None, task_id=tid, target_id=gid, results=results[8:], template="toy@2")
    return db


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_export_then_import_into_an_empty_database(filled, tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    assert export_records(filled, path, fmt, []) == 12
    other = HistoryStore.open(tmp_path / "other.db")
    assert import_records(other, path, fmt) == (12, 0)
    assert import_records(other, path, fmt) == (0, 12)  # importing twice adds nothing
    tid, gid = other.find_task(TOY_TASK), other.find_target(TOY_TARGET)
    assert other.results(tid, gid) == filled.results(1, 1)


def test_the_same_config_failing_under_two_templates_is_two_measurements(db, tmp_path):
    tid, gid = db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)
    [ok] = toy_results(n=1)
    failed = MeasureResult(ok.config, MeasureStatus.BUILD_ERROR, error="no such intrinsic")
    for template in ("toy@1", "toy@2"):  # a new template version, same synthetic timings
        db.record(run_id=None, task_id=tid, target_id=gid, results=[ok, failed],
                  template=template)
    db.record(run_id=None, task_id=tid, target_id=gid,  # the same config failing otherwise
              results=[MeasureResult(ok.config, MeasureStatus.RUN_TIMEOUT)], template="toy@2")
    path = tmp_path / "out.jsonl"
    assert export_records(db, path, "jsonl", []) == 5
    other = HistoryStore.open(tmp_path / "other.db")
    assert import_records(other, path, "jsonl") == (5, 0)
    assert sorted(_provenance(other)) == sorted(_provenance(db))
    assert import_records(other, path, "jsonl") == (0, 5)
    assert import_records(db, path, "jsonl") == (0, 5)  # back into the database it came from


@pytest.mark.parametrize("n, field, value, error", [
    (3, "status", "exploded", r"out.jsonl:4: bad record"),
    (5, "created_at", "last tuesday", r"out.jsonl:6: bad record \(ValueError"),
    (2, "task", None, r"out.jsonl:3: bad record \(missing field 'task'\); nothing was imported$"),
])
def test_a_malformed_line_is_refused_before_anything_is_written(filled, tmp_path, n, field,
                                                                value, error):
    path = tmp_path / "out.jsonl"
    export_records(filled, path, "jsonl", [])
    lines = path.read_text().splitlines()
    broken = json.loads(lines[n])
    if value is None:
        del broken[field]
    else:
        broken[field] = value
    path.write_text("\n".join(lines[:n] + [json.dumps(broken)] + lines[n + 1:]) + "\n")
    other = HistoryStore.open(tmp_path / "other.db")
    with pytest.raises(HistoryError, match=error):
        import_records(other, path, "jsonl")
    assert other.count() == 0 and other.runs() == []
    path.write_text("{not json\n")
    with pytest.raises(HistoryError, match=r":1: not JSON"):
        import_records(other, path, "jsonl")


def _provenance(store):
    return [(r.result.config.key, r.created_at, r.template, r.tool_version, r.tvm_version)
            for r in store.records()]


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_an_import_keeps_when_and_with_what_each_measurement_was_made(filled, tmp_path, fmt):
    path = tmp_path / f"out.{fmt}"
    export_records(filled, path, fmt, [])
    other = HistoryStore.open(tmp_path / "other.db")
    import_records(other, path, fmt)
    kept = _provenance(other)
    assert kept == _provenance(filled)
    assert all(tool and tvm for *_, tool, tvm in kept)  # the store stamps both
    assert [template for _, _, template, *_ in kept] == ["toy@1"] * 8 + ["toy@2"] * 4


def test_an_import_is_one_finished_run_per_task_and_target(filled, tmp_path):
    path = tmp_path / "team.jsonl"
    export_records(filled, path, "jsonl", [])
    other = HistoryStore.open(tmp_path / "other.db")
    import_records(other, path, "jsonl")
    [run] = other.runs()
    assert (run.searcher, run.status, run.measured) == ("import", "finished", 12)
    assert run.stop_reason == "imported from team.jsonl"
    assert run.task == TOY_TASK
    assert {r.run_id for r in other.records()} == {run.id}
    import_records(other, path, "jsonl")  # nothing new: no empty run either
    assert len(other.runs()) == 1


def test_an_older_export_without_versions_or_times_is_imported_as_unknown(filled, tmp_path):
    path = tmp_path / "old.jsonl"
    export_records(filled, path, "jsonl", [])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        del row["tool_version"], row["tvm_version"], row["created_at"], row["template"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    other = HistoryStore.open(tmp_path / "other.db")
    before = datetime.now(timezone.utc)
    assert import_records(other, path, "jsonl") == (12, 0)
    after = datetime.now(timezone.utc)
    kept = _provenance(other)
    assert {(tool, tvm) for *_, tool, tvm in kept} == {("", "")}  # not the importer's
    # made before templates were kept: what every template's first version accepts
    assert {template for _, _, template, *_ in kept} == {LEGACY_TEMPLATE}
    for _, when, *_ in kept:  # the import's time
        assert before <= datetime.fromisoformat(when).replace(tzinfo=timezone.utc) <= after


def test_a_database_error_halfway_through_an_import_writes_nothing(filled, tmp_path, monkeypatch):
    path = tmp_path / "out.jsonl"
    export_records(filled, path, "jsonl", [])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    second = {**TOY_TARGET.tvm_json, "mcpu": "other"}
    path.write_text("".join(json.dumps({**r, "target": t}) + "\n"
                            for r in rows for t in (r["target"], second)))
    other = HistoryStore.open(tmp_path / "other.db")
    calls = []
    real = HistoryStore._config_ids

    def failing_on_the_second_group(self, s, task_id, configs):
        calls.append(task_id)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(self, s, task_id, configs)

    monkeypatch.setattr(HistoryStore, "_config_ids", failing_on_the_second_group)
    with pytest.raises(RuntimeError, match="disk full"):
        import_records(other, path, "jsonl")
    assert other.count() == 0 and other.runs() == []
