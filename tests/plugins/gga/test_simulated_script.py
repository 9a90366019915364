"""scripts/surrogate.py and scripts/gga_simulated.py: searchers run on a surrogate of a
layer's measured speeds, on the synthetic conv space of the reproduce_gga tests (no TVM)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from orchestrator.testing.conformance import TOY_TARGET
from tests.plugins.gga.test_reproduce_script import conv_latency, conv_space, toy_experiment
from tests.scripts_under_test import load_script


def test_best_so_far_and_the_trial_that_reached_a_mark():
    sim = load_script("gga_simulated")
    curve = sim.best_so_far([1.0, 3.0, 2.0, 5.0])
    assert curve == [1.0, 3.0, 3.0, 5.0]
    assert sim.trials_to(curve, 3.0) == 2 and sim.trials_to(curve, 6.0) is None


class _Fixed:
    """A stand-in surrogate: 10 GFLOPS for every config."""

    def gflops(self, configs):
        return np.full(len(configs), 10.0)


def test_the_surrogate_measurer_says_it_is_simulated_and_keeps_what_it_answered():
    sur = load_script("surrogate")
    task = load_script("reproduce_gga").resnet_layers()[-1]
    space = conv_space(task)
    configs = [space.sample(random.Random(i)) for i in range(3)]
    exact = sur.SurrogateMeasurer({task.key: _Fixed()}).measure(space, TOY_TARGET, configs)
    assert [r.measurer for r in exact] == ["surrogate-simulated"] * 3
    assert all(r.ok and r.gflops(task.flops) == pytest.approx(10.0) for r in exact)
    noisy = sur.SurrogateMeasurer({task.key: _Fixed()}, noise=0.1, seed=1)
    got = [r.gflops(task.flops) for r in noisy.measure(space, TOY_TARGET, configs)]
    assert len(set(got)) == 3 and all(7.0 < g < 14.0 for g in got)
    assert noisy.measured == configs


def _sampled(draws: int, seed: int):
    """r18_l3's toy space, distinct sampled configs and their synthetic GFLOPS."""
    task = {t.name: t for t in load_script("reproduce_gga").resnet_layers()}["r18_l3"]
    space = conv_space(task)
    rng = random.Random(seed)
    configs = list({c.key: c for c in (space.sample(rng) for _ in range(draws))}.values())
    return task, space, configs, np.asarray([task.flops / conv_latency(task, c) / 1e9
                                             for c in configs])


def test_a_surrogate_ranks_configs_it_was_not_fitted_on():
    sur = load_script("surrogate")
    task, space, configs, gflops = _sampled(400, 0)
    data = sur.LayerData(task, tuple(configs), gflops, len(configs))
    acc = sur.accuracy(space, data)
    assert acc.spearman > 0.8 and acc.top_share > 0.95 and acc.median_error < 0.05


def test_searchers_run_on_the_surrogate_over_seeds_report_and_resume(tmp_path, monkeypatch):
    sim = load_script("gga_simulated")
    rg = load_script("reproduce_gga")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4ds"),
                         trials=16, budgets={"xgb": 40})
    rg.run_all(exp, history_only=True)  # real (synthetic-measurer) runs: the surrogate's data
    variants = [*sim.BASE, rg.parse_variant("gga-p0=gga:probe=0")]
    runs = sim.layer_runs(exp, exp.layers[0], variants, 2, [str(exp.db)], 0.05)
    assert {n: sorted(c) for n, c in runs.curves.items()} == {n: [0, 1] for n in ("xgb", "gga", "gga-p0")}
    assert all(len(c) == 40 for c in runs.curves["xgb"].values())
    assert all(len(c) == 16 for c in runs.curves["gga"].values())
    assert all(c == sorted(c) for cs in runs.curves.values() for c in cs.values())
    path = sim.report(exp, [runs], variants, 2, 0.05, "model", "header", "cmd",
                      pairs=[("gga-p0", "gga")])
    text = path.read_text()
    assert "**Simulated.**" in text and "surrogate-simulated" in text
    assert "| r18_l4ds |" in text and "| gga-p0 |" in text
    # the paired row is the inverse of the row against gga, seed by seed
    per_seed = [sim.speedups([runs], "gga", s, over="gga-p0")[0][0] for s in (0, 1)]
    inverse = [sim.speedups([runs], "gga-p0", s, over="gga")[0][0] for s in (0, 1)]
    assert per_seed == pytest.approx([1 / x for x in inverse])
    row = next(line for line in text.splitlines() if line.startswith("| gga against gga-p0 |"))
    assert f"{sorted(per_seed)[0]:.2f}, {sorted(per_seed)[1]:.2f}]" in row
    assert f"{sum(x > 1 for x in per_seed)} of 2 |" in row

    def no_run(*args, **kwargs):
        raise AssertionError("a kept curve was simulated again")

    monkeypatch.setattr(sim, "simulate", no_run)
    again = sim.layer_runs(exp, exp.layers[0], variants, 2, [str(exp.db)], 0.05)
    assert again.curves == runs.curves
    # the same name with other options is simulated again, not read back
    changed = [*sim.BASE, rg.parse_variant("gga-p0=gga:probe=2")]
    with pytest.raises(AssertionError, match="simulated again"):
        sim.layer_runs(exp, exp.layers[0], changed, 2, [str(exp.db)], 0.05)
    # so is every curve of another batch size
    pairs = dataclasses.replace(exp, batch_size=2)
    assert sim.signature(pairs, variants[1]) != sim.signature(exp, variants[1])
    with pytest.raises(AssertionError, match="simulated again"):
        sim.layer_runs(pairs, exp.layers[0], variants, 2, [str(exp.db)], 0.05)


def test_bad_arguments_are_one_line_errors(tmp_path, capsys):
    sim = load_script("gga_simulated")
    with pytest.raises(SystemExit) as e:
        sim.main(["--db", str(tmp_path / "none.db"), "--data", "x.db"])
    assert e.value.code == 2 and "does not exist" in capsys.readouterr().err
    db = tmp_path / "base.db"
    db.write_bytes(b"")
    with pytest.raises(SystemExit) as e:
        sim.main(["--db", str(db), "--data", "x.db", "--layers", "r18_nope"])
    assert "unknown layer(s) r18_nope" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        sim.main(["--db", str(db), "--data", "x.db", "--variant", "gga=gga:probe=0"])
    assert "--variant name 'gga' is taken" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        sim.main(["--db", str(db), "--data", "x.db", "--variant", "v=gga:probe=0",
                  "--variant", "v=gga:probe=1"])
    assert e.value.code == 2 and "--variant name 'v' is taken" in capsys.readouterr().err
    for pair, says in (("gga", "give two different settings"), ("gga:gga", "two different"),
                       ("gga:v", "unknown setting(s) v; known: xgb, gga")):
        with pytest.raises(SystemExit) as e:
            sim.main(["--db", str(db), "--data", "x.db", "--pair", pair])
        assert e.value.code == 2 and says in capsys.readouterr().err


def test_measured_first_answers_a_measured_config_with_its_measured_speed():
    sur = load_script("surrogate")
    _, space, configs, gflops = _sampled(200, 1)
    fit, unseen = configs[:-5], configs[-5:]
    mixed = sur.Surrogate(space, measured_first=True).fit(fit, gflops[:-5])
    plain = sur.Surrogate(space).fit(fit, gflops[:-5])
    assert mixed.gflops(fit[:10]).tolist() == gflops[:10].tolist()
    assert plain.gflops(fit[:10]).tolist() != gflops[:10].tolist()  # the model's, smoothed
    assert mixed.gflops(unseen).tolist() == plain.gflops(unseen).tolist()
