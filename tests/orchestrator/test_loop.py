from __future__ import annotations

import pytest

from orchestrator.errors import OrchestratorError, UnknownComponentError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, tune
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.testing import TOY_TASK, InterruptAfter, toy_latency


def run(plugins, db, target, **kw):
    # random search unless a test says otherwise: its batches and starts are the simplest
    kw.setdefault("searcher", "random")
    kw.setdefault("measurer", "toy-replay")
    kw.setdefault("space_generator", "toy")
    return tune(TOY_TASK, target=target, db=db, plugins=plugins, **kw)


def test_random_search_spends_the_budget_and_records_everything(toy_plugins, db, toy_target):
    s = run(toy_plugins, db, toy_target, trials=30, seed=1)
    assert s.trials == s.measured == 30 and s.reused == 0 and s.stop_reason == "trials"
    stored = db.results(1, 1)
    assert len(stored) == 30 and len({r.config.key for r in stored}) == 30
    assert s.best.latency == min(toy_latency(r.config) for r in stored)
    assert db.runs()[0].status == "finished"


def test_grid_search_ends_when_the_space_is_exhausted(toy_plugins, db, toy_target):
    pruned = load_plugins(extra=[("toy", toy_plugins.pm.get_plugin("toy")), ("small", _Small())],
                          autoload=False)
    s = run(pruned, db, toy_target, searcher="grid", pruners=("small",), trials=10_000)
    assert s.stop_reason == "space_exhausted" and s.trials == s.run.space.size


class _Small:
    @hookimpl
    def orchestrator_add_pruners(self, registry):
        class P:
            def prune(self, space, target):
                return space.with_candidates(list(space)[:12], "first 12")
        registry.add("small", P)


def test_a_second_run_reuses_history_instead_of_measuring(toy_plugins, toy_plugin, db, toy_target):
    run(toy_plugins, db, toy_target, searcher="grid", trials=20)
    calls = toy_plugin.measurer.calls
    # Another seed of random search over the same task: the grid's 20 configs are known.
    s = run(toy_plugins, db, toy_target, searcher="random", seed=5, trials=20)
    assert toy_plugin.measurer.calls - calls == s.measured
    assert len({r.config.key for r in db.results(1, 1)}) == len(db.results(1, 1))


def test_an_interrupted_run_resumes_without_measuring_again(toy_plugins, toy_plugin, db, toy_target):
    plugins = load_plugins(extra=[("toy", toy_plugin), ("stop", InterruptAfter(2))], autoload=False)
    with pytest.raises(KeyboardInterrupt):
        run(plugins, db, toy_target, trials=40, seed=3, batch_size=8)
    assert db.runs()[0].status == "interrupted"
    first = [r.config.key for r in db.results(1, 1)]
    assert len(first) == 16
    calls = toy_plugin.measurer.calls
    s = run(toy_plugins, db, toy_target, trials=40, seed=3, batch_size=8)
    assert s.run.resumed_trials == 16 and s.trials == 40 and s.measured == 24
    assert toy_plugin.measurer.calls - calls == 24
    keys = [r.config.key for r in db.results(1, 1)]
    assert keys[:16] == first and len(set(keys)) == 40
    assert len(db.runs()) == 1 and db.runs()[0].status == "finished"


def test_early_stop_and_time_budget(toy_plugins, db, toy_target):
    s = run(toy_plugins, db, toy_target, trials=5000, early_stop=16, batch_size=4, seed=2)
    assert s.stop_reason == "early_stop" and s.trials < 5000
    s = run(toy_plugins, db, toy_target, trials=5000, seconds=0.0, seed=9)
    assert s.stop_reason == "seconds" and s.trials == 0


def test_invalid_proposals_are_recorded_without_measuring(toy_plugin, db, toy_target):
    from orchestrator.space import Config

    class Bad:
        @hookimpl
        def orchestrator_add_searchers(self, registry):
            class S:
                def start(self, context):
                    self.done = False

                def propose(self, n):
                    if self.done:
                        return []
                    self.done = True
                    return [Config.of({"tile_m": [1, 1, 64], "tile_n": [1, 1, 64],
                                       "tile_k": [1, 64], "unroll": 0})]

                def tell(self, results):
                    self.results = results
            registry.add("bad", S)

    plugins = load_plugins(extra=[("toy", toy_plugin), ("bad", Bad())], autoload=False)
    s = run(plugins, db, toy_target, searcher="bad", trials=5)
    assert s.statuses == {"invalid_config": 1} and toy_plugin.measurer.calls == 0
    assert db.results(1, 1)[0].status is MeasureStatus.INVALID_CONFIG


def test_unknown_components_fail_before_anything_is_recorded(toy_plugins, db, toy_target):
    with pytest.raises(UnknownComponentError, match="unknown searcher"):
        run(toy_plugins, db, toy_target, searcher="nope")
    with pytest.raises(UnknownComponentError, match="unknown pruner"):
        run(toy_plugins, db, toy_target, pruners=("nope",))
    with pytest.raises(OrchestratorError, match="trials must be positive"):
        run(toy_plugins, db, toy_target, trials=0)
    assert db.runs() == []


def test_rerunning_a_finished_run_measures_nothing_and_a_larger_budget_continues_it(
        toy_plugins, toy_plugin, db, toy_target):
    first = run(toy_plugins, db, toy_target, trials=16, seed=4)
    calls = toy_plugin.measurer.calls
    again = run(toy_plugins, db, toy_target, trials=16, seed=4)
    assert toy_plugin.measurer.calls == calls and again.measured == 0 and again.trials == 16
    assert again.best == first.best
    more = run(toy_plugins, db, toy_target, trials=24, seed=4)
    assert more.measured == 8 and more.trials == 24 and toy_plugin.measurer.calls == calls + 8
    assert len(db.runs()) == 1


def test_a_rerun_with_nothing_left_to_do_leaves_the_run_as_it_was(toy_plugins, db, toy_target,
                                                                 monkeypatch):
    import history.store
    from datetime import datetime, timezone

    run(toy_plugins, db, toy_target, trials=16, seed=4)
    [first] = db.runs()
    later = datetime(2031, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    monkeypatch.setattr(history.store, "utcnow", lambda: later)
    run(toy_plugins, db, toy_target, trials=16, seed=4)
    run(toy_plugins, db, toy_target, trials=8, seed=4)  # a smaller budget: also done
    assert db.runs() == [first]
    run(toy_plugins, db, toy_target, trials=24, seed=4)  # more to do: the run goes on
    [grown] = db.runs()
    assert grown.status == "finished" and grown.max_trials == 24 and grown.measured == 24
    assert grown.finished_at.startswith("2031-01-02T03:04:05")
    assert not first.finished_at.startswith("2031")


def test_results_of_another_measurer_never_stand_in_for_a_measurement(toy_plugins, toy_plugin,
                                                                       db, toy_target):
    from dataclasses import replace

    from orchestrator.testing import toy_results
    static = [replace(r, measurer="static") for r in toy_results()]
    db.record(run_id=None, task_id=db.ensure_task(TOY_TASK), target_id=db.ensure_target(toy_target),
              results=static)
    s = run(toy_plugins, db, toy_target, trials=12, seed=1)
    assert s.measured == 12 and s.reused == 0 and toy_plugin.measurer.calls == 12


class _Counting:
    """The toy landscape's latencies from a measurer that counts something besides timing:
    ``per_batch`` more of each count at every ``measure`` (no counts when None)."""

    name = "counting"

    def __init__(self, per_batch):
        self.per_batch = per_batch or {}
        self.counts = None if per_batch is None else dict.fromkeys(per_batch, 0)
        self.closed = 0

    def measure(self, space, target, configs):
        for k, v in self.per_batch.items():
            self.counts[k] += v
        return [MeasureResult(c, MeasureStatus.OK, (toy_latency(c),), measurer=self.name)
                for c in configs]

    def close(self):
        self.closed += 1


def test_the_summary_carries_the_measurers_counts_and_the_cli_says_them(toy_plugin, db,
                                                                        toy_target):
    from types import SimpleNamespace

    from orchestrator.cli import _counts_line

    made = []

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("counting", lambda **kw: made.append(_Counting(**kw)) or made[-1])

    plugins = load_plugins(extra=[("toy", toy_plugin), ("c", Plugin())], autoload=False)
    s = run(plugins, db, toy_target, trials=8, measurer="counting",
            measurer_options={"per_batch": None})
    assert s.measurer_counts == {}  # a measurer without counts
    s = run(plugins, db, toy_target, trials=8, seed=5, measurer="counting",
            measurer_options={"per_batch": {"guard_retimed": 3, "guard_slowed": 0}})
    assert s.measurer_counts == {"guard_retimed": 3, "guard_slowed": 0}
    two = [s, SimpleNamespace(measurer_counts={"guard_retimed": 1, "guard_slowed": 2})]
    assert _counts_line(two) == (
        "Measurer: 4 timing(s) taken again because the machine was slowed, 2 slowed timing(s) "
        "kept (the machine stayed slow) (contention guard, see README)")
    assert _counts_line([s]) == ("Measurer: 3 timing(s) taken again because the machine was "
                                 "slowed (contention guard, see README)")  # zeros left out
    assert _counts_line([SimpleNamespace(measurer_counts={"guard_retimed": 0})]) is None
    assert _counts_line([SimpleNamespace(measurer_counts={"other": 2})]) == "Measurer: 2 other"


class _Preparing(_Counting):
    """Notes when ``prepare`` is called, relative to the searcher's ``start``."""

    def __init__(self, events, per_batch=None):
        super().__init__(per_batch)
        self.events = events

    def prepare(self, space, target):
        self.events.append(("prepare", space.task.key, target.key))


def test_the_loop_prepares_the_measurer_before_the_searcher_starts(toy_plugin, toy_plugins, db,
                                                                   toy_target, monkeypatch):
    from plugins.baselines.random_search import RandomSearch

    events = []
    started = RandomSearch.start
    monkeypatch.setattr(RandomSearch, "start",
                        lambda self, ctx: events.append(("start",)) or started(self, ctx))

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("preparing", lambda **kw: _Preparing(events))

    plugins = load_plugins(extra=[("toy", toy_plugin), ("p", Plugin())], autoload=False)
    s = run(plugins, db, toy_target, trials=8, measurer="preparing")
    assert s.measured == 8
    assert events == [("prepare", TOY_TASK.key, toy_target.key), ("start",)]
    # A finished run, rerun, measures nothing: its measurer is not prepared.
    assert run(plugins, db, toy_target, trials=8, measurer="preparing").measured == 0
    assert events[2:] == [("start",)]
    # A measurer without prepare (the toy replay) is measured as before.
    assert run(toy_plugins, db, toy_target, trials=8, seed=3).measured == 8


def test_a_shared_measurer_serves_task_after_task_and_only_its_maker_closes_it(
        toy_plugin, db, toy_target):
    from orchestrator.loop import TuneOptions, make_measurer
    from orchestrator.task import Task

    events = []

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("preparing", lambda: _Preparing(events, {"guard_retimed": 2}))

    plugins = load_plugins(extra=[("toy", toy_plugin), ("p", Plugin())], autoload=False)
    options = TuneOptions(searcher="random", measurer="preparing", space_generator="toy",
                          trials=8)
    shared = make_measurer(options, plugins)
    other = Task.create("dense", {"M": 32, "K": 64, "N": 16}, name="toy_other")
    summaries = [tune(task, target=toy_target, db=db, plugins=plugins, options=options,
                      shared_measurer=shared) for task in (TOY_TASK, other, TOY_TASK)]
    assert [s.measured for s in summaries] == [8, 8, 0]  # the third is the first, resumed
    # Prepared for every task with trials to run; counts are each task's own, not the
    # running totals.
    assert [e[1] for e in events] == [TOY_TASK.key, other.key]
    assert [s.measurer_counts for s in summaries] == [{"guard_retimed": 2}] * 2 + [
        {"guard_retimed": 0}]
    assert shared.counts == {"guard_retimed": 4} and shared.closed == 0
    # Without a shared measurer, tune makes its own and closes it.
    made = []

    class Making:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("preparing", lambda: made.append(_Preparing([])) or made[-1])

    plugins = load_plugins(extra=[("toy", toy_plugin), ("m", Making())], autoload=False)
    tune(other, target=toy_target, db=db, plugins=plugins, options=options, seed=9)
    assert len(made) == 1 and made[0].closed == 1


def test_a_new_template_version_measures_again_and_keeps_the_old_measurements(
        toy_plugins, toy_plugin, db, toy_target):
    first = run(toy_plugins, db, toy_target, searcher="grid", trials=20)
    assert first.measured == 20
    # The toy generator after a schedule change: same name and knobs, version 2.
    after = type(toy_plugin)(template_version=2)
    bumped = load_plugins(extra=[("toy", after)], autoload=False)
    # The same options: version 1 would find its run finished and measure nothing.
    s = run(bumped, db, toy_target, searcher="grid", trials=20)
    assert (s.measured, s.reused) == (20, 0) and after.measurer.calls == 20
    assert s.run.run_id != first.run.run_id
    records = db.records()
    assert [r.template for r in records] == ["toy@1"] * 20 + ["toy@2"] * 20
    # The grid measured the very same configs again: version 1's were not its history.
    keys = [r.result.config.key for r in records]
    assert keys[20:] == keys[:20]
    # Version 2's own measurements are history from now on: the grid skips them.
    again = run(bumped, db, toy_target, searcher="grid", trials=20, seed=1)
    assert again.measured == 20
    assert not {r.config.key for r in db.results(1, 1, run_id=again.run.run_id)} & set(keys)


def test_cost_model_options_reach_the_model_and_start_a_run_of_their_own(toy_plugin, db,
                                                                          toy_target):
    made = []

    class Weighted:
        """A cost model with one option."""

        def __init__(self, weight: float = 1.0) -> None:
            made.append(weight)

        def fit(self, space, results):
            pass

        def predict(self, space, configs):
            return [0.0] * len(configs)

    class Models:
        @hookimpl
        def orchestrator_add_cost_models(self, registry):
            registry.add("weighted", Weighted)

    plugins = load_plugins(extra=[("toy", toy_plugin), ("models", Models())], autoload=False)
    first = run(plugins, db, toy_target, cost_model="weighted", trials=4)
    again = run(plugins, db, toy_target, cost_model="weighted",
                cost_model_options={"weight": "2.5"}, trials=4)
    assert made == [1.0, 2.5]  # converted from text, as --cost-model-opt gives it
    assert again.run.run_id != first.run.run_id
    with pytest.raises(OrchestratorError, match="give --cost-model too"):
        run(plugins, db, toy_target, cost_model_options={"weight": 2})
    assert "cost_model_options" not in TuneOptions(cost_model="weighted").resume_key(
        TOY_TASK, toy_target, "toy")


def test_a_searcher_done_before_the_space_is_says_so(toy_plugin, db, toy_target):
    class Three:
        @hookimpl
        def orchestrator_add_searchers(self, registry):
            class S:
                def start(self, context):
                    self.left = list(context.space)[:3]

                def propose(self, n):
                    out, self.left = self.left[:n], self.left[n:]
                    return out

                def tell(self, results):
                    pass
            registry.add("three", S)

    plugins = load_plugins(extra=[("toy", toy_plugin), ("three", Three())], autoload=False)
    s = run(plugins, db, toy_target, searcher="three", trials=10, batch_size=2)
    assert s.trials == 3 and s.stop_reason == "searcher_done"
    assert db.runs()[0].stop_reason == "searcher_done"


def test_a_space_that_history_covers_is_exhausted_though_the_run_tried_less(db, toy_plugins,
                                                                           toy_target):
    pruned = load_plugins(extra=[("toy", toy_plugins.pm.get_plugin("toy")), ("small", _Small())],
                          autoload=False)
    run(pruned, db, toy_target, searcher="grid", pruners=("small",), trials=5)
    # Another seed is another run; the grid skips the five configs history knows.
    s = run(pruned, db, toy_target, searcher="grid", pruners=("small",), trials=100, seed=1)
    assert (s.trials, s.run.space.size, s.stop_reason) == (7, 12, "space_exhausted")


def test_a_run_whose_measurer_breaks_is_marked_failed_and_keeps_its_results(toy_plugin, db,
                                                                           toy_target):
    class Breaks(_Counting):
        batches = 0

        def measure(self, space, target, configs):
            self.batches += 1
            if self.batches > 2:
                raise RuntimeError("the board went away")
            return super().measure(space, target, configs)

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("breaks", lambda: Breaks(None))

    plugins = load_plugins(extra=[("toy", toy_plugin), ("b", Plugin())], autoload=False)
    with pytest.raises(RuntimeError, match="went away"):
        run(plugins, db, toy_target, measurer="breaks", trials=20, batch_size=4)
    [r] = db.runs()
    assert (r.status, r.stop_reason, r.measured) == ("failed", "error", 8)


def test_the_default_searcher_is_auto_and_the_summary_says_what_it_chose(toy_plugins, db,
                                                                         toy_target):
    from orchestrator.cli import _summary_dict
    from orchestrator.task import Task

    assert TuneOptions().searcher == "auto"

    def default(task):
        return tune(task, target=toy_target, db=db, plugins=toy_plugins, measurer="toy-replay",
                    space_generator="toy", trials=8)

    first = default(TOY_TASK)
    assert first.run.searcher == "auto" and first.measured == 8
    assert first.searcher_note == "auto ran tl: best history match 0.000 < 0.75"  # no history
    other = default(Task.create("dense", {"M": 32, "K": 64, "N": 16}, name="toy_other"))
    # the toy task's results are history for this one
    assert other.searcher_note == "auto ran gga: best history match 0.857 >= 0.75"
    assert _summary_dict(other)["searcher_note"] == other.searcher_note
    again = default(TOY_TASK)  # finished: nothing searched, so nothing chosen to report
    assert again.measured == 0 and again.searcher_note == ""
    assert _summary_dict(again)["searcher_note"] is None
