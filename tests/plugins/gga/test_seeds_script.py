"""scripts/gga_seeds.py: issue 4's verdicts over several seeds of the same turns."""

from __future__ import annotations

import pytest

from tests.plugins.gga.test_reproduce_script import toy_experiment
from tests.plugins.gga.test_turns_script import _turns
from tests.scripts_under_test import load_script


def _rows(lines, first):
    return [[x.strip() for x in line.strip("|").split("|")] for line in lines
            if line.startswith(f"| {first} |")]


def test_summary_counts_each_target_per_seed_and_across_seeds():
    seeds = load_script("gga_seeds")
    # seed 0: gga at the mark at 2 s, xgb at 60 s, ga never: every target met
    won = _turns(xgb=([50, 100], [10, 60]), gga=([99, 99], [2, 4]), ga=([10, 20], [1, 2]))
    # seed 1: gga reaches it at 20 s, after ga's 6 s; its final 0.96 is under 0.98
    lost = _turns(xgb=([50, 100], [10, 60]), gga=([90, 96], [2, 20]), ga=([99, 99], [6, 8]))
    lines = seeds.summary({0: [won], 1: [lost]})
    layer = won.task.name
    per_seed = _rows(lines, layer)
    assert [r[1] for r in per_seed] == ["0", "1"]
    assert per_seed[0][3] == "30.0x" and per_seed[0][5] == "ga never"
    assert per_seed[1][3] == "3.0x" and per_seed[1][5] == "0.3x" and per_seed[1][6] == "0.960"
    assert per_seed[0][7:] == ["met", "met", "met"]
    assert per_seed[1][7:] == ["not met", "not met", "not met"]
    counts = {r[0]: r[1:] for r in (_rows(lines, t)[0] for t in seeds.TARGETS)}
    assert counts["5x xgb"] == ["1 of 1", "0 of 1", "0 of 1", "1 of 1", "0 of 1"]
    both = seeds.summary({0: [won], 1: [won]})
    assert _rows(both, "3x ga")[0][1:] == ["1 of 1", "1 of 1", "1 of 1", "1 of 1", "1 of 1"]


def test_the_means_over_seeds_count_each_layer_once():
    seeds = load_script("gga_seeds")
    # gga at the mark at 2 s; xgb at 60 s on seed 0 and 15 s on seed 1: 30x and 7.5x
    fast = _turns(xgb=([50, 100], [10, 60]), gga=([99, 99], [2, 4]), ga=([99, 99], [8, 9]))
    slow = _turns(xgb=([50, 100], [10, 15]), gga=([99, 99], [2, 4]), ga=([99, 99], [8, 9]))
    lines = seeds.means_over_seeds({0: [fast], 1: [slow]})
    xgb = {line.split(":")[0]: line for line in lines if line.startswith("- gga over xgb")}
    assert list(xgb) == ["- gga over xgb, seed 0", "- gga over xgb, seed 1",
                         "- gga over xgb, every seed"]
    assert "geometric mean 30.00x [30.00, 30.00] over 1 layers, met" in xgb["- gga over xgb, seed 0"]
    assert "7.50x" in xgb["- gga over xgb, seed 1"]
    assert "geometric mean 15.00x [15.00, 15.00] over 1 layers, met against 5x" \
        in xgb["- gga over xgb, every seed"]  # sqrt(30 * 7.5): one layer, not two
    ga = [line for line in lines if line.startswith("- gga over ga, every seed")]
    assert len(ga) == 1 and "4.00x" in ga[0] and "undecided" not in ga[0]


def test_the_means_over_seeds_average_each_variant_too():
    seeds = load_script("gga_seeds")
    # the variant at the mark at 1 s where gga needs 2 s and xgb 60 s / 15 s
    fast = _turns(xgb=([50, 100], [10, 60]), gga=([99, 99], [2, 4]), ga=([99, 99], [8, 9]),
                  v=([99, 99], [1, 3]))
    slow = _turns(xgb=([50, 100], [10, 15]), gga=([99, 99], [2, 4]), ga=([99, 99], [8, 9]),
                  v=([99, 99], [1, 3]))
    lines = seeds.means_over_seeds({0: [fast], 1: [slow]})
    v = {line.split(":")[0]: line for line in lines if line.startswith("- v over")}
    assert list(v) == ["- v over xgb, every seed", "- v over ga, every seed",
                       "- v over gga, every seed"]
    assert "geometric mean 30.00x [30.00, 30.00] over 1 layers, met against 5x" \
        in v["- v over xgb, every seed"]  # sqrt(60 * 15)
    assert "geometric mean 2.00x [2.00, 2.00] over 1 layers, met against 1x" \
        in v["- v over gga, every seed"]
    assert not [line for line in lines if line.startswith("- v over xgb, seed")]


def test_a_layer_not_told_on_some_seed_is_left_out_of_the_cross_seed_counts():
    seeds = load_script("gga_seeds")
    won = _turns(xgb=([50, 100], [10, 60]), gga=([99, 99], [2, 4]), ga=([10, 20], [1, 2]))
    untold = _turns(xgb=([50, 100], [10, 60]), gga=([10, 20], [2, 4]), ga=([10, 20], [1, 2]))
    lines = seeds.summary({0: [won], 1: [untold]})
    assert _rows(lines, "3x ga")[0][1:] == ["1 of 1", "0 of 0", "0 of 0", "0 of 0", "0 of 0"]


def test_the_report_reads_each_seeds_turns(tmp_path):
    rg = load_script("reproduce_gga")
    gt = load_script("gga_turns")
    seeds = load_script("gga_seeds")
    works = []
    for seed in (0, 1):
        exp = toy_experiment(rg, tmp_path / f"s{seed}", "r18_l4ds", ("r18_l3ds", "r18_l4ds"),
                             trials=8, budgets={"xgb": 8, "gga": 8, "ga": 8}, pruned=False,
                             seed=seed, deployed=2 if seed == 1 else 0)
        rg.run_all(exp, history_only=True)
        (job,) = rg.left_out(exp)
        gt.run_layer(exp, job.task, job.history)
        works.append((seed, exp.work))
    path = seeds.write_report(exp, works, "cmd", "header")
    text = path.read_text()
    assert path.parent == exp.out and text.startswith("# GGA turns over several seeds")
    assert [r[1] for r in _rows(text.splitlines(), "r18_l4ds")] == ["0", "1"]
    assert "- Seed 0 measured from 20" in text and "- Seed 1 measured from 20" in text
    assert "budgets xgb 8, gga 8, ga 8 trials" in text
    assert len(_rows(text.splitlines(), "0.98 final")) == 1
    # the deployed view: only seed 1's reported configs were timed again
    text = seeds.write_report(exp, works, "cmd", "header", view="deployed").read_text()
    assert [r[1] for r in _rows(text.splitlines(), "r18_l4ds")] == ["1"]
    assert "Deployed view: each run's best-so-far is the speed of the config" in text


@pytest.mark.parametrize("turns, message", [
    (["0=/nowhere"], "two or more --turns"),
    (["0=/a", "0=/b"], "its own seed"),
    (["0=/nowhere", "1=/nowhere/either"], "no turns directory"),
])
def test_main_rejects_bad_turns_with_one_line(turns, message, capsys):
    seeds = load_script("gga_seeds")
    with pytest.raises(SystemExit) as exc:
        seeds.main([a for t in turns for a in ("--turns", t)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_options_that_only_running_turns_uses_are_refused(capsys):
    seeds = load_script("gga_seeds")
    with pytest.raises(SystemExit) as exc:
        seeds.main(["--turns", "0=/a", "--turns", "1=/b", "--seed", "3", "--remeasure", "2"])
    assert exc.value.code == 2
    assert "--seed, --remeasure do(es) not apply here" in capsys.readouterr().err


def test_turns_must_be_seed_equals_dir(capsys):
    seeds = load_script("gga_seeds")
    with pytest.raises(SystemExit):
        seeds.main(["--turns", "nodir", "--turns", "1=/x"])
    assert "--turns takes SEED=DIR" in capsys.readouterr().err
