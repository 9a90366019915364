"""The lazy ranking of history: the order of ``rank_history``, for a fraction of the reads."""

from __future__ import annotations

import dataclasses
import itertools
import logging

from history.ranking import RankedHistory, fastest_first
from history.similarity import best_match_score, rank_history
from history.store import HistoryStore
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config
from orchestrator.target import TargetInfo
from orchestrator.testing import TOY_TASK, toy_results, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from tests.plugins.gga.fake_history import FAR, NEAR, FakeHistory, dense, toy_history

TASKS = (*NEAR, *FAR, dense(48, 64, 32), dense(64, 96, 16), dense(100, 64, 64))


def _keys(records):
    return [(r.task.key, r.result.config.key, r.metric) for r in records]


def test_the_lazy_order_is_rank_historys_order():
    history = toy_history([*TASKS, TOY_TASK], n=80)
    space = toy_space()
    full = rank_history(history, space, omega=2.0)
    lazy = RankedHistory(history, space, omega=2.0)
    assert _keys(itertools.islice(lazy, 10)) == _keys(full[:10])
    assert _keys(lazy) == _keys(full)  # iterable again, to the end
    assert _keys(lazy) == _keys(full)
    assert _keys(RankedHistory(history, space, omega=1.0)) == _keys(rank_history(history, space,
                                                                                 omega=1.0))


def test_the_first_records_are_found_without_scoring_the_whole_history():
    history = toy_history(TASKS, n=80)
    lazy = RankedHistory(history, toy_space())
    first = list(itertools.islice(lazy, 8))
    total = sum(len(history.results(t)) for t in TASKS)
    assert len(first) == 8
    assert lazy.scored < total / 2


def _store_with(db: HistoryStore, tasks, target: TargetInfo = TOY_TARGET) -> None:
    target_id = db.ensure_target(target)
    for i, task in enumerate(tasks):
        results = toy_results(toy_space(task), n=40, seed=i)
        # a config timed again (as --confirm does): ranked once, at its fastest timing
        again = MeasureResult(results[0].config, MeasureStatus.OK,
                              tuple(x * 0.5 for x in results[0].latencies), measurer="synthetic")
        db.record(run_id=None, task_id=db.ensure_task(task), target_id=target_id,
                  results=[*results, again])


def test_a_store_ranks_the_same_lazily_and_in_full(db):
    _store_with(db, TASKS)
    reader = db.reader()
    space = toy_space()
    assert _keys(RankedHistory(reader, space, TOY_TARGET)) == _keys(rank_history(reader, space,
                                                                                 TOY_TARGET))
    # a target without results: every target's, as rank_history does
    other = dataclasses.replace(TOY_TARGET, tvm=(("kind", "llvm"), ("mcpu", "other")))
    assert db.find_target(other) is None
    lazy = _keys(RankedHistory(reader, space, other))
    assert lazy and lazy == _keys(rank_history(reader, space, other))


def test_fastest_first_reads_a_reader_without_fastest_from_its_results():
    history = toy_history(NEAR, n=30)
    assert not hasattr(history, "fastest")
    out = list(fastest_first(history, NEAR[0], None))
    assert [r.latency for r in out] == sorted(r.latency for r in history.results(NEAR[0]))


def test_a_task_whose_records_do_not_share_one_score_falls_back_to_the_full_ranking(caplog):
    base = toy_history(TASKS, n=40)
    data = {t: list(base.results(t)) for t in TASKS}
    # a record of NEAR[0] without one of the split knobs (another template's config)
    odd = data[NEAR[0]][5]
    values = {k: v for k, v in odd.config.values if k != odd.config.values[0][0]}
    data[NEAR[0]].append(MeasureResult(Config.of(values), MeasureStatus.OK,
                                       (min(r.latency for r in data[NEAR[0]]) / 2,),
                                       measurer="synthetic"))
    history = FakeHistory(data)
    space = toy_space()
    with caplog.at_level(logging.WARNING, logger="history.ranking"):
        lazy = _keys(RankedHistory(history, space))
    assert "do not share one match score" in caplog.text
    full = _keys(rank_history(history, space))
    assert sorted(lazy) == sorted(full) and len(set(lazy)) == len(lazy)


def test_no_history_ranks_nothing():
    assert list(RankedHistory(None, toy_space())) == []
    assert list(RankedHistory(FakeHistory({}), toy_space())) == []


def test_the_best_match_score_is_read_from_each_tasks_fastest_record(db):
    space = toy_space()
    for history in (toy_history([*NEAR, *FAR]), toy_history(FAR), FakeHistory({}), None):
        ranking = RankedHistory(history, space)
        assert ranking.best_match() == best_match_score(history, space)
        list(ranking)  # read to the end: the same
        assert ranking.best_match() == best_match_score(history, space)
    _store_with(db, TASKS)
    assert RankedHistory(db.reader(), space, TOY_TARGET).best_match() == \
        best_match_score(db.reader(), space, TOY_TARGET)
