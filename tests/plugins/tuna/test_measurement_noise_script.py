"""scripts/tuna_measurement_noise.py: the rounds of a sample scored against each other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from history.store import HistoryStore
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config
from orchestrator.task import Task
from tests.plugins.tuna.helpers import ZNVER4

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=900)


def _row(text: str, workload: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| {workload} |"))
    return [c.strip() for c in line.strip("|").split("|")]


def _record_rounds(db: Path, name: str, *rounds: list[float]) -> None:
    store = HistoryStore.open(db)
    try:
        task = Task.create("dense", {"M": 16 + len(name), "K": 16, "N": 16}, name=name)
        task_id, target_id = store.ensure_task(task), store.ensure_target(ZNVER4)
        for round_, latencies in enumerate(rounds):
            run = store.start_run(task_id=task_id, target_id=target_id,
                                  resume_key=f"{name}:{round_}", searcher="uniform-sample",
                                  measurer="local", space_generator="test", pruners=(),
                                  cost_model=None, seed=0, max_trials=len(latencies),
                                  max_seconds=None, space_size=len(latencies))
            store.record(run_id=run, task_id=task_id, target_id=target_id, results=[
                MeasureResult(Config.of({"i": i}), MeasureStatus.OK, (t,), measurer="local")
                for i, t in enumerate(latencies)])
    finally:
        store.close()


def test_rounds_that_agree_and_rounds_that_disagree(tmp_path):
    db, out = tmp_path / "ref.db", tmp_path / "noise.md"
    first = [1e-3 * (i + 1) for i in range(60)]
    _record_rounds(db, "steady", first, [1.1 * t for t in first])  # same order, 10% slower
    _record_rounds(db, "reversed", first, list(reversed(first)))   # the opposite order
    proc = _run(str(SCRIPTS / "tuna_measurement_noise.py"), "--db", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    steady, backwards = _row(text, "steady"), _row(text, "reversed")
    assert steady[1] == "60" and steady[3] == "1.100 / 1.100 / 1.100"
    assert steady[4:] == ["1.000"] * 5
    assert backwards[4] == "-1.000"
    # the 10 fastest of one round are the 10 slowest of the other: sum(1..10) / sum(51..60)
    assert backwards[5] == backwards[7] == f"{55 / 555:.3f}"


def test_three_rounds_are_scored_in_pairs_and_against_the_best_of_the_others(tmp_path):
    db, out = tmp_path / "ref.db", tmp_path / "noise.md"
    first = [1e-3 * (i + 1) for i in range(60)]
    # two rounds agree; the third is in the opposite order and 10x slower, so the best of
    # the others is always `first`
    _record_rounds(db, "third", first, list(first), [10 * t for t in reversed(first)])
    proc = _run(str(SCRIPTS / "tuna_measurement_noise.py"), "--db", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = _row(out.read_text(), "third")
    assert row[1] == "60" and len(row[2].split("; ")) == 3
    assert row[4] == f"{-1 / 3:.3f}"                          # pairs: +1, -1, -1
    assert row[5] == f"{(2 + 4 * 55 / 555) / 6:.3f}"          # 2 ordered pairs agree, 4 do not
    assert row[7] == f"{(2 + 55 / 555) / 3:.3f}"              # the third round ranks it badly


def test_rounds_of_a_real_sample(tmp_path):
    db, out = tmp_path / "ref.db", tmp_path / "noise.md"
    proc = _run(str(SCRIPTS / "reproduce_tuna.py"), "--measure-only", "--sample", "8",
                "--rounds", "2", "--workloads", "mb_dw13", "--db", str(db))
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = _run(str(SCRIPTS / "tuna_measurement_noise.py"), "--db", str(db), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    row = _row(out.read_text(), "mb_dw13")
    assert row[1] == "8" and len(row[2].split("; ")) == 2
    assert -1.0 <= float(row[4]) <= 1.0
    assert all(0 < float(x) <= 1.0 for x in row[5:9])


def test_a_database_without_two_rounds_is_a_one_line_error(tmp_path):
    db = tmp_path / "ref.db"
    _record_rounds(db, "once", [1e-3, 2e-3])
    for path, message in ((db, "has two sample rounds"), (tmp_path / "none.db", "no history")):
        proc = _run(str(SCRIPTS / "tuna_measurement_noise.py"), "--db", str(path),
                    "--out", str(tmp_path / "noise.md"))
        assert proc.returncode == 2 and proc.stderr.startswith("error: ")
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "noise.md").exists()
