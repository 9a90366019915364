from __future__ import annotations

import json

import pytest

from history.io import export_records, import_records
from history.store import HistoryStore
from orchestrator.errors import HistoryError
from orchestrator.testing import TOY_TASK, toy_results
from orchestrator.testing.conformance import TOY_TARGET


@pytest.fixture
def filled(db):
    tid, gid = db.ensure_task(TOY_TASK), db.ensure_target(TOY_TARGET)
    db.record(run_id=None, task_id=tid, target_id=gid, results=toy_results(n=12))
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


def test_a_malformed_line_is_refused_before_anything_is_written(filled, tmp_path):
    path = tmp_path / "out.jsonl"
    export_records(filled, path, "jsonl", [])
    lines = path.read_text().splitlines()
    broken = json.loads(lines[3])
    broken["status"] = "exploded"
    path.write_text("\n".join(lines[:3] + [json.dumps(broken)] + lines[4:]) + "\n")
    other = HistoryStore.open(tmp_path / "other.db")
    with pytest.raises(HistoryError, match=r"out.jsonl:4: bad record"):
        import_records(other, path, "jsonl")
    assert other.count() == 0
    path.write_text("{not json\n")
    with pytest.raises(HistoryError, match=r":1: not JSON"):
        import_records(other, path, "jsonl")
