from __future__ import annotations

import pytest

from history.store import HistoryStore
from orchestrator.errors import HistoryError, OptionError
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.testing import NOT_RECORDED, ReplayMeasurer, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET


def test_given_results_are_replayed_and_an_unrecorded_config_is_a_run_error():
    space = toy_space()
    recorded = toy_results(space, n=4)
    unrecorded = next(c for c in space if c.key not in {r.config.key for r in recorded})
    replay = ReplayMeasurer(results=recorded)
    got = replay.measure(space, TOY_TARGET, [recorded[2].config, unrecorded])
    assert got[0].config == recorded[2].config and got[0].status is MeasureStatus.OK
    assert got[0].latencies == recorded[2].latencies and got[0].measurer == "replay"
    assert got[1].status is MeasureStatus.RUN_ERROR and got[1].error == NOT_RECORDED
    assert replay.calls == 2


def test_the_fastest_of_a_config_s_recorded_results_is_replayed():
    space = toy_space()
    [first] = toy_results(space, n=1)
    slow = MeasureResult(first.config, MeasureStatus.OK, (9.0, 9.0), measurer="synthetic")
    [got] = ReplayMeasurer(results=[slow, first]).measure(space, TOY_TARGET, [first.config])
    assert got.latencies == first.latencies


def test_results_are_replayed_from_a_history_database(tmp_path):
    space = toy_space()
    recorded = toy_results(space, n=3)
    path = tmp_path / "h.db"
    store = HistoryStore.open(path)
    store.record(run_id=None, task_id=store.ensure_task(space.task),
                 target_id=store.ensure_target(TOY_TARGET), results=recorded)
    store.close()
    got = ReplayMeasurer(db=str(path)).measure(space, TOY_TARGET, [r.config for r in recorded])
    assert [r.latencies for r in got] == [r.latencies for r in recorded]
    with pytest.raises(HistoryError, match="no history database"):
        ReplayMeasurer(db=str(tmp_path / "none.db")).measure(space, TOY_TARGET, [])


@pytest.mark.parametrize("results,message", [
    (5, r"^measurer 'replay': option results takes MeasureResult objects \(from Python\), "
        r"got 5; from the command line give db=URL instead$"),
    ("a.json", "got 'a.json'; from the command line give db=URL instead$"),
    ([1.0], "^measurer 'replay': option results takes MeasureResult objects, got an item 1.0$"),
])
def test_results_that_are_not_measure_results_are_a_one_line_error(results, message):
    with pytest.raises(OptionError, match=message):
        ReplayMeasurer(results=results)


def test_the_registered_replay_measurer_refuses_results_from_the_command_line():
    plugins = load_plugins(autoload=False)
    with pytest.raises(OptionError, match="option results takes MeasureResult objects"):
        plugins.create("measurer", "replay", results="x.json")
