"""Confirming a new best by timing it again: the helpers and the loop's ``confirm``."""

from __future__ import annotations

import pytest

from orchestrator.confirm import confirmed, confirmed_best, split_retimings
from orchestrator.errors import OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, tune
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.testing import TOY_TASK, toy_latency, toy_space

CONFIGS = list(toy_space())[:3]


def ok(cfg, *lat):
    return MeasureResult(cfg, MeasureStatus.OK, tuple(lat), measurer="m")


def test_later_records_of_a_config_are_its_retimings():
    a, b, c = CONFIGS
    trials, again = split_retimings([ok(a, 1.0), ok(b, 2.0), ok(a, 3.0), ok(c, 1.5), ok(a, 5.0)])
    assert [r.config for r in trials] == [a, b, c]
    assert list(again) == [a.key] and [r.latency for r in again[a.key]] == [3.0, 5.0]


def test_a_confirmed_result_pools_only_the_retimings_and_ignores_failures():
    a, b, _ = CONFIGS
    failed = MeasureResult(a, MeasureStatus.RUN_ERROR, error="x", measurer="m")
    c = confirmed([ok(a, 3.0, 4.0), failed, ok(a, 5.0)])
    assert c is not None and c.config == a and c.latencies == (3.0, 4.0, 5.0) and c.latency == 4.0
    assert confirmed([failed]) is None
    # b was timed once, lucky; a's first timing is ignored, its re-timing counts.
    best = confirmed_best(split_retimings([ok(a, 1.0), ok(b, 0.5), ok(a, 2.0)])[1])
    assert best is not None and best.config == a and best.latency == 2.0
    assert confirmed_best(split_retimings([ok(a, 1.0), ok(b, 0.5)])[1]) is None


class LuckyFirstTimings:
    """A measurer of the toy landscape whose first timing of every config is twice as fast
    as the config runs (the winner's curse, made certain); later timings are true.
    ``lucky``: how many of a config's first timings are so (1: the one that picked it)."""

    name = "lucky"

    def __init__(self, lucky: int = 1) -> None:
        self.lucky = lucky
        self.timed: dict[str, int] = {}
        self.batches: list[list[str]] = []

    def measure(self, space, target, configs):
        self.batches.append([c.key for c in configs])
        out = []
        for c in configs:
            n = self.timed.get(c.key, 0)
            self.timed[c.key] = n + 1
            lat = toy_latency(c) * (0.5 if n < self.lucky else 1.0)
            out.append(MeasureResult(c, MeasureStatus.OK, (lat,) * 3, measurer=self.name))
        return out

    def close(self):
        pass


@pytest.fixture
def lucky(toy_plugin):
    m = LuckyFirstTimings()

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("lucky", lambda: m)

    return m, load_plugins(extra=[("toy", toy_plugin), ("lucky", Plugin())], autoload=False)


def run(plugins, db, target, **kw):
    return tune(TOY_TASK, target=target, db=db, plugins=plugins, measurer="lucky",
                space_generator="toy", **kw)


def test_without_confirm_the_best_is_a_lucky_first_timing(lucky, db, toy_target):
    _, plugins = lucky
    s = run(plugins, db, toy_target, trials=24, seed=1)
    assert s.retimed == 0 and s.best.latency == pytest.approx(0.5 * toy_latency(s.best.config))


def test_with_confirm_the_best_is_a_later_timing_and_retimings_are_not_trials(
        lucky, db, toy_target):
    m, plugins = lucky
    s = run(plugins, db, toy_target, trials=24, seed=1, confirm=2)
    assert s.trials == s.measured == 24 and s.retimed > 0 and s.retimed % 2 == 0
    assert s.best.latency == pytest.approx(toy_latency(s.best.config))
    assert s.best.latencies == (s.best.latency,) * 6  # two re-timings of three repeats each
    stored = db.results(1, 1)
    assert len(stored) == 24 + s.retimed  # every timing is kept in history
    assert sum(m.timed.values()) == len(stored)
    # Confirmed bests are true latencies, so the truly fastest config's lucky first timing
    # always beat the confirmed best of its time: it was timed again and is the best.
    trials, again = split_retimings(stored)
    assert len(again) == s.retimed // 2 and all(len(v) == 2 for v in again.values())
    fastest = min(trials, key=lambda r: toy_latency(r.config)).config
    assert fastest.key in again and s.best.config == fastest


def test_the_retimings_of_a_config_go_to_the_measurer_as_one_batch(lucky, db, toy_target):
    """So that a measurer may build the config once for all of them (``local`` does)."""
    m, plugins = lucky
    s = run(plugins, db, toy_target, trials=24, seed=1, confirm=3)
    retimings = [b for b in m.batches if len(b) == 3 and len(set(b)) == 1]
    assert s.retimed > 0 and len(retimings) * 3 == s.retimed
    assert sum(len(b) for b in m.batches) == 24 + s.retimed


def test_a_confirmed_run_resumes_with_its_confirmed_best(lucky, toy_plugin, db, toy_target):
    m, plugins = lucky
    first = run(plugins, db, toy_target, trials=16, seed=2, confirm=1)
    timed = sum(m.timed.values())
    again = run(plugins, db, toy_target, trials=16, seed=2, confirm=1)
    assert sum(m.timed.values()) == timed  # nothing measured or re-timed twice
    assert again.trials == 16 and again.retimed == first.retimed
    assert again.best.latency == first.best.latency and again.best.config == first.best.config
    # Confirmation is part of the run's identity: without it, another run starts.
    plain = run(plugins, db, toy_target, trials=16, seed=2)
    assert plain.run.run_id != first.run.run_id and plain.retimed == 0


def test_confirm_must_not_be_negative(lucky, db, toy_target):
    _, plugins = lucky
    with pytest.raises(OrchestratorError, match="--confirm must be 0"):
        run(plugins, db, toy_target, confirm=-1)
    assert TuneOptions().resume_key(TOY_TASK, toy_target, "toy") == \
        TuneOptions(confirm=0).resume_key(TOY_TASK, toy_target, "toy")
    assert "confirm" not in TuneOptions().resume_key(TOY_TASK, toy_target, "toy")


def test_a_run_interrupted_before_its_retimings_makes_them_when_resumed(lucky, db, toy_target):
    m, plugins = lucky
    real_measure = m.measure

    def interrupted(space, target, configs):
        if any(m.timed.get(c.key) for c in configs):  # the first re-timing
            raise KeyboardInterrupt
        return real_measure(space, target, configs)

    m.measure = interrupted
    with pytest.raises(KeyboardInterrupt):
        run(plugins, db, toy_target, trials=16, seed=3, confirm=1)
    assert len(db.results(1, 1)) == 8 and db.runs()[0].status == "interrupted"
    m.measure = real_measure
    s = run(plugins, db, toy_target, trials=16, seed=3, confirm=1)
    stored = db.results(1, 1)
    trials, again = split_retimings(stored)
    # the first batch's fastest config was timed again when the run resumed, before the
    # second batch, and counts at its true speed
    first_fastest = min(trials[:8], key=lambda r: r.latency).config
    assert stored[8].config == first_fastest and first_fastest.key in again
    assert s.trials == 16 and s.retimed == len(stored) - 16
    assert s.best.latency == pytest.approx(toy_latency(s.best.config))


class RecordingSearcher:
    """The toy space's configs in order; remembers every confirmed result it is told."""

    def __init__(self) -> None:
        self.told: list[MeasureResult] = []
        self.confirmed: list[MeasureResult] = []

    def start(self, context):
        self.left = list(context.space)
        self.confirmed.clear()

    def propose(self, n):
        out, self.left = self.left[:n], self.left[n:]
        return out

    def tell(self, results):
        self.told += results

    def tell_confirmed(self, results):
        # told after the results they confirm (on resume, after start: told the first time)
        assert all(r.config.key in {t.config.key for t in self.told} for r in results)
        self.confirmed += results


def test_a_searcher_that_takes_confirmed_results_is_told_each_one(toy_plugin, db, toy_target):
    m = LuckyFirstTimings()
    searcher = RecordingSearcher()

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("lucky", lambda: m)

        @hookimpl
        def orchestrator_add_searchers(self, registry):
            registry.add("recording", lambda: searcher)

    plugins = load_plugins(extra=[("toy", toy_plugin), ("p", Plugin())], autoload=False)
    s = run(plugins, db, toy_target, trials=16, searcher="recording", confirm=2)
    _, again = split_retimings(db.results(1, 1))
    assert sorted(r.config.key for r in searcher.confirmed) == sorted(again)
    for r in searcher.confirmed:  # the true speed, from the two later timings alone
        assert r.latency == pytest.approx(toy_latency(r.config)) and len(r.latencies) == 6
    assert s.best.config.key in again
    # A resumed run tells the searcher its earlier confirmations after start.
    run(plugins, db, toy_target, trials=16, searcher="recording", confirm=2)
    assert sorted(r.config.key for r in searcher.confirmed) == sorted(again)
