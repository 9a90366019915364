"""What gga's screen learns from under ``screen_rows_from=spread`` (``spread_rows``)."""

from __future__ import annotations

import statistics

from history.similarity import group_by_task, rank_history
from orchestrator.testing import toy_space
from orchestrator.testing.conformance import TOY_TARGET
from plugins.gga.screen import spread_rows
from tests.plugins.gga.fake_history import FAR, NEAR, toy_history


def _ranked():
    return rank_history(toy_history([*NEAR, *FAR]), toy_space(), TOY_TARGET)


def test_spread_rows_shares_the_rows_equally_and_keeps_each_tasks_range_of_speeds():
    ranked = _ranked()
    whole = group_by_task(ranked)
    assert len(whole) == 3 and all(len(g) > 20 for g in whole.values())
    picked = spread_rows(ranked, 30)
    keys = [(r.task.key, r.result.config.key) for r in picked]
    assert len(keys) == len(set(keys)) == 30
    for task, got in group_by_task(picked).items():
        speeds = sorted((r.gflops for r in whole[task]), reverse=True)
        assert len(got) == 10
        assert got[0].gflops == speeds[0]  # the task's fastest record is in
        assert [r.gflops for r in got] == sorted((r.gflops for r in got), reverse=True)
        assert got[-1].gflops < statistics.median(speeds)  # and slow ones, not the top 10
    # by metric, the same 30 rows would skip the far task's records
    assert len(group_by_task(ranked[:30])) < 3


def test_spread_rows_gives_a_small_tasks_unused_share_to_the_others():
    ranked = _ranked()
    far = FAR[0].key
    few = [r for r in ranked if r.task.key == far][:2]
    records = [r for r in ranked if r.task.key != far] + few
    counts = {t: len(g) for t, g in group_by_task(spread_rows(records, 30)).items()}
    assert counts[far] == 2 and sorted(counts.values()) == [2, 14, 14]
    odd = {t: len(g) for t, g in group_by_task(spread_rows(records, 31)).items()}
    assert sum(odd.values()) == 31 and odd[far] == 2
    assert len(spread_rows(records, 10_000)) == len(records)
    assert spread_rows(records, 0) == [] and spread_rows([], 5) == []
    assert spread_rows(records, 2) and len(spread_rows(records, 2)) == 2
