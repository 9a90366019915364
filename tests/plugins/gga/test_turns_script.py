"""scripts/turns.py and scripts/gga_turns.py: runs that take turns batch by batch, each
timed by its own clock, on the synthetic conv space of the reproduce_gga tests (no TVM), and
once on the cuda templates."""

from __future__ import annotations

import argparse
import dataclasses
import json
import threading
from types import SimpleNamespace

import pytest

from history.store import HistoryStore
from orchestrator.hookspecs import hookimpl
from orchestrator.space import Config
from tests.plugins.gga.test_reproduce_script import toy_experiment
from tests.scripts_under_test import load_script


def test_the_baton_goes_round_and_skips_who_left():
    turns = load_script("turns")
    baton = turns.Baton(["a", "b", "c"])
    log: list[str] = []

    def body(name: str, rounds: int) -> None:
        for _ in range(rounds):
            baton.acquire(name)
            log.append(name)
            baton.release(name)
        baton.acquire(name)
        baton.leave(name)

    threads = [threading.Thread(target=body, args=(n, k)) for n, k in (("a", 3), ("b", 1), ("c", 2))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert log == ["a", "b", "c", "a", "c", "a"]


def test_own_seconds_are_the_clock_at_the_end_of_the_turn_that_measured_each_trial():
    turns = load_script("turns")
    gt = load_script("gga_turns")
    ticks = [turns.Tick(2, 1.5), turns.Tick(10, 4.0), turns.Tick(18, 6.0)]
    assert gt.own_seconds(ticks, 12) == (1.5, 1.5) + (4.0,) * 8 + (6.0, 6.0)


class _Order:
    """Which searcher each measured batch came from, in order."""

    def __init__(self) -> None:
        self.log: list[str] = []

    @hookimpl
    def orchestrator_results_measured(self, run, results, trials_done, best):
        self.log.append(run.searcher)


def test_searchers_take_turns_batch_by_batch_and_report_their_own_seconds(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    turns = load_script("turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=24,
                         budgets={"xgb": 24, "gga": 16, "ga": 16}, pruned=False)
    rg.run_all(exp, history_only=True)  # the base history of both layers
    order = _Order()
    exp.plugins.pm.register(order)
    (job,) = rg.left_out(exp)
    task, history = job.task, job.history
    assert [t.name for t in history] == ["r18_l3ds"]  # left out
    gt.run_layer(exp, task, history)
    # xgb, gga, ga in turn, each turn one measured batch; each needs three: xgb 3 x 8,
    # gga its lead batch (one config: one core on the toy target), then 7 and 8
    assert order.log == ["xgb", "gga", "ga"] * 3
    work = gt.turns_dir(exp, task)
    gga_ticks = turns.read_clock(work / "gga.clock.jsonl")
    assert [t.trials for t in gga_ticks] == [1, 8, 16]
    assert [t.trials for t in turns.read_clock(work / "xgb.clock.jsonl")] == [8, 16, 24]
    assert all(a.seconds <= b.seconds for a, b in zip(gga_ticks, gga_ticks[1:]))
    res = gt.layer_turns(exp, task)
    assert len(res.curves["xgb"].best) == 24 and res.match == 1.0 and res.reference > 0
    assert res.curves["gga"].seconds[0] == gga_ticks[0].seconds
    text = gt.report(exp, [res], "header", "cmd").read_text()
    assert "| r18_l4ds | 1.000 | gga | 16 |" in text and "Targets met:" in text
    assert (exp.out / "turns-r18_l4ds.png").exists()
    # a rerun resumes: nothing is measured again and the clocks do not move
    exp.plugins.pm.unregister(order)
    gt.run_layer(exp, task, history)
    assert turns.read_clock(work / "gga.clock.jsonl") == gga_ticks
    store = HistoryStore.open(work / "xgb.db", create=False)
    assert store.count() == 24
    store.close()


class _Kept:
    """A measurer a test keeps: counts its batches and whether anyone closed it."""

    def __init__(self, inner) -> None:
        self.inner, self.batches, self.closed = inner, 0, False

    def measure(self, space, target, configs):
        self.batches += 1
        return self.inner.measure(space, target, configs)

    def close(self) -> None:
        self.closed = True


def test_each_searcher_keeps_one_measurer_for_all_its_runs(tmp_path, monkeypatch):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=16,
                         budgets={"xgb": 16, "gga": 16, "ga": 16}, pruned=False,
                         keep_workers=True)
    rg.run_all(exp, history_only=True)
    warmed = []

    def warm(scratch, *, options, plugins, target, name):
        warmed.append((name, options.searcher, target))
        return _Kept(plugins.create("measurer", options.measurer))

    monkeypatch.setattr(load_script("warm"), "warm_measurer", warm)
    (job,) = rg.left_out(exp)
    assert gt.runs_left(exp, [job]) == {"xgb", "gga", "ga"}
    with gt.kept_workers(exp) as kept:
        assert set(kept.measurers) == {"xgb", "gga", "ga"}
        gt.run_layer(kept, job.task, job.history)
        measurers = dict(kept.measurers)
        assert not any(m.closed for m in measurers.values())  # tune leaves them open
    assert warmed == [("warm_xgb", "xgb", exp.target), ("warm_gga", "gga", exp.target),
                      ("warm_ga", "ga", exp.target)]
    # run again (to time the configs again, say), finished runs get no warmed measurer
    assert gt.runs_left(exp, [job]) == set()
    with gt.kept_workers(exp, gt.runs_left(exp, [job])) as again:
        assert again.measurers == {}
    assert len(warmed) == 3
    # every measured batch of each run (a tick of its clock) went to its searcher's kept
    # measurer: xgb 2 x 8, gga its lead of one, then 7 and 8, ga as it batches
    work = gt.turns_dir(exp, job.task)
    ticks = {n: len(load_script("turns").read_clock(work / f"{n}.clock.jsonl")) for n in measurers}
    assert {n: m.batches for n, m in measurers.items()} == ticks and ticks["gga"] == 3
    assert all(m.closed for m in measurers.values())
    text = gt.report(exp, [gt.layer_turns(exp, job.task)], "header", "cmd").read_text()
    assert "Workers kept (`--keep-workers`)" in text


def test_without_keep_workers_runs_get_no_kept_measurer(tmp_path):
    rg = load_script("reproduce_gga")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",))
    with load_script("gga_turns").kept_workers(exp) as same:
        assert same is exp and same.measurers == {}


def _curve(best, seconds):
    return load_script("reproduce_gga").Curve(tuple(best), tuple(seconds))


def _turns(**curves):
    """A layer's turns result with the given (best-so-far, own seconds) curves."""
    rg = load_script("reproduce_gga")
    return load_script("gga_turns").TurnsResult(
        rg.resnet_layers()[0], 1.0, {name: _curve(*c) for name, c in curves.items()})


def _with(res, **curves):
    return dataclasses.replace(res, curves={**res.curves,
                                            **{n: _curve(*c) for n, c in curves.items()}})


def _with_variant(tmp_path, name: str, options: dict, **fields):
    """A toy experiment of xgb, gga, ga and one gga variant (16 trials each) on r18_l4ds,
    its base history measured."""
    rg = load_script("reproduce_gga")
    variant = rg.Variant(name, "gga", options)
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=16,
                         budgets={"xgb": 16, "gga": 16, "ga": 16, name: 16},
                         pruned=False, extra=(variant,), **fields)
    rg.run_all(dataclasses.replace(exp, extra=(), remeasure=0), history_only=True)
    return rg, exp


def test_a_variant_takes_its_turn_after_the_three_and_gets_its_own_table(tmp_path):
    rg, exp = _with_variant(tmp_path, "gga-refresh", {"refresh": 1})
    gt = load_script("gga_turns")
    order = _Order()
    exp.plugins.pm.register(order)
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    assert order.log[:4] == ["xgb", "gga", "ga", "gga"]  # the variant is a gga run
    work = gt.turns_dir(exp, job.task)
    assert [t.trials for t in load_script("turns").read_clock(work / "gga-refresh.clock.jsonl")] == [1, 8, 16]
    store = HistoryStore.open(work / "gga-refresh.db", create=False)
    assert {t.name for _, t in store.tasks()} == {"r18_l3ds", "r18_l4ds"}  # with the history
    store.close()
    res = gt.layer_turns(exp, job.task)
    text = gt.report(exp, [res], "header", "cmd").read_text()
    assert "| r18_l4ds | gga-refresh | 16 |" in text and "Budgets: xgb 16, gga 16, ga 16, gga-refresh 16" in text


def test_the_report_says_what_history_the_base_database_holds(tmp_path):
    rg, exp = _with_variant(tmp_path, "gga-refresh", {"refresh": 1})
    gt = load_script("gga_turns")
    base = HistoryStore.open(exp.db, create=False)
    per_layer = [len(base.results(base.find_task(t), base.find_target(exp.target), ok_only=True))
                 for t in exp.history_layers]
    base.close()
    assert per_layer[0] > 0 and per_layer[1] > 0
    (line,) = [x for x in gt.history_lines(exp) if x]
    assert line.startswith(f"History (`--db {exp.db}`): {sum(per_layer)} successful measurements "
                           "of 2 layers on this target")
    assert gt.history_lines(dataclasses.replace(exp, db=tmp_path / "absent.db")) == []
    (pruned,) = [x for x in gt.history_lines(dataclasses.replace(exp, pruned=True)) if x]
    assert line.endswith("the other layers' measurements.")
    assert pruned.endswith("the other layers' measurements, its pruned variant with every layer's.")


def test_remeasure_times_every_runs_best_again_side_by_side_and_reports_the_ratios(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=16,
                         budgets={"xgb": 16, "gga": 16, "ga": 16}, pruned=False, remeasure=3,
                         deployed=2)
    rg.run_all(dataclasses.replace(exp, remeasure=0, deployed=0), history_only=True)
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    res = gt.layer_turns(exp, job.task)
    bests = gt.bests(res)
    assert list(bests) == ["xgb", "gga", "ga"]
    store = HistoryStore.open(gt.turns_dir(exp, job.task) / "remeasure.db", create=False)
    assert store.count() == 3 * len({c.key for c in bests.values()})
    store.close()
    gflops, _ = gt.again(exp, res)
    assert set(gflops) == {"xgb", "gga", "ga"} and all(g > 0 for g in gflops.values())
    text = gt.report(exp, [res], "header", "cmd").read_text()
    assert "| r18_l4ds | " in text.split("Final bests measured again")[1]
    # A timing that does not vary: every round gives the same ratio, so the interval is
    # that ratio alone and the verdict is decided.
    ratio = gflops["gga"] / gflops["xgb"]
    verdict = "met" if ratio >= 0.98 else "not met"
    assert f"gga {ratio:.3f} [{ratio:.3f}, {ratio:.3f}] {verdict}" in text
    assert f"Measured again, the final-best target: gga: {verdict} on 1 of 1" in text
    paired = gt.paired_finals(exp, res)
    assert set(paired) == {"gga", "ga"} and paired["gga"].rounds == 3
    # --deployed: every config a run reported at some trial, timed again (2 rounds)
    reported = gt.reported_configs(res)
    assert reported["xgb"] == bests["xgb"] and "gga@1" in reported  # gga's first seed
    store = HistoryStore.open(gt.turns_dir(exp, job.task) / "deployed.db", create=False)
    assert store.count() == 2 * len({c.key for c in reported.values()})
    store.close()
    d = gt.deployed(exp, res)
    assert d is not None and d.reference == d.curves["xgb"].final > 0
    for name, c in d.curves.items():  # a timing that does not vary: the same curves
        assert c.best == pytest.approx(res.curves[name].best) and c.seconds == res.curves[name].seconds
    assert d.reference == pytest.approx(gflops["xgb"])
    assert "## The configs the runs reported, timed again (`--deployed`)" in text
    assert "| r18_l4ds | gga | " in text.split("(`--deployed`)")[1]
    gt.run_layer(exp, job.task, job.history)  # a rerun measures nothing again
    for db, n in (("remeasure.db", 3 * len({c.key for c in bests.values()})),
                  ("deployed.db", 2 * len({c.key for c in reported.values()}))):
        store = HistoryStore.open(gt.turns_dir(exp, job.task) / db, create=False)
        assert store.count() == n
        store.close()
    # More rounds than the finished remeasure had: measured again, and the newest is read.
    gt.run_layer(dataclasses.replace(exp, remeasure=5, deployed=0), job.task, job.history)
    store = HistoryStore.open(gt.turns_dir(exp, job.task) / "remeasure.db", create=False)
    assert store.count() == 8 * len({c.key for c in bests.values()})
    store.close()
    assert gt.paired_finals(exp, res)["gga"].rounds == 5
    # The reported configs timed again in 3 rounds: a report reads the newest timings,
    # or those of the 2-round run when asked, and none of a number never run.
    gt.run_layer(dataclasses.replace(exp, remeasure=0, deployed=3), job.task, job.history)
    path = gt.turns_dir(exp, job.task) / "deployed.db"
    for asked, got in ((0, 3), (2, 2), (3, 3)):
        rounds = rg.remeasured_rounds(exp, job.task, reported, path, asked)
        assert {len(lat) for lat in rounds.values()} == {got}
    assert rg.remeasured_rounds(exp, job.task, reported, path, 4) is None
    assert gt.deployed(dataclasses.replace(exp, deployed_rounds=4), res) is None
    # timings that do not vary: the paired view is the median view
    paired_view = gt.deployed(dataclasses.replace(exp, deployed_view="paired",
                                                  deployed_rounds=2), res)
    for name, c in paired_view.curves.items():
        assert c.best == pytest.approx(d.curves[name].best)


def test_runoff_times_each_runs_fastest_configs_and_compares_the_winners(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"), trials=16,
                         budgets={"xgb": 16, "gga": 16, "ga": 16}, pruned=False, remeasure=3,
                         runoff=3, runoff_rounds=2)
    rg.run_all(dataclasses.replace(exp, remeasure=0, runoff=0), history_only=True)
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    res = gt.layer_turns(exp, job.task)
    for name in ("xgb", "gga", "ga"):  # one run-off each, in the searcher's own database
        store = HistoryStore.open(gt.turns_dir(exp, job.task) / f"{name}.db", create=False)
        [ro] = [r for r in store.runs() if r.searcher == "runoff"]
        assert ro.status == "finished" and ro.measured == 3 * 2 and ro.task.name == "r18_l4ds"
        store.close()
    # the synthetic timing does not vary: every run's own best wins its run-off
    winners = gt.runoff_winners(exp, job.task)
    assert winners == gt.bests(res)
    named = gt.with_runoff_winners(exp, res)
    assert list(named) == ["xgb", "gga", "ga", "xgb+runoff", "gga+runoff", "ga+runoff"]
    store = HistoryStore.open(gt.turns_dir(exp, job.task) / "runoff.db", create=False)
    assert store.count() == 3 * len({c.key for c in named.values()})
    store.close()
    lines = gt.runoff_section(exp, [res])
    gflops, _ = gt.again(exp, res)
    ratio = gflops["gga"] / gflops["xgb"]
    verdict = "met" if ratio >= 0.98 else "not met"
    cell = f"{ratio:.3f} [{ratio:.3f}, {ratio:.3f}] {verdict}"
    assert (f"| r18_l4ds | xgb the same config; gga the same config; ga the same config | "
            f"{cell} | {cell} |") in lines
    assert "Picks the run-off changed: every run's best won its run-off." in lines
    assert any(f"the runs' bests {verdict} on 1 of 1; the run-off winners {verdict} on 1 of 1"
               in line for line in lines)
    assert "## The run-offs (`--runoff`)" in gt.report(exp, [res], "h", "cmd").read_text()
    def timings() -> list[int]:
        counts = []
        for n in ("xgb", "gga", "ga", "runoff"):
            store = HistoryStore.open(gt.turns_dir(exp, job.task) / f"{n}.db", create=False)
            counts.append(store.count())
            store.close()
        return counts

    before = timings()
    gt.run_layer(exp, job.task, job.history)  # a rerun times nothing again
    assert timings() == before


@pytest.mark.parametrize("args", [["--runoff", "2"], ["--runoff", "2", "--remeasure", "3",
                                                      "--report-only"],
                                  ["--runoff", "-1"], ["--runoff-rounds", "0"]])
def test_runoff_needs_remeasure_and_measuring(tmp_path, capsys, args):
    gt = load_script("gga_turns")
    with pytest.raises(SystemExit) as exc:
        gt.main(["--db", str(tmp_path / "x.db"), *args])
    assert exc.value.code == 2 and "--runoff" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    (["--deployed-rounds", "-1"], "--deployed-rounds takes a number of rounds >= 0"),
    (["--deployed", "3", "--deployed-rounds", "9"], "give one of them"),
    (["--deployed-view", "mean"], "invalid choice: 'mean'")])
def test_bad_deployed_reading_options_are_usage_errors(tmp_path, capsys, args, message):
    gt = load_script("gga_turns")
    with pytest.raises(SystemExit) as exc:
        gt.main(["--db", str(tmp_path / "x.db"), *args])
    assert exc.value.code == 2 and message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_a_variants_final_is_compared_with_ggas_in_the_remeasure_rounds(tmp_path):
    rg, exp = _with_variant(tmp_path, "gga-p0", {"probe": 0}, remeasure=3)
    gt = load_script("gga_turns")
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    res = gt.layer_turns(exp, job.task)
    gflops, _ = gt.again(exp, res)
    lines = gt.variants_again(exp, [res])
    # the synthetic timing does not vary: every round's ratio is the same
    ratio = gflops["gga-p0"] / gflops["gga"]
    side = "higher" if ratio > 1 else "lower" if ratio < 1 else "undecided"
    assert f"| r18_l4ds | gga-p0 | {ratio:.3f} [{ratio:.3f}, {ratio:.3f}] | {side} |" in lines
    assert f"Variants over gga, timed again: gga-p0: {side} on 1 of 1." in lines
    assert "Variants over gga, timed again" in gt.report(exp, [res], "h", "cmd").read_text()
    assert gt.variants_again(dataclasses.replace(exp, extra=()), [res]) == []


def test_a_report_without_a_variant_reads_the_timings_made_beside_it(tmp_path):
    """Some layers' variants left out (to average more layers): the remeasure run that
    timed their configs with the others' side by side is read for the others."""
    rg, exp = _with_variant(tmp_path, "gga-p0", {"probe": 0}, remeasure=3)
    gt = load_script("gga_turns")
    (job,) = rg.left_out(exp)
    gt.run_layer(exp, job.task, job.history)
    with_variant, _ = gt.again(exp, gt.layer_turns(exp, job.task))
    fewer = dataclasses.replace(exp, extra=())
    without, _ = gt.again(fewer, gt.layer_turns(fewer, job.task))
    assert set(without) == {"xgb", "gga", "ga"}
    assert without == {k: v for k, v in with_variant.items() if k != "gga-p0"}
    assert gt.paired_finals(fewer, gt.layer_turns(fewer, job.task))["gga"].rounds == 3
    # another task's timings, or a config the run did not time, are never read
    store = HistoryStore.open(gt.turns_dir(exp, job.task) / "remeasure.db", create=False)
    configs = list(gt.bests(gt.layer_turns(fewer, job.task)).values())
    assert rg._covering_remeasure(store, exp, job.task, configs) is not None
    assert rg._covering_remeasure(store, exp, job.history[0], configs) is None
    stranger = Config.of(configs[0].to_dict() | {"unseen": 1})
    assert rg._covering_remeasure(store, exp, job.task, [*configs, stranger]) is None
    store.close()


def test_verdict_counts_a_ga_that_never_reached_the_mark_as_beaten():
    gt = load_script("gga_turns")
    res = _turns(xgb=([50, 100], [10, 60]), gga=([99, 99], [2, 4]), ga=([10, 20], [1, 2]))
    assert gt.verdict(res) == {"5x xgb": True, "3x ga": True, "0.98 final": True}
    slow = _with(res, gga=([90, 96], [2, 20]))
    assert gt.verdict(slow) == {"5x xgb": False, "3x ga": True, "0.98 final": False}
    # A variant in gga's place is judged the same way, and counted per searcher.
    both = _with(res, v=([90, 96], [2, 20]))
    assert gt.verdict(both, "v") == gt.verdict(slow)
    assert gt.met_counts([both, both], "v") == {"5x xgb": (0, 2), "3x ga": (2, 2),
                                                "0.98 final": (0, 2)}
    assert gt.counts_line([both], ["gga", "v"]) == (
        "gga: 5x xgb 1 of 1, 3x ga 1 of 1, 0.98 final 1 of 1; "
        "v: 5x xgb 0 of 1, 3x ga 1 of 1, 0.98 final 0 of 1.")


def test_a_target_is_out_of_reach_where_the_mark_came_before_a_multiple_of_the_first_result():
    gt = load_script("gga_turns")
    # first results at 3 s (gga), 6 s (xgb, ga): 5x needs xgb at >= 15 s, 3x ga at >= 9 s
    res = _turns(xgb=([90, 100], [6, 16]), gga=([90, 99], [3, 5]), ga=([99, 99], [6, 8]))
    assert gt.first_result(res) == 3
    assert gt.reachable(res) == {"5x xgb": True, "3x ga": False}
    early = _with(res, xgb=([96, 100], [6, 16]))
    assert gt.reachable(early)["5x xgb"] is False  # xgb's first batch reached 95 at 6 s
    never = _with(res, ga=([10, 20], [6, 8]))
    assert gt.reachable(never)["3x ga"] is True  # a ga that never reaches it can be beaten


def test_speedups_at_other_marks():
    gt = load_script("gga_turns")
    res = _turns(xgb=([90, 100], [6, 16]), gga=([91, 99], [3, 5]), ga=([20, 30], [6, 8]))
    assert gt.speedup(res, "xgb", 0.90) == "2.0x"  # 6 s against 3 s
    assert gt.speedup(res, "xgb", 0.98) == "3.2x"  # 16 s against 5 s
    assert gt.speedup(res, "ga", 0.90) == "ga never"
    assert gt.speedup(_with(res, gga=([10, 20], [3, 5])), "xgb", 0.90) == "-"
    variant = _with(res, v=([99, 99], [4, 5]))  # a variant's speed-ups read the same way
    assert gt.speedup(variant, "ga", 0.95, "v") == "ga never"
    assert gt.speedup(variant, "gga", 0.95, "v") == "1.2x"  # 5 s against 4 s


def test_smoke_run_takes_turns_on_real_builds_and_reports(tmp_path):
    """The script in its small real form: r18_l3ds's xgb history, then xgb, gga and ga on
    r18_l4ds taking turns (16 trials each, real TVM builds and timing), every run's
    measurer with the contention guard on and kept, warmed, for all of its searcher's runs."""
    import re
    import subprocess
    import sys

    from tests.scripts_under_test import SCRIPTS

    db = tmp_path / "base.db"
    cmd = [sys.executable, str(SCRIPTS / "gga_turns.py"), "--smoke", "--no-pruned", "--db", str(db),
           "--measurer-opt", "guard=0.5", "--keep-workers"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp_path / "base-runs" / "report"
    text = (out / "gga-turns.md").read_text()
    cells = [[x.strip() for x in line.strip("|").split("|")] for line in text.splitlines()
             if line.startswith("| r18_l4ds | ")]
    rows = {c[2]: c for c in cells if len(c) == 9}  # the per-run table, not the summaries
    assert sorted(rows) == ["ga", "gga", "xgb"]
    assert all(c[3] == "16" and float(c[4]) > 0 for c in rows.values())
    assert rows["xgb"][5] == "1.000"
    assert re.search(r"Targets met: 5x xgb: \d of [01]; 3x ga: \d of [01]; 0.98 final: \d of 1", text)
    assert re.search(r"Where they could be met: 5x xgb: \d of [01]; 3x ga: \d of [01]\.", text)
    assert (out / "turns-r18_l4ds.png").stat().st_size > 0
    assert "; measurer local with guard=0.5." in text and "Workers kept (`--keep-workers`)" in text
    clocks = tmp_path / "base-runs" / "r18_l4ds" / "turns"
    turns = load_script("turns")
    for name in ("xgb", "gga", "ga"):
        ticks = turns.read_clock(clocks / f"{name}.clock.jsonl")
        assert ticks[-1].trials == 16 and ticks[-1].seconds > 0


def _lucky_run(tmp_path, toy_plugin, toy_target, confirm: int, lucky: int):
    """A 24-trial random run of the toy task under ``tune --confirm``, timed by a
    measurer whose first ``lucky`` timings of each config are twice as fast as it runs:
    the run's summary, its database and its confirmed curve."""
    from orchestrator.loop import tune
    from orchestrator.manager import load_plugins
    from orchestrator.testing import TOY_TASK
    from tests.orchestrator.test_confirm import LuckyFirstTimings

    m = LuckyFirstTimings(lucky)

    class Plugin:
        @hookimpl
        def orchestrator_add_measurers(self, registry):
            registry.add("lucky", lambda: m)

    plugins = load_plugins(extra=[("toy", toy_plugin), ("lucky", Plugin())], autoload=False)
    db = tmp_path / "runs.db"
    s = tune(TOY_TASK, target=toy_target, db=db, plugins=plugins, searcher="random",
             measurer="lucky", space_generator="toy", trials=24, seed=1, confirm=confirm)
    return s, db, load_script("reproduce_gga").curve(db, TOY_TASK, "random", 24, confirmed=True)


def _gflops(latency: float) -> float:
    from orchestrator.testing import TOY_TASK
    return TOY_TASK.flops / latency / 1e9


def test_a_confirmed_curve_counts_a_config_by_its_retimings_at_the_trial_that_picked_it(
        tmp_path, toy_plugin, toy_target):
    from orchestrator.testing import TOY_TASK, toy_latency

    s, db, sure = _lucky_run(tmp_path, toy_plugin, toy_target, confirm=1, lucky=1)
    rg = load_script("reproduce_gga")
    plain = rg.curve(db, TOY_TASK, "random", 24)
    assert len(sure.best) == len(plain.best) == 24  # re-timings are not trials
    assert sure.final == pytest.approx(_gflops(s.best.latency)) and sure.best_config == s.best.config
    assert plain.final == pytest.approx(2 * sure.final)  # the lucky first timing
    assert all(a <= b for a, b in zip(sure.best, sure.best[1:]))
    # the config counts from the trial that picked it (its batch's last), at its true speed
    first = sure.best.index(sure.final)
    assert first % 8 == 7 and sure.best[first] == pytest.approx(_gflops(toy_latency(s.best.config)))
    assert rg.curve(db, TOY_TASK, "random", 8, confirmed=True).final == sure.best[7]
    # either reading counts the run's re-timings and its fastest first timing
    assert sure.retimed == plain.retimed == s.retimed > 0
    # the config each reading reports after each trial: the one its best-so-far is of
    for c in (sure, plain):
        at = c.reported_at()
        assert len(at) == 24 and at[-1] == c.best_config and c.reported[-1][1] == c.best_config
        assert [i for i, _ in c.reported] == sorted({i for i, _ in c.reported})
        assert all(at[i] == cfg for i, cfg in c.reported)
        assert all(at[i] is None for i in range(c.reported[0][0]))
    assert sure.reported[-1][0] == first
    assert sure.fastest_first == plain.fastest_first == pytest.approx(plain.final)


def test_a_confirmed_curve_counts_a_config_by_all_its_retimings_not_a_lucky_first_few(
        tmp_path, toy_plugin, toy_target):
    from orchestrator.testing import toy_latency

    # the first timing and the first re-timing of each config are lucky; the median of
    # all three re-timings (the loop's confirmed latency) is the config's true speed
    s, _, sure = _lucky_run(tmp_path, toy_plugin, toy_target, confirm=3, lucky=2)
    assert s.retimed > 0 and sure.retimed == s.retimed
    # the run's confirmed best is the true speed; so is the curve's, not the lucky one
    assert s.best.latency == pytest.approx(toy_latency(s.best.config))
    assert sure.final == pytest.approx(_gflops(s.best.latency)) and sure.best_config == s.best.config
    # every config the curve reported counts at its true speed (an older reading took the
    # median of the first re-timing alone, twice as fast)
    assert all(sure.best[i] == pytest.approx(_gflops(toy_latency(cfg))) for i, cfg in sure.reported)
    assert sure.final < sure.fastest_first / 1.5


def test_the_confirm_section_shows_retimings_and_how_far_first_timings_sit_above(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",), confirm=1)
    res = _turns(xgb=([50, 100], [10, 60]), gga=([80, 80], [2, 4]))
    res = dataclasses.replace(res, curves={
        "xgb": dataclasses.replace(res.curves["xgb"], retimed=3, fastest_first=110.0),
        "gga": dataclasses.replace(res.curves["gga"], retimed=1, fastest_first=100.0)})
    lines = gt.confirm_section(exp, [res])
    assert f"| {res.task.name} | xgb | 2 | 3 | 110.0 | 100.0 | 1.100 |" in lines
    assert f"| {res.task.name} | gga | 2 | 1 | 100.0 | 80.0 | 1.250 |" in lines
    assert "Median first / confirmed: xgb 1.100 (over 1 layers); gga 1.250 (over 1 layers)." in lines
    assert gt.confirm_section(dataclasses.replace(exp, confirm=0), [res]) == []


def test_turns_runs_pass_confirm_to_every_searcher(tmp_path):
    rg = load_script("reproduce_gga")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",), confirm=2)
    assert {exp.options(v).confirm for v in load_script("gga_turns").searchers(exp)} == {2}


@pytest.mark.parametrize("option, message", [("guard=-1", "option guard must be >= 0.0"),
                                             ("guards=1", "unknown option 'guards'")])
def test_a_bad_measurer_option_is_a_one_line_error_before_anything_runs(tmp_path, capsys,
                                                                       option, message):
    gt = load_script("gga_turns")
    with pytest.raises(SystemExit) as exc:
        gt.main(["--layers", "r18_l4ds", "--no-pruned", "--db", str(tmp_path / "base.db"),
                 "--measurer-opt", option])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--measurer-opt" in err[-1] and message in err[-1]
    assert not (tmp_path / "base-runs").exists()


@pytest.mark.parametrize("script", ["gga_turns", "reproduce_gga"])
@pytest.mark.parametrize("args, message", [
    (["--measurer", "nope"], "unknown measurer 'nope'; known: cuda, local"),
    (["--space", "nope"], "unknown space generator 'nope'"),
    (["--target", "cuda:zz"], "unknown GPU 'zz' in --target 'cuda:zz'"),
])
def test_a_bad_target_space_or_measurer_is_a_one_line_error_before_anything_runs(
        tmp_path, capsys, script, args, message):
    with pytest.raises(SystemExit) as exc:
        load_script(script).main(["--layers", "r18_l4ds", "--no-pruned",
                                  "--db", str(tmp_path / "base.db"), *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]
    assert list(tmp_path.iterdir()) == []


def test_the_deployed_curve_is_the_speed_of_the_config_reported_after_each_trial(tmp_path,
                                                                                monkeypatch):
    gt = load_script("gga_turns")
    rg = gt.rg
    a, b, c = (Config.of({"k": i}) for i in range(3))
    res = gt.TurnsResult(rg.resnet_layers()[0], 1.0, {
        "xgb": rg.Curve((10, 30, 30, 40), (1, 2, 3, 4), best_config=c,
                        reported=((0, a), (1, b), (3, c))),
        "gga": rg.Curve((0, 35, 35), (1, 2, 3), best_config=b, reported=((1, b),))})
    assert res.curves["xgb"].reported_at() == (a, b, b, c)
    assert res.curves["gga"].reported_at() == (None, b, b)
    assert gt.reported_configs(res) == {"xgb": c, "xgb@1": a, "xgb@2": b, "xgb@4": c,
                                        "gga@2": b}
    speed = {a.key: 12.0, b.key: 25.0, c.key: 26.0}  # b's lucky first timing hid 25
    lat = {k: [res.task.flops / g / 1e9] for k, g in speed.items()}  # one round each
    asked = []

    def remeasure_timings(exp, task, configs, path, rounds=0):  # read once per layer
        asked.append(path)
        return rg.RemeasureTimings({n: tuple(lat.get(cfg.key, ())) for n, cfg in configs.items()},
                                   "2026-11-26 10:00")

    monkeypatch.setattr(rg, "remeasure_timings", remeasure_timings)
    exp = SimpleNamespace(work=tmp_path, deployed_view="median", deployed_rounds=0)
    d = gt.deployed(exp, res)
    assert asked == [tmp_path / res.task.name / "turns" / "deployed.db"]
    assert d.curves["xgb"].best == pytest.approx((12.0, 25.0, 25.0, 26.0))
    assert d.reference == pytest.approx(26.0)
    assert d.curves["gga"].best == pytest.approx((0.0, 25.0, 25.0))
    assert d.reach("gga") == (2, 2) and d.reach("xgb") == (2, 2)  # 25 >= 0.95 x 26
    # The paired view: b's rounds over c's, 0.9, 0.96 and 1.0, one round slow for both
    # and one for c alone; b is c's median speed (26) times their median, 0.96.
    unit = res.task.flops / 26e9  # c's median latency
    lat = {a.key: [2.0 * unit, 4.0 * unit, 2.0 * unit], b.key: [1.0 * unit, 2.5 * unit, unit],
           c.key: [0.9 * unit, 2.4 * unit, unit]}
    p = gt.deployed(SimpleNamespace(**{**vars(exp), "deployed_view": "paired"}), res)
    assert len(asked) == 2
    assert p.reference == pytest.approx(26.0)
    assert p.curves["gga"].best == pytest.approx((0.0, 24.96, 24.96))
    # a over c: 0.45, 0.6 and 0.5
    assert p.curves["xgb"].best == pytest.approx((13.0, 24.96, 24.96, 26.0))
    assert p.reach("gga") == (2, 2)  # 24.96 >= 0.95 x 26
    lat.pop(c.key)  # a reported config not timed again: no deployed view
    assert gt.deployed(exp, res) is None


def test_a_remeasure_runs_timings_give_each_names_median_speed_over_its_timed_rounds():
    rg = load_script("reproduce_gga")
    t = rg.RemeasureTimings({"xgb": (2.0, None, 1.0, 4.0), "gga": (None, None), "ga": ()},
                            "2026-12-05 19:00")
    assert t.gflops(6e9) == {"xgb": pytest.approx(3.0)}  # median of 2, 1 and 4 s


def test_runs_measured_apart_from_their_layers_xgb_run_are_named():
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    task = {t.name: t for t in rg.resnet_layers()}["r18_l4"]

    def curve(start: str, end: str):
        return rg.Curve((1.0,), (1.0,), (f"2026-11-27T{start}:00", f"2026-11-27T{end}:00"))

    together = gt.TurnsResult(task, 1.0, {"xgb": curve("01:10", "01:30"),
                                          "gga": curve("01:11", "01:29")})
    assert gt.apart_lines([together]) == []
    later = gt.TurnsResult(task, 1.0, {**together.curves, "gga-kin": curve("05:03", "05:08"),
                                       "before": curve("00:10", "00:20")})
    text = " ".join(gt.apart_lines([together, later]))
    assert "r18_l4 gga-kin (2026-11-27 05:03–05:08 UTC; xgb 2026-11-27 01:10–01:30 UTC)" in text
    assert "r18_l4 before (" in text and "r18_l4 gga (" not in text


def test_speedups_averaged_over_layers_stand_in_a_whole_run_for_a_mark_never_reached():
    gt = load_script("gga_turns")
    # xgb reaches 95 at 16 s; gga at 4 s; ga never (its run took 8 s)
    one = _turns(xgb=([90, 100], [6, 16]), gga=([91, 99], [3, 4]), ga=([20, 30], [6, 8]))
    # gga never reaches 95 (its run took 5 s); ga at 6 s
    two = _with(one, gga=([10, 20], [3, 5]), ga=([99, 99], [6, 8]))
    neither = _with(one, gga=([10, 20], [3, 5]), ga=([10, 20], [6, 8]))
    sm = load_script("speedup_mean")
    vs_xgb = sm.layer_speedups([one, two, neither], "xgb")
    assert [(s.seconds, s.other, s.never, s.other_never) for s in vs_xgb] == [
        (4, 16, False, False), (5, 16, True, False), (5, 16, True, False)]
    vs_ga = sm.layer_speedups([one, two, neither], "ga")  # neither reached it: left out
    assert [(s.seconds, s.other, s.never, s.other_never) for s in vs_ga] == [
        (4, 8, False, True), (5, 6, True, False)]
    lines = gt.means_lines([one, two])
    assert lines[0].startswith("- gga over xgb: geometric mean <= ")
    assert "against 5x" in lines[0] and "against 3x" in lines[1]
    assert gt.means_lines([one], "v")[0] == "- v over xgb: no layer to average."


def test_a_variant_seeded_from_its_own_history_database(tmp_path):
    rg, exp = _with_variant(tmp_path, "gga-big", {})
    gt = load_script("gga_turns")
    (job,) = rg.left_out(exp)
    # A second base database: the first one's history and one more measurement of it.
    big = tmp_path / "big.db"
    src = HistoryStore.open(exp.db, create=False)
    rg.seed_history(src, big, exp.history_layers, exp.target)
    (one, *_) = src.results(src.find_task(job.history[0]), src.find_target(exp.target))
    src.close()
    store = HistoryStore.open(big)
    task_id = store.find_task(job.history[0])
    store.record(run_id=None, task_id=task_id, target_id=store.find_target(exp.target),
                 results=[one])
    store.close()
    (v,) = exp.extra
    exp = dataclasses.replace(exp, extra=(dataclasses.replace(v, history_db=big),))
    gt.run_layer(exp, job.task, job.history)

    def seeded(name: str) -> int:  # history records of the layer the left-out one sees
        s = HistoryStore.open(gt.turns_dir(exp, job.task) / f"{name}.db", create=False)
        try:
            return len(s.results(s.find_task(job.history[0]), s.find_target(exp.target),
                                 ok_only=False))
        finally:
            s.close()

    assert seeded("gga-big") == seeded("gga") + 1
    lines = [x for x in gt.history_lines(exp) if x]
    assert len(lines) == 2 and lines[1].startswith(f"gga-big's history (`--history-db gga-big={big}`)")
    # A variant's database without every history layer stops the layer before it runs.
    other = tmp_path / "other.db"
    HistoryStore.open(other).close()
    lacking = dataclasses.replace(exp, work=tmp_path / "work2",
                                  extra=(dataclasses.replace(v, history_db=other),))
    with pytest.raises(SystemExit, match="give --history-db gga-big a database"):
        gt.run_layer(lacking, job.task, job.history)


@pytest.mark.parametrize("args, message", [
    (["--history-db", "gga-big"], "takes VARIANT=DB"),
    (["--history-db", "other=x.db"], "no --variant defines"),
    (["--history-db", "gga-big=absent.db"], "absent.db does not exist"),
    (["--history-db", "gga-big=BASE", "--history-db", "gga-big=BASE"], "twice"),
])
def test_a_bad_history_db_is_a_one_line_error(tmp_path, capsys, args, message):
    gt = load_script("gga_turns")
    base = tmp_path / "base.db"
    HistoryStore.open(base).close()
    args = [a.replace("BASE", str(base)) for a in args]
    with pytest.raises(SystemExit) as exc:
        gt.main(["--layers", "r18_l4ds", "--no-pruned", "--db", str(base),
                 "--variant", "gga-big=gga", *args])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize("variants", [["ga=gga"], ["gga-x=gga", "gga-x=gga:probe=0"]])
def test_a_variant_name_taken_by_a_searcher_or_another_variant_is_a_usage_error(
        tmp_path, capsys, variants):
    gt = load_script("gga_turns")
    with pytest.raises(SystemExit) as exc:
        gt.main(["--layers", "r18_l4ds", "--no-pruned", "--db", str(tmp_path / "base.db"),
                 "--report-only", *(a for v in variants for a in ("--variant", v))])
    assert exc.value.code == 2
    name = variants[-1].partition("=")[0]
    assert f"--variant name {name!r} is taken" in capsys.readouterr().err


def test_batch_size_reaches_every_searchers_runs_and_must_be_positive(tmp_path, capsys):
    gt = load_script("gga_turns")
    base = ["--layers", "r18_l4ds", "--no-pruned", "--db", str(tmp_path / "base.db"),
            "--report-only"]
    ap = argparse.ArgumentParser()
    gt.add_turns_arguments(ap)
    exp = gt.experiment(ap, ap.parse_args([*base, "--batch-size", "2"]))
    assert {exp.options(v).batch_size for v in gt.searchers(exp)} == {2}
    assert gt.experiment(ap, ap.parse_args(base)).batch_size == 8  # as before the option
    with pytest.raises(SystemExit) as exc:
        gt.main([*base, "--batch-size", "0"])
    assert exc.value.code == 2
    assert "--batch-size takes a number of configs >= 1, got 0" in capsys.readouterr().err


def test_shapes_of_a_file_take_turns_with_every_layers_history(tmp_path):
    from tests.plugins.gga.test_reproduce_script import SHAPE_5X5, write_shapes

    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    ap = argparse.ArgumentParser()
    gt.add_turns_arguments(ap)
    shapes = write_shapes(tmp_path / "mine.json", SHAPE_5X5)
    parsed = gt.experiment(ap, ap.parse_args(["--shapes", str(shapes), "--history-layers",
                                              "r18_l3ds", "--no-pruned", "--report-only",
                                              "--db", str(tmp_path / "base.db")]))
    assert parsed.layers == () and [t.name for t in parsed.shapes] == ["u5x5"]
    exp = dataclasses.replace(
        toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",), trials=16,
                       budgets={"xgb": 16, "gga": 8, "ga": 8}, pruned=False),
        layers=(), shapes=parsed.shapes)
    rg.run_all(exp, history_only=True)  # the base history: r18_l3ds alone
    (job,) = rg.left_out(exp)
    assert job.task.name == "u5x5" and [t.name for t in job.history] == ["r18_l3ds"]
    gt.run_layer(exp, job.task, job.history)
    res = gt.layer_turns(exp, job.task)
    assert len(res.curves["xgb"].best) == 16 and len(res.curves["gga"].best) == 8
    text = gt.report(exp, [res], "header", "cmd").read_text()
    assert "| u5x5 |" in text
    assert "each shape of `--shapes` with every layer's." in "".join(gt.history_lines(exp))


def test_the_turns_run_on_a_gpu_target_with_its_space_and_measurer(tmp_path):
    # The GPU pilot's path (scripts/gga_gpu_pilot.sh) without a GPU: the cuda templates on
    # an H200 target, scored by the static measurer instead of timed.
    common = ["--target", "cuda:h200", "--space", "cuda", "--measurer", "static",
              "--no-pruned", "--db", str(tmp_path / "base.db")]
    assert load_script("reproduce_gga").main(
        ["--history-only", *common, "--layers", "r18_l3ds", "--history-layers", "r18_l3ds",
         "--trials", "8"]) == 0
    assert load_script("gga_turns").main(
        [*common, "--layers", "r18_l4ds", "--history-layers", "r18_l3ds", "--budget", "xgb=8",
         "--budget", "gga=4", "--budget", "ga=4", "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "gga-turns.md").read_text()
    for searcher, trials in (("xgb", 8), ("gga", 4), ("ga", 4)):
        assert f"| r18_l4ds | 0.750 | {searcher} | {trials} |" in report
    store = HistoryStore.open(tmp_path / "base.db", create=False)
    try:
        assert {r.template for r in store.records()} == {"cuda@1"}
        assert {json.loads(r.target_key).get("arch") for r in store.records()} == {"sm_90"}
    finally:
        store.close()


def test_the_ceiling_is_the_first_result_against_each_others_seconds_to_the_mark():
    gt = load_script("gga_turns")
    # first result 3 s (gga's); xgb at the mark at 16 s, ga at 6 s; gga itself at 5 s
    one = _turns(xgb=([90, 100], [6, 16]), gga=([90, 99], [3, 5]), ga=([99, 99], [6, 8]))
    # ga never reaches it: its whole run (8 s) stands in, a lower bound
    two = _with(one, ga=([10, 20], [6, 8]))
    items = gt.ceiling_speedups([one, two], "xgb")
    assert [(i.seconds, i.other) for i in items] == [(3, 16), (3, 16)]
    assert [(i.other, i.other_never) for i in gt.ceiling_speedups([one, two], "ga")] == [
        (6, False), (8, True)]
    xgb_line, ga_line = gt.ceiling_lines([one, two])
    # 16 / 3 = 5.33x: within reach; gga's own mean is 16 / 5 = 3.2x, 0.60 of it
    assert xgb_line.startswith("- ceiling over xgb (a searcher at the mark with each layer's "
                               "first result): geometric mean 5.33x")
    assert "5x within reach; 2 of 2 layers at 5x or more; gga's geometric mean is 0.60 of it." \
        in xgb_line
    low = _with(one, xgb=([90, 100], [6, 9]))  # xgb at the mark at 9 s: 3x at best
    assert "5x out of reach of any searcher on these runs; 0 of 1 layers" in \
        gt.ceiling_lines([low])[0]
