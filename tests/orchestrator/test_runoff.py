"""The run-off at the end of a run: its contenders, its tally, and the loop's ``runoff``."""

from __future__ import annotations

import math

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, tune
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.runoff import (SEARCHER, by_config, contenders, measure_interleaved, tally,
                                 winner)
from orchestrator.testing import TOY_TASK, toy_latency, toy_space

CONFIGS = list(toy_space())[:4]


def ok(cfg, *lat):
    return MeasureResult(cfg, MeasureStatus.OK, tuple(lat), measurer="m")


def failed(cfg):
    return MeasureResult(cfg, MeasureStatus.RUN_ERROR, error="x", measurer="m")


def test_contenders_are_the_fastest_by_their_later_timings_where_there_are_some():
    a, b, c, d = CONFIGS
    trials = [ok(a, 1.0), ok(b, 2.0), failed(c), ok(d, 3.0)]
    # a's first timing was lucky: timed again it runs at 4.0, behind b and d
    got = contenders(trials, {a.key: [ok(a, 4.0), ok(a, 5.0)]}, k=3)
    assert got == [(b, 2.0), (d, 3.0), (a, 4.5)]
    assert contenders(trials, {}, k=2) == [(a, 1.0), (b, 2.0)]
    assert contenders([failed(c)], {}, k=2) == []


def test_the_tally_orders_by_median_and_says_whether_the_pick_changed():
    a, b, c, _ = CONFIGS
    picked = [(a, 1.0), (b, 1.1), (c, 1.2)]
    timings = {a.key: [ok(a, 2.0), ok(a, 2.2), failed(a)],
               b.key: [ok(b, 1.5), ok(b, 1.4), ok(b, 9.0)],
               c.key: [failed(c), failed(c), failed(c)]}
    r = tally(7, picked, timings)
    assert [e.config for e in r.entries] == [b, a, c] and r.run_id == 7
    assert r.winner.median == 1.5 and r.entries[1].median == pytest.approx(2.1)
    assert r.entries[2].rounds == (None, None, None) and math.isinf(r.entries[2].median)
    assert r.changed  # the run had a as its best
    best = r.best("m")
    assert best.config == b and best.latencies == (1.5, 1.4, 9.0) and best.latency == 1.5
    same = tally(7, picked, {a.key: [ok(a, 1.0)], b.key: [ok(b, 2.0)]})
    assert not same.changed and same.winner.config == a
    # without the run's estimates: the lowest median of the timings alone
    stored = [ok(a, 2.0), ok(b, 1.5), failed(c), ok(a, 2.2), ok(b, 1.4), failed(c)]
    assert by_config(stored) == {a.key: [stored[0], stored[3]], b.key: [stored[1], stored[4]],
                                 c.key: [stored[2], stored[5]]}
    assert winner(by_config(stored)) == b
    assert winner(by_config([failed(c)])) is None and winner({}) is None


class DriftingMachine:
    """A measurer of the toy landscape on a machine that slows down from one call to the
    next: the n-th call times every config at ``1 + n / 2`` times its true latency. A
    config timed early in a run then looks faster than a truly faster one timed late."""

    name = "drifting"

    def __init__(self) -> None:
        self.n = 0  # timings so far
        self.rounds: list[list[str]] = []  # the config keys of each call

    def measure(self, space, target, configs):
        self.rounds.append([c.key for c in configs])
        slower = 1 + len(self.rounds) / 2
        out = []
        for c in configs:
            self.n += 1
            lat = toy_latency(c) * slower
            out.append(MeasureResult(c, MeasureStatus.OK, (lat,) * 3, measurer=self.name))
        return out

    def close(self):
        pass


class Reversed:
    """The toy space's configs from the slowest to the fastest, so the truly fastest come
    last, when the drifting machine is slowest."""

    def start(self, context):
        self.left = sorted(context.space, key=toy_latency, reverse=True)

    def propose(self, n):
        out, self.left = self.left[:n], self.left[n:]
        return out

    def tell(self, results):
        pass


@pytest.fixture
def drifting(toy_plugin):
    m = DriftingMachine()

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("drifting", lambda: m)

        @hookimpl
        def orchestrator_add_searchers(self, registry):
            registry.add("reversed", Reversed)

    return m, load_plugins(extra=[("toy", toy_plugin), ("p", Plugin())], autoload=False)


def run(plugins, db, target, **kw):
    return tune(TOY_TASK, target=target, db=db, plugins=plugins, measurer="drifting",
                searcher="reversed", space_generator="toy", trials=kw.pop("trials", 24), **kw)


def test_the_runoff_picks_the_truly_fastest_contender_where_the_run_picked_an_early_one(
        drifting, db, toy_target):
    m, plugins = drifting
    plain = run(plugins, db, toy_target)
    assert plain.runoff is None
    by_truth = sorted((r for r in db.results(1, 1)), key=lambda r: toy_latency(r.config))
    assert plain.best.config != by_truth[0].config  # the drift fooled the run

    timed = m.n
    s = run(plugins, db, toy_target, runoff=24, runoff_rounds=3)  # the finished run, rerun
    assert s.run.run_id == plain.run.run_id  # the run-off is not part of the run's identity
    assert s.trials == 24 and s.measured == 0 and m.n == timed + 24 * 3
    # every contender timed once per round, the order reversed every other round
    assert m.rounds[-2] == m.rounds[-1][::-1] == m.rounds[-3][::-1]
    assert s.runoff is not None and len(s.runoff.entries) == 24 and s.runoff.changed
    assert s.best.config == by_truth[0].config and s.runoff.winner.config == s.best.config
    assert s.best.latencies == s.runoff.winner.rounds and len(s.best.latencies) == 3

    runs = {r.id: r for r in db.runs()}
    ro = runs[s.runoff.run_id]
    assert ro.searcher == SEARCHER and ro.status == "finished" and ro.measured == 24 * 3
    assert f"run-off of run {s.run.run_id}" in ro.stop_reason
    assert runs[s.run.run_id].measured == 24  # the run's own measurements are unchanged


def test_a_rerun_reads_a_finished_runoff_and_other_rounds_make_a_new_one(
        drifting, db, toy_target):
    m, plugins = drifting
    first = run(plugins, db, toy_target, trials=16, runoff=4, runoff_rounds=2)
    timed = m.n
    again = run(plugins, db, toy_target, trials=16, runoff=4, runoff_rounds=2)
    assert m.n == timed  # nothing timed again
    assert again.runoff == first.runoff and again.best == first.best
    more = run(plugins, db, toy_target, trials=16, runoff=4, runoff_rounds=3)
    assert m.n == timed + 4 * 3 and more.runoff.run_id != first.runoff.run_id
    assert [e.config for e in more.runoff.entries][0] == more.best.config


def test_an_interrupted_runoff_leaves_no_run_and_is_timed_again(drifting, db, toy_target):
    m, plugins = drifting
    run(plugins, db, toy_target, trials=16)
    real = m.measure

    def interrupted(space, target, configs):
        if len(m.rounds) >= 3:  # two batches, one round of the run-off, then stop
            raise KeyboardInterrupt
        return real(space, target, configs)

    m.measure = interrupted
    with pytest.raises(KeyboardInterrupt):
        run(plugins, db, toy_target, trials=16, runoff=3, runoff_rounds=2)
    assert [r.searcher for r in db.runs()] == ["reversed"] and db.runs()[0].status == "finished"
    m.measure = real
    s = run(plugins, db, toy_target, trials=16, runoff=3, runoff_rounds=2)
    assert len(s.runoff.entries) == 3 and all(len(e.rounds) == 2 for e in s.runoff.entries)


def test_runoff_options_are_checked(drifting, db, toy_target):
    _, plugins = drifting
    with pytest.raises(OrchestratorError, match="--runoff must be 0"):
        run(plugins, db, toy_target, runoff=-1)
    with pytest.raises(OrchestratorError, match="--runoff-rounds must be positive"):
        run(plugins, db, toy_target, runoff=2, runoff_rounds=0)
    assert db.runs() == []
    assert TuneOptions(runoff=3).resume_key(TOY_TASK, toy_target, "toy") == \
        TuneOptions().resume_key(TOY_TASK, toy_target, "toy")


def test_measure_interleaved_times_each_distinct_config_once_a_round():
    m = DriftingMachine()
    a, b, _, _ = CONFIGS
    got = measure_interleaved(m, None, None, [a, b, a], rounds=3)
    assert m.rounds == [[a.key, b.key], [b.key, a.key], [a.key, b.key]]
    assert [len(v) for v in got.values()] == [3, 3]
