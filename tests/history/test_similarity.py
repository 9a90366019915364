"""Equations 1-3 on hand-computed examples, adaptation to new shapes, history ranking,
and the ``history similar`` command."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from history import cli_similar
from history.similarity import (
    ScoredRecord,
    adapt_config,
    adapt_split,
    best_match_score,
    candidate_configs,
    filtering_metric,
    interleave_tasks,
    kin_first,
    knob_match,
    knob_utilization,
    match_score,
    rank_history,
    repair,
    split_extents,
    task_leaders,
    utilization,
    with_kin_leader,
)
from history.store import HistoryStore
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob
from orchestrator.task import Task
from orchestrator.testing import TOY_TASK, toy_latency, toy_space
from orchestrator.testing.conformance import TOY_TARGET
from tests.plugins.gga.fake_history import FAR, NEAR, dense, toy_history

# Input extents a=56, b=20, c=12; record splits a=(2,2,7) (extent 28), b=(4,4,2) (32),
# c=(1,16) (16).
EXTENTS = {"a": 56, "b": 20, "c": 12}
RECORD = Config.of({"a": (2, 2, 7), "b": (4, 4, 2), "c": (1, 16), "unroll": 16})


def test_match_score_equation_1_by_hand():
    # a: divisors(28) = {1,2,4,7,14,28}, all divide 56 -> 6/6
    assert knob_match(28, 56) == 1.0
    # b: divisors(32) = {1,2,4,8,16,32}; of them {1,2,4} divide 20 -> 3/6
    assert knob_match(32, 20) == 0.5
    # c: divisors(16) = {1,2,4,8,16}; {1,2,4} divide 12 -> 3/5
    assert knob_match(16, 12) == pytest.approx(0.6)
    assert match_score(RECORD, EXTENTS) == pytest.approx((1 + 0.5 + 0.6) / 3)


def test_match_score_counts_a_missing_knob_as_no_match_and_ignores_choice_knobs():
    partial = Config.of({"a": (2, 2, 7), "unroll": 0})
    assert match_score(partial, EXTENTS) == pytest.approx(1 / 3)
    assert match_score(RECORD, {}) == 0.0


def test_utilization_equation_3_by_hand():
    # a: P = 2*7 = 14 < 56 -> 56 / (ceil(56/14) * 14) = 1
    assert knob_utilization((2, 2, 7), 56) == 1.0
    # b: P = 4*2 = 8 < 20 -> 20 / (3 * 8)
    assert knob_utilization((4, 4, 2), 20) == pytest.approx(20 / 24)
    # c: P = 16 >= 12 -> 12 / 16
    assert knob_utilization((1, 16), 12) == 0.75
    assert utilization(RECORD, EXTENTS) == pytest.approx(1 * 20 / 24 * 0.75)


def test_filtering_metric_equation_2_by_hand():
    # Th = 100 GFLOPS, gamma = 0.625, s = 0.7, omega = 2 -> 100 * 0.625 * 0.49
    assert filtering_metric(100.0, RECORD, EXTENTS) == pytest.approx(30.625)
    assert filtering_metric(100.0, RECORD, EXTENTS, omega=1) == pytest.approx(100 * 0.625 * 0.7)


def test_adapt_split_keeps_dividing_inner_factors_and_recomputes_the_outer_one():
    assert adapt_split((2, 2, 7), 56) == (4, 2, 7)
    # 8 divides 56 and is kept; 2 does not divide the 7 left, so it becomes 1 (nearest divisor)
    assert adapt_split((4, 2, 8), 56) == (7, 1, 8)
    # 16 does not divide 12: nearest divisor of 12 on a log scale is 12
    assert adapt_split((1, 16), 12) == (1, 12)
    assert adapt_split((3,), 10) == (10,)


def test_adapt_config_moves_a_history_config_to_another_shape():
    old = toy_space(dense(64, 64, 64))
    new = toy_space(dense(48, 64, 96))
    cfg = Config.of({"tile_m": (4, 4, 4), "tile_n": (2, 2, 16), "tile_k": (8, 8), "unroll": 16})
    assert old.validate(cfg) is None
    adapted = adapt_config(cfg, new)
    assert adapted is not None and new.validate(adapted) is None
    assert adapted["tile_m"] == (3, 4, 4) and adapted["tile_n"] == (3, 2, 16)
    assert adapted["tile_k"] == (8, 8) and adapted["unroll"] == 16


def test_adapted_configs_the_space_rejects_are_repaired_or_dropped():
    space = toy_space()
    # inner tiles 16 x 32 = 512 > 256: rejected by the toy check
    bad = Config.of({"tile_m": (1, 4, 16), "tile_n": (1, 2, 32), "tile_k": (8, 8), "unroll": 16})
    assert space.validate(bad) is not None
    fixed = repair(bad, space)
    assert fixed is not None and space.validate(fixed) is None
    changed = [k.name for k in space.knobs if fixed[k.name] != bad[k.name]]
    assert len(changed) == 1
    assert adapt_config(Config.of({"tile_m": (1, 64)}), space) is None  # knobs missing


def test_a_space_with_no_valid_neighbour_drops_the_config():
    knob = SplitKnob.perfect("t", 8, 2)
    space = Space(TOY_TASK, "toy", (knob, ChoiceKnob("u", (0, 1))), "x:y",
                  check=lambda c: "never" if c["u"] == 1 else None)
    assert adapt_config(Config.of({"t": (2, 4), "u": 1}), space) == Config.of({"t": (2, 4), "u": 0})
    space = Space(TOY_TASK, "toy", (knob,), "x:y", check=lambda c: "never")
    assert adapt_config(Config.of({"t": (2, 4)}), space) is None


def test_rank_history_orders_by_metric_and_excludes_the_input_task():
    history = toy_history([*NEAR, *FAR, TOY_TASK])
    space = toy_space()
    ranked = rank_history(history, space)
    assert ranked and all(r.task != TOY_TASK for r in ranked)
    metrics = [r.metric for r in ranked]
    assert metrics == sorted(metrics, reverse=True)
    # the near tasks share every divisor with 64: score 1; the prime task 0.5
    assert {r.match for r in ranked if r.task in NEAR} == {1.0}
    assert {r.match for r in ranked if r.task in FAR} == {0.5}
    assert ranked[0].task in NEAR
    assert best_match_score(history, space) == 1.0
    assert best_match_score(toy_history(FAR), space) == 0.5
    assert best_match_score(None, space) == 0.0


def test_candidate_configs_are_distinct_valid_and_skip_known_ones():
    space = toy_space()
    ranked = rank_history(toy_history(NEAR), space)
    first = candidate_configs(ranked, space, 10)
    assert len(first) == 10 and len({c.key for c, _ in first}) == 10
    assert all(space.validate(c) is None for c, _ in first)
    again = candidate_configs(ranked, space, 10, skip={first[0][0].key})
    assert first[0][0].key not in {c.key for c, _ in again}


def test_interleave_tasks_takes_each_tasks_records_in_turn_keeping_their_order():
    ranked = rank_history(toy_history([*NEAR, *FAR]), toy_space())
    mixed = interleave_tasks(ranked)
    assert sorted(map(id, mixed)) == sorted(map(id, ranked))  # a reordering, nothing lost
    first_of = list(dict.fromkeys(r.task for r in ranked))  # tasks by their best record
    assert [r.task for r in mixed[:3]] == first_of
    assert [r.task for r in mixed[3:6]] == first_of
    for task in first_of:  # within a task, still best metric first
        own = [r for r in mixed if r.task == task]
        assert own == [r for r in ranked if r.task == task]
    assert interleave_tasks([]) == []


def test_task_leaders_take_the_first_candidate_of_each_task_in_ranking_order():
    space = toy_space()
    ranked = rank_history(toy_history([*NEAR, *FAR]), space)
    leaders = task_leaders(ranked, space, 3)
    order = candidate_configs(ranked, space, len(ranked))
    assert [rec.task for _, rec in leaders] == list(dict.fromkeys(rec.task for _, rec in order))
    for cfg, rec in leaders:  # each is its task's first candidate in the ranking
        assert cfg.key == next(c.key for c, r in order if r.task == rec.task)
    assert task_leaders(ranked, space, 2) == leaders[:2]
    skipped = task_leaders(ranked, space, 3, skip={leaders[0][0].key})
    assert skipped[0][0].key != leaders[0][0].key and len(skipped) == 3
    # reading only the first record finds one task
    assert [rec.task for _, rec in task_leaders(ranked, space, 3, read=1)] == [ranked[0].task]
    assert task_leaders([], space, 3) == []


def test_kin_first_puts_tasks_of_the_same_kernel_and_stride_first_keeping_the_order():
    def conv(c: int, r: int, stride: int) -> Task:
        return Task.create("conv2d", {"N": 1, "C": c, "H": 14, "W": 14, "K": 64, "R": r, "S": r,
                                      "stride": stride, "pad": r // 2})

    me = conv(64, 1, 2)
    assert me.structure == (("R", 1), ("S", 1), ("stride", 2), ("dilation", 1))
    tasks = [conv(32, 3, 2), conv(128, 1, 2), conv(32, 1, 1), conv(16, 1, 2)]
    result = MeasureResult(RECORD, MeasureStatus.OK, (1e-3,))
    scored = [ScoredRecord(t, result, 10.0 - i, 1.0, 1.0, 10.0 - i) for i, t in enumerate(tasks)]
    assert [r.task for r in kin_first(scored, me)] == [tasks[1], tasks[3], tasks[0], tasks[2]]
    assert kin_first(scored, conv(8, 5, 1)) == scored  # no kin: the order is the metric's
    assert dense(8, 8, 8).structure == ()  # dense has no structure: every dense task is kin


def test_with_kin_leader_hands_the_last_lead_slot_to_the_best_task_of_the_same_structure():
    def conv(c: int, r: int, stride: int) -> Task:
        return Task.create("conv2d", {"N": 1, "C": c, "H": 14, "W": 14, "K": 64, "R": r, "S": r,
                                      "stride": stride, "pad": r // 2})

    space = toy_space()
    configs = list(space)[:5]
    tasks = [conv(32, 3, 2), conv(128, 3, 2), conv(16, 5, 1), conv(64, 3, 1), conv(8, 3, 1)]
    scored = [ScoredRecord(t, MeasureResult(c, MeasureStatus.OK, (1e-3,)), 10.0 - i, 1.0, 1.0,
                           10.0 - i) for i, (t, c) in enumerate(zip(tasks, configs))]
    leaders = task_leaders(scored, space, 2)
    assert [rec.task for _, rec in leaders] == tasks[:2]
    me = conv(64, 3, 1)  # no leader's task has its kernel and stride
    got = with_kin_leader(leaders, scored, space, me)
    assert [rec.task for _, rec in got] == [tasks[0], tasks[3]]  # the best kin task's leader
    assert got[1][0].key == configs[3].key
    # a leader of the same structure already: nothing changes
    assert with_kin_leader(leaders, scored, space, conv(64, 3, 2)) == leaders
    # no kin task, or none within what is read, or it was measured: nothing changes
    assert with_kin_leader(leaders, scored, space, conv(64, 7, 2)) == leaders
    assert with_kin_leader(leaders, scored, space, me, read=3) == leaders
    skipped = with_kin_leader(leaders, scored, space, me, skip={configs[3].key})
    assert [rec.task for _, rec in skipped] == [tasks[0], tasks[4]]
    assert with_kin_leader([], scored, space, me) == []


def test_split_extents_lists_split_knobs_only():
    assert split_extents(toy_space()) == {"tile_m": 64, "tile_n": 64, "tile_k": 64}


def _record(store: HistoryStore, task, configs) -> None:
    task_id, target_id = store.ensure_task(task), store.ensure_target(TOY_TARGET)
    store.record(run_id=None, task_id=task_id, target_id=target_id, results=[
        MeasureResult(c, MeasureStatus.OK, (toy_latency(c),)) for c in configs])


def test_history_similar_command_lists_the_closest_records(tmp_path, monkeypatch):
    store = HistoryStore.open(tmp_path / "h.db")
    near, far = NEAR[0], FAR[0]
    _record(store, near, list(toy_space(near))[:20])
    _record(store, far, list(toy_space(far)))
    store.close()
    monkeypatch.setattr(cli_similar, "input_space", lambda task: toy_space(task))
    app = typer.Typer()
    app.command()(cli_similar.similar_command)
    result = CliRunner().invoke(app, ["--op", "dense", "--shape", "M=64,K=64,N=64", "--k", "5",
                                      "--db", str(tmp_path / "h.db"), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert len(rows) == 5
    assert rows[0]["task"]["shape"] == near.params and rows[0]["match_score"] == 1.0
    assert all(r["adapted_config"] is not None for r in rows)
    text = CliRunner().invoke(app, ["--op", "dense", "--shape", "M=64,K=64,N=64",
                                    "--db", str(tmp_path / "h.db")])
    assert text.exit_code == 0 and "match s" in text.output
