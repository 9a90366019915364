from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from history.store import HistoryStore
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config
from orchestrator.task import Task
from orchestrator.testing import TOY_TASK
from orchestrator.testing.conformance import TOY_TARGET
from tests.scripts_under_test import load_script

spread = load_script("timing_spread")
exit_status = load_script("script_main").exit_status

LAYER = dataclasses.replace(TOY_TASK, name="lay")
A, B, C = Config.of({"x": 1}), Config.of({"x": 2}), Config.of({"x": 3})


def _ok(config: Config, speed: float) -> MeasureResult:
    return MeasureResult(config, MeasureStatus.OK, (1.0 / speed,), measurer="local")


def _store(work: Path, name: str) -> HistoryStore:
    turns = work / LAYER.name / "turns"
    turns.mkdir(parents=True, exist_ok=True)
    return HistoryStore.open(turns / f"{name}.db")


def _side_by_side(work: Path, *speeds: list[float]) -> None:
    """A remeasure run of A, B (and C), their speeds in round order, as reproduce_gga
    stores it."""
    store = _store(work, "deployed")
    try:
        store.record_finished_run(
            task_id=store.ensure_task(LAYER), target_id=store.ensure_target(TOY_TARGET),
            resume_key="k", searcher="remeasure", measurer="local", space_generator="toy",
            pruners=(), seed=0, max_trials=sum(map(len, speeds)), space_size=3,
            stop_reason="trials",
            results=[_ok(c, s) for c, ss in zip((A, B, C), speeds) for s in ss])
    finally:
        store.close()


def test_a_round_that_slows_every_config_drops_out_with_the_round_state(tmp_path):
    # round 3 is 20% slow for every config; round 2 1% fast, where B alone is 10% fast
    _side_by_side(tmp_path, [100, 101, 80, 100], [50, 55, 40, 50], [20, 20.2, 16, 20])
    found = spread.read_work(tmp_path, ["deployed"], 3)
    assert len(found) == 1 and found[0].layer == "lay" and found[0].db == "deployed"
    plain = {c.key: c for c in found[0].configs}
    a = plain[A.key]
    assert a.speeds == (100, 101, 80, 100) and a.median == 100 and a.low == pytest.approx(1.25)
    assert a.first == 1.0 and a.high == pytest.approx(1.01) and all(c.wide for c in plain.values())
    steady = {c.key: c for c in found[0].steady or ()}
    assert steady[A.key].speeds == pytest.approx((100, 100, 100, 100))
    assert not steady[A.key].wide and not steady[C.key].wide
    assert steady[B.key].high == pytest.approx(55 / 1.01 / 50) and steady[B.key].wide

    text = spread.report(found, "python scripts/timing_spread.py w", 3)
    row = next(line for line in text.splitlines() if line.startswith(f"| {tmp_path.name} |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:5] == [tmp_path.name, "lay", "deployed", "3", "4"]
    assert cells[9] == "3 of 3" and cells[11] == "1 of 3"
    assert "| deployed | 3 | 4 |" in text


def test_a_searchers_database_has_no_rounds_and_reads_only_its_layer(tmp_path):
    seeded = Task.create("dense", {"M": 32, "K": 32, "N": 32}, name="history_layer")
    store = _store(tmp_path, "gga")
    try:
        target = store.ensure_target(TOY_TARGET)
        for task, results in ((LAYER, [_ok(A, 100), _ok(A, 99), _ok(A, 98), _ok(B, 10)]),
                              (seeded, [_ok(B, 10), _ok(B, 20), _ok(B, 30)])):
            tid = store.ensure_task(task)
            run = store.start_run(task_id=tid, target_id=target, resume_key=task.name or "",
                                  searcher="gga", measurer="local", space_generator="toy",
                                  pruners=(), cost_model=None, seed=0, max_trials=4,
                                  max_seconds=None, space_size=3)
            store.record(run_id=run, task_id=tid, target_id=target, results=results)
    finally:
        store.close()
    (found,) = spread.read_work(tmp_path, ["gga", "deployed"], 3)
    assert found.db == "gga" and [c.key for c in found.configs] == [A.key]  # B: one timing
    assert found.steady is None and not found.configs[0].wide
    assert spread._cells(found.configs, found.steady)[-2:] == ["-", "-"]


def test_quantile_is_nearest_rank():
    assert spread.quantile([5, 1, 3, 2, 4], 0.9) == 5
    assert spread.quantile([5, 1, 3, 2, 4], 0.5) == 3
    assert spread.quantile([7], 0.9) == 7


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert exit_status(spread.main, [str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is not a directory" in err and err.count("\n") == 1
    (tmp_path / "empty").mkdir()
    assert exit_status(spread.main, [str(tmp_path / "empty")]) == 2
    assert "holds no deployed.db" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        spread.main([str(tmp_path), "--min-timings", "1"])


def test_main_writes_the_report_and_names_the_machine(tmp_path, capsys):
    _side_by_side(tmp_path / "w", [100, 101, 99], [50, 51, 49])
    out = tmp_path / "r" / "spread.md"
    assert spread.main([str(tmp_path / "w"), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"report: {out}\n"
    text = out.read_text()
    assert "Machine:" in text and "python scripts/timing_spread.py" in text
    assert "| w | lay | deployed | 2 | 3 |" in text
