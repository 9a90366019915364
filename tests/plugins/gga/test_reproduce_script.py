"""scripts/reproduce_gga.py end to end on a synthetic conv space (no TVM): history runs,
leave-one-out databases, pruned variants, curves, report and plots, and resumption."""

from __future__ import annotations

import dataclasses
import math

import pytest

from history.store import HistoryStore
from orchestrator.hookspecs import hookimpl
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Space, SplitKnob
from orchestrator.testing.conformance import TOY_TARGET
from tests.scripts_under_test import load_script


def conv_space(task) -> Space:
    p = task.params
    return Space(task, "conv-toy", (
        SplitKnob.perfect("tile_f", p["K"], 3), SplitKnob.perfect("tile_c", p["C"], 2),
        ChoiceKnob("unroll", (0, 16, 64))), "orchestrator.testing.toy:no_schedule")


def conv_latency(task, cfg) -> float:
    f, c = cfg["tile_f"][-1], cfg["tile_c"][-1]
    cost = (math.log2(f) - 3) ** 2 + 0.5 * (math.log2(c) - 2) ** 2 + (cfg["unroll"] == 0)
    return task.flops / 50e9 * (1 + 0.2 * cost)


class ConvToy:
    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        class Gen:
            def supports(self, task, target):
                return task.op == "conv2d" and target.arch == "toy"

            def generate(self, task, target):
                return conv_space(task)

        registry.add("conv-toy", Gen)

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        class Synthetic:
            def measure(self, space, target, configs):
                return [MeasureResult(c, MeasureStatus.OK, (conv_latency(space.task, c),))
                        for c in configs]

            def close(self):
                pass

        registry.add("conv-synthetic", Synthetic)


def toy_experiment(rg, tmp_path, layer: str, history: tuple[str, ...], **fields):
    """An Experiment of the script on the toy conv space and synthetic measurer."""
    layers = {t.name: t for t in rg.resnet_layers()}
    options = {"trials": 8, "budgets": {"xgb": 8}, "searcher_options": rg.SMOKE_OPTIONS,
               "log": lambda _: None, **fields}
    return rg.Experiment(
        layers=(layers[layer],), history_layers=tuple(layers[n] for n in history),
        db=tmp_path / "base.db", work=tmp_path / "runs", out=tmp_path / "out",
        target=TOY_TARGET, plugins=load_plugins(extra=[("conv-toy", ConvToy())], autoload=False),
        measurer="conv-synthetic", space_generator="conv-toy", **options)


def test_reproduce_script_runs_reports_and_resumes(tmp_path):
    rg = load_script("reproduce_gga")
    layers = {t.name: t for t in rg.resnet_layers()}
    assert len(layers) == 11 and rg.pruned(layers["r18_l2"]).params["C"] == 125
    exp = rg.Experiment(
        layers=(layers["r18_l4ds"],), history_layers=(layers["r18_l3ds"], layers["r18_l4ds"]),
        trials=8, budgets={"xgb": 12}, db=tmp_path / "base.db", work=tmp_path / "runs",
        out=tmp_path / "out", target=TOY_TARGET,
        plugins=load_plugins(extra=[("conv-toy", ConvToy())], autoload=False),
        measurer="conv-synthetic", space_generator="conv-toy", searcher_options=rg.SMOKE_OPTIONS, log=lambda _: None)
    rg.run_all(exp)
    # leave-one-out: the gga database holds the other layer's history, not r18_l4ds's
    store = HistoryStore.open(exp.work / "r18_l4ds" / "gga.db", create=False)
    names = {t.name for _, t in store.tasks()}
    store.close()
    assert names == {"r18_l3ds", "r18_l4ds"}  # r18_l4ds only through gga's own run
    res = rg.layer_result(exp, layers["r18_l4ds"], False)
    assert len(res.curves["xgb"].best) == 12 and len(res.curves["gga"].best) == 8
    assert len(res.curves["fallback"].best) == 1 and res.reference > 0 and res.match == 1.0
    report = rg.report(exp, "header", "cmd")
    text = report.read_text()
    assert "| r18_l4ds | gga | 8 |" in text and "r18_l4ds_pruned" in text
    # the time targets averaged over the layer and its pruned variant, as the paper's are
    assert "Averaged over the layers" in text and "- gga over xgb: " in text
    assert "- gga over ga: " in text
    assert (exp.out / "gga-r18_l4ds.png").exists() and (exp.out / "gga-r18_l4ds_pruned.png").exists()
    base = HistoryStore.open(exp.db, create=False)
    before = base.count()
    base.close()
    rg.run_all(exp)  # everything is recorded: nothing is measured again
    base = HistoryStore.open(exp.db, create=False)
    assert base.count() == before
    base.close()


def test_history_only_runs_xgb_on_every_layer_and_nothing_else(tmp_path):
    rg = load_script("reproduce_gga")
    layers = {t.name: t for t in rg.resnet_layers()}
    exp = rg.Experiment(
        layers=(layers["r18_l4ds"],), history_layers=(layers["r18_l3ds"],),
        trials=8, budgets={"xgb": 6}, db=tmp_path / "base.db", work=tmp_path / "runs",
        out=tmp_path / "out", target=TOY_TARGET,
        plugins=load_plugins(extra=[("conv-toy", ConvToy())], autoload=False),
        measurer="conv-synthetic", space_generator="conv-toy",
        searcher_options=rg.SMOKE_OPTIONS, log=lambda _: None)
    rg.run_all(exp, history_only=True)
    store = HistoryStore.open(exp.db, create=False)
    assert sorted(t.name for _, t in store.tasks()) == ["r18_l3ds", "r18_l4ds"]
    assert store.count() == 12  # 6 xgb trials of each layer
    store.close()
    assert not exp.work.exists() and not exp.out.exists()
    # the later full run resumes those xgb runs: nothing of them is measured again
    assert len(rg.layer_result(exp, layers["r18_l4ds"], False).curves["xgb"].best) == 6


def test_tl_filter_verdict_calls_areas_equal_to_three_decimals_the_same(tmp_path):
    rg = load_script("reproduce_gga")
    task = rg.resnet_layers()[0]
    exp = rg.Experiment(layers=(task,), history_layers=(task,), trials=4, budgets={},
                        db=tmp_path / "b.db", work=tmp_path, out=tmp_path, target=TOY_TARGET,
                        plugins=None)  # type: ignore[arg-type]

    def result(tl: tuple[float, ...], nofilter: tuple[float, ...]):
        flat = rg.Curve((100.0,) * 4, (1.0,) * 4)
        curves = {"gga": flat, "xgb": flat, "ga": flat, "fallback": flat,
                  "tl": rg.Curve(tl, (1.0,) * 4), "tl-nofilter": rg.Curve(nofilter, (1.0,) * 4)}
        return rg.LayerResult(task, 100.0, 1.0, curves)

    same = rg.verdicts(result((98.70, 98.72, 98.74, 98.76), (98.70,) * 4), exp)[-1]
    assert "0.987 vs tl without filter 0.987 (the same to 3 decimals" in same
    assert "faster with the filter" in rg.verdicts(result((99.0,) * 4, (90.0,) * 4), exp)[-1]
    assert "not faster" in rg.verdicts(result((90.0,) * 4, (99.0,) * 4), exp)[-1]


def test_left_out_pairs_each_layer_with_the_others_then_its_pruned_variant_with_all(tmp_path):
    rg = load_script("reproduce_gga")
    layers = {t.name: t for t in rg.resnet_layers()}
    names = ("r18_l3ds", "r18_l4ds")
    exp = dataclasses.replace(toy_experiment(rg, tmp_path, "r18_l4ds", names),
                              layers=(layers["r18_l3ds"], layers["r18_l4ds"]), pruned=True)
    jobs = rg.left_out(exp)
    assert [(j.task.name, [h.name for h in j.history], j.unseen) for j in jobs] == [
        ("r18_l3ds", ["r18_l4ds"], False),
        (rg.pruned(layers["r18_l3ds"]).name, list(names), True),
        ("r18_l4ds", ["r18_l3ds"], False),
        (rg.pruned(layers["r18_l4ds"]).name, list(names), True)]
    assert [j.task.name for j in rg.left_out(dataclasses.replace(exp, pruned=False))] == list(names)


def write_shapes(path, *entries):
    import json

    path.write_text(json.dumps({"mine": list(entries)}))
    return path


SHAPE_5X5 = {"name": "u5x5", "op": "conv2d", "N": 1, "C": 24, "H": 14, "W": 14, "K": 40,
             "R": 5, "S": 5, "stride": 1, "pad": 2}


def test_shapes_of_a_file_are_tuned_with_every_layers_history_and_their_own_xgb(tmp_path,
                                                                                monkeypatch):
    rg = load_script("reproduce_gga")
    seen = []
    run_all = rg.run_all
    monkeypatch.setattr(rg, "run_all", lambda exp, history_only=False: seen.append(exp))
    shapes = write_shapes(tmp_path / "mine.json", SHAPE_5X5)
    assert rg.main(["--history-only", "--shapes", str(shapes), "--history-layers",
                    "r18_l3ds,r18_l4ds", "--db", str(tmp_path / "h.db")]) == 0
    (exp,) = seen
    # no ResNet-18 layer is left out unless --layers names one
    assert exp.layers == () and [t.name for t in exp.shapes] == ["u5x5"]
    assert exp.shapes[0].params["R"] == 5 and exp.shapes[0].params["K"] == 40
    jobs = rg.left_out(dataclasses.replace(exp, pruned=False))
    assert [(j.task.name, [h.name for h in j.history], j.unseen) for j in jobs] == [
        ("u5x5", ["r18_l3ds", "r18_l4ds"], True)]
    # run end to end on the toy space: xgb measures the shape in its own run database
    # (the base history keeps only the layers), and the report has the shape's row
    layers = {t.name: t for t in rg.resnet_layers()}
    toy = dataclasses.replace(toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",)),
                              layers=(), pruned=False, shapes=exp.shapes)
    run_all(toy)
    base = HistoryStore.open(toy.db, create=False)
    assert sorted(t.name for _, t in base.tasks()) == ["r18_l3ds"]
    base.close()
    res = rg.layer_result(toy, exp.shapes[0], True)
    assert len(res.curves["xgb"].best) == 8 and len(res.curves["gga"].best) == 8
    assert layers["r18_l3ds"].name in {t.name for t in toy.history_layers}
    assert "| u5x5 | gga | 8 |" in rg.report(toy, "header", "cmd").read_text()


@pytest.mark.parametrize("entries, message", [
    ((dict(SHAPE_5X5, name="r18_l2"),), "the name 'r18_l2' is a built-in layer's"),
    ((SHAPE_5X5, SHAPE_5X5), "the name 'u5x5' is given twice"),
    (({"name": "d", "op": "dense", "M": 8, "K": 8, "N": 8},), "d: not conv2d"),
    (({"name": "bad", "op": "conv2d", "N": 1, "C": 8},), "--shapes: "),
])
def test_bad_shapes_are_a_usage_error(tmp_path, capsys, entries, message):
    rg = load_script("reproduce_gga")
    with pytest.raises(SystemExit) as exc:
        rg.main(["--report-only", "--shapes", str(write_shapes(tmp_path / "s.json", *entries))])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_missing_shapes_file_is_a_usage_error(tmp_path, capsys):
    rg = load_script("reproduce_gga")
    with pytest.raises(SystemExit) as exc:
        rg.main(["--report-only", "--shapes", str(tmp_path / "none.json")])
    assert exc.value.code == 2 and "cannot read suite file" in capsys.readouterr().err


def test_pruned_channels_are_odd_and_composite():
    rg = load_script("reproduce_gga")
    assert [rg.odd_channels(n) for n in (3, 64, 128, 256, 512)] == [3, 57, 125, 253, 507]
    for t in rg.resnet_layers():
        p = rg.pruned(t).params
        for key in ("C", "K"):
            n = p[key]
            assert n == 3 or (n % 2 and any(n % d == 0 for d in range(3, n, 2)))
            assert n <= max(t.params[key] - 3, 3)


def test_auto_section_checks_the_threshold_against_which_flow_was_faster(tmp_path):
    rg = load_script("reproduce_gga")
    task = rg.resnet_layers()[0]

    def result(name: str, match: float, gga: tuple[float, ...], tl: tuple[float, ...]):
        secs = tuple(float(i + 1) for i in range(4))
        curves = {"gga": rg.Curve(gga, secs), "tl": rg.Curve(tl, secs)}
        return rg.LayerResult(dataclasses.replace(task, name=name), 100.0, match, curves)

    reached_first = rg.auto_outcome(result("a", 0.98, (90, 96, 96, 96), (90, 90, 95, 99)))
    assert reached_first.faster == "gga" and "gga 2.0, tl 3.0" in reached_first.why
    neither = rg.auto_outcome(result("b", 0.55, (80, 80, 80), (70, 85, 90, 94)))
    assert neither.faster == "tl" and "after 3 trials: gga 80.0, tl 90.0" in neither.why
    tie = rg.auto_outcome(result("c", 0.60, (96,) * 4, (96,) * 4))
    assert tie.faster is None
    close = rg.LayerResult(dataclasses.replace(task, name="e"), 100.0, 1.0,
                           {"gga": rg.Curve((96.0,), (4.9,)), "tl": rg.Curve((96.0,), (4.8,))})
    assert rg.auto_outcome(close).faster is None  # 2% apart: as fast
    wrong = rg.AutoOutcome("d", 0.57, "gga", "")
    outcomes = [reached_first, neither, tie, wrong]
    best, spans = rg.threshold_fit(outcomes)
    # gga iff match >= t: any t in (0.55, 0.57] gets all three decided layers right
    assert best == 3 and spans == [(0.55, 0.57)]
    text = "\n".join(rg.auto_section(outcomes))
    assert "| b | 0.550 | tl | tl | yes |" in text and "| c | 0.600 | tie | tl | - |" in text
    assert "| d | 0.570 | gga | tl | no |" in text
    assert "default picks the faster flow on 2 of 3 layers" in text
    assert "3 of 3, with a threshold in (0.550, 0.570]" in text
    assert rg.threshold_fit([tie]) == (0, [])


def test_a_variant_runs_in_its_own_database_and_is_reported_beside_the_others(tmp_path):
    rg = load_script("reproduce_gga")
    layers = {t.name: t for t in rg.resnet_layers()}
    extra = rg.parse_variant("gga-tasks=gga:seeding=tasks,probe=0")
    assert extra == rg.Variant("gga-tasks", "gga", {"seeding": "tasks", "probe": 0})
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l2ds"), pruned=False,
                         extra=(extra,))
    rg.run_all(exp)
    store = HistoryStore.open(exp.work / "r18_l4ds" / "gga-tasks.db", create=False)
    names = {t.name for _, t in store.tasks()}
    store.close()
    assert names == {"r18_l3ds", "r18_l2ds", "r18_l4ds"}  # seeded with the other layers
    res = rg.layer_result(exp, layers["r18_l4ds"], False)
    assert len(res.curves["gga-tasks"].best) == 8
    text = rg.report(exp, "header", "cmd").read_text()
    assert "| r18_l4ds | gga-tasks | 8 |" in text
    assert 'gga-tasks (gga {"seeding": "tasks", "probe": 0}): ' in text


@pytest.mark.parametrize("flag, bad, message", [
    *(("--variant", bad, "--variant") for bad in
      ("gga-tasks", "gga-tasks=gga:seeding", "=gga", "gga=gga:seeding=tasks")),
    *(("--batch-size", bad, f"--batch-size takes a number of configs >= 1, got {bad}")
      for bad in ("0", "-2", "two")),
])
def test_a_malformed_variant_or_batch_size_is_a_usage_error(capsys, flag, bad, message):
    rg = load_script("reproduce_gga")
    with pytest.raises(SystemExit) as exc:
        rg.main([flag, bad, "--report-only", "--layers", "r18_l2"])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_remeasure_measures_every_final_best_again_once_and_reports_the_ratios(tmp_path):
    rg = load_script("reproduce_gga")
    layers = {t.name: t for t in rg.resnet_layers()}
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",), pruned=False, remeasure=3)
    rg.run_all(exp)
    bests = rg.final_bests(exp, layers["r18_l4ds"], False)
    assert list(bests)[0] == "xgb" and {"gga", "tl", "ga", "fallback"} <= set(bests)
    store = HistoryStore.open(exp.work / "r18_l4ds" / "remeasure.db", create=False)
    count = store.count()
    (run,) = store.runs()
    store.close()
    assert count == 3 * len({c.key for c in bests.values()})  # each distinct best, 3 rounds
    assert run.searcher == "remeasure" and run.max_trials == count  # shared bests once
    again, _ = rg.remeasured(exp, layers["r18_l4ds"], bests)
    # the synthetic measurer is deterministic: measured again, each best is what it was
    res = rg.layer_result(exp, layers["r18_l4ds"], False)
    for name, gflops in again.items():
        assert math.isclose(gflops, res.curves[name].final, rel_tol=1e-9)
    text = rg.report(exp, "header", "cmd").read_text()
    assert "Final bests measured again side by side" in text and "| r18_l4ds | xgb |" in text
    assert "| 1.000 |" in text  # xgb against itself
    rg.run_all(exp)  # the same bests: nothing is measured again
    store = HistoryStore.open(exp.work / "r18_l4ds" / "remeasure.db", create=False)
    assert store.count() == count
    store.close()


def test_main_reads_searcher_and_measurer_options_into_the_experiment(tmp_path, monkeypatch):
    rg = load_script("reproduce_gga")
    seen = []
    monkeypatch.setattr(rg, "run_all", lambda exp, history_only=False: seen.append(exp))
    code = rg.main(["--history-only", "--layers", "r18_l2", "--db", str(tmp_path / "h.db"),
                    "--searcher-opt", "gga:probe=0", "--searcher-opt", "gga:seeding=tasks",
                    "--measurer-opt", "repeat=5", "--measurer-opt", "guard=false"])
    assert code == 0 and len(seen) == 1
    assert seen[0].searcher_options["gga"] == {"probe": 0, "seeding": "tasks"}
    assert seen[0].measurer_options == {"repeat": 5, "guard": False}


def test_space_options_reach_every_run_and_a_bad_one_stops_before_measuring(tmp_path,
                                                                           monkeypatch, capsys):
    rg = load_script("reproduce_gga")
    seen = []
    monkeypatch.setattr(rg, "run_all", lambda exp, history_only=False: seen.append(exp))
    args = ["--history-only", "--layers", "r18_l2", "--db", str(tmp_path / "h.db"),
            "--space", "cpu"]
    assert rg.main([*args, "--space-opt", "check=relaxed"]) == 0
    exp = seen[0]
    assert exp.space_options == {"check": "relaxed"}
    assert exp.space_tune_options.space_options == {"check": "relaxed"}
    opts = exp.options(rg.XGB)
    assert (opts.space_generator, opts.space_options) == ("cpu", {"check": "relaxed"})
    # The option is part of a run's identity: a relaxed run never resumes a full one.
    task, target = rg.resnet_layers()[0], exp.target
    full = dataclasses.replace(opts, space_options={})
    assert opts.resume_key(task, target, "cpu") != full.resume_key(task, target, "cpu")
    with pytest.raises(SystemExit) as stop:
        rg.main([*args, "--space-opt", "check=loose"])
    assert stop.value.code == 2 and len(seen) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "check must be one of full, relaxed, off" in err and "Traceback" not in err


def test_a_seeded_history_keeps_the_template_of_every_measurement(tmp_path):
    from orchestrator.testing import TOY_TASK, toy_results

    rg = load_script("reproduce_gga")
    base = HistoryStore.open(tmp_path / "base.db")
    tid, gid = base.ensure_task(TOY_TASK), base.ensure_target(TOY_TARGET)
    results = toy_results(n=6)
    base.record(run_id=None, task_id=tid, target_id=gid, results=results[:2])
    base.record(run_id=None, task_id=tid, target_id=gid, results=results[2:4], template="toy@1")
    base.record(run_id=None, task_id=tid, target_id=gid, results=results[4:], template="toy@2")
    rg.seed_history(base, tmp_path / "seeded.db", [TOY_TASK], TOY_TARGET)
    base.close()
    seeded = HistoryStore.open(tmp_path / "seeded.db", create=False)
    try:
        assert [(r.result, r.template) for r in seeded.records()] == \
            list(zip(results, ["", "", "toy@1", "toy@1", "toy@2", "toy@2"]))
    finally:
        seeded.close()
