"""scripts/first_configs.py: a run's first configs against the mark, read from finished
turns of gga_turns.py on the synthetic conv space of the reproduce_gga tests (no TVM)."""

from __future__ import annotations

import pytest

from orchestrator.space import Config
from tests.scripts_under_test import load_script

exit_status = load_script("script_main").exit_status


def test_changed_knobs_are_those_set_differently_from_the_first_config():
    fc = load_script("first_configs")
    first = Config.of({"tile_f": [1, 2, 4], "unroll": 0, "pad": "inline"})
    probe = Config.of({"tile_f": [1, 2, 4], "unroll": 0, "pad": "root"})
    other = Config.of({"tile_f": [2, 1, 4], "unroll": 16, "pad": "inline"})
    assert fc.changed_knobs(first, first) == {}
    assert fc.changed_knobs(first, probe) == {"pad": "root"}
    assert fc.changed_knobs(first, other) == {"tile_f": [2, 1, 4], "unroll": 16}


def test_a_run_is_read_trial_by_trial_and_reaches_the_mark_where_the_report_says(turns):
    fc = load_script("first_configs")
    exp, res = turns
    for name in ("gga", "ga", "xgb"):
        run = fc.read_run(exp.work, "r18_l4ds", name, confirmed=True)
        curve = res.curves[name]
        assert [t.number for t in run.trials] == list(range(1, len(curve.best) + 1))
        assert [t.best for t in run.trials] == list(curve.best)
        assert [t.seconds for t in run.trials] == list(curve.seconds)  # the own clock
        assert run.reference == res.reference
        assert run.reached == res.reach(name)  # trial and own seconds, as gga_turns counts
        assert run.trials[0].changed == {} and run.searcher == name and run.seed == exp.seed
        assert all(t.gflops is not None and t.gflops > 0 for t in run.trials)
    # re-timings are not trials: every trial is a config measured for the first time
    gga = fc.read_run(exp.work, "r18_l4ds", "gga", confirmed=True)
    assert len({repr(t.changed) for t in gga.trials}) == len(gga.trials)


def test_main_prints_each_runs_table_and_writes_it(turns, tmp_path, capsys):
    fc = load_script("first_configs")
    exp, res = turns
    out = tmp_path / "first.md"
    assert fc.main([str(exp.work), "r18_l4ds", "--searcher", "gga", "--searcher", "ga",
                    "--first", "3", "--confirmed", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert text == out.read_text() + "\n"  # what print wrote
    assert "## r18_l4ds: gga (run" in text and "## r18_l4ds: ga (run" in text
    assert "- Machine: " in text and "Command: `python scripts/first_configs.py " in text
    rows = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 2 and all("(the first config)" in r for r in rows)
    gga = fc.read_run(exp.work, "r18_l4ds", "gga", confirmed=True)
    assert gga.first_config.startswith("{") and f"Trial 1's config: `{gga.first_config}`" in text
    assert all(r.split("|")[4].strip() == "-" or float(r.split("|")[4]) > 0 for r in rows)
    trial, secs = res.reach("gga")
    assert f"reached the mark at trial {trial}, {secs:.1f} own seconds" in text
    assert f"the mark (95%): {0.95 * res.reference:.1f}" in text


@pytest.mark.parametrize("args, message", [
    (["nowhere", "r18_l4ds"], "nowhere/r18_l4ds/turns/gga.db does not exist"),
    (["WORK", "r18_c1"], "r18_c1/turns/gga.db does not exist"),
    (["WORK", "r18_l4ds", "--searcher", "tl"], "r18_l4ds/turns/tl.db does not exist"),
])
def test_a_missing_run_is_a_one_line_error(turns, tmp_path, capsys, args, message):
    fc = load_script("first_configs")
    exp, _ = turns
    args = [str(exp.work) if a == "WORK" else str(tmp_path / a) if a == "nowhere" else a
            for a in args]
    assert exit_status(fc.main, args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1


def test_a_layer_the_database_does_not_hold_is_named(turns, tmp_path, capsys):
    fc = load_script("first_configs")
    exp, _ = turns
    moved = tmp_path / "other" / "turns"
    moved.mkdir(parents=True)
    (moved / "gga.db").write_bytes((exp.work / "r18_l4ds" / "turns" / "gga.db").read_bytes())
    assert exit_status(fc.main, [str(tmp_path), "other"]) == 2
    assert "holds no layer named 'other'" in capsys.readouterr().err


def test_a_run_without_a_clock_file_shows_dashes_not_nan():
    fc = load_script("first_configs")
    row = fc._row(fc.Trial(3, float("nan"), 180.0, "ok", 0.0, {"unroll": 16}), 150.0)
    assert row == '| 3 | - | 180.0 **at the mark** | - | 1 | unroll=16 |'
