"""scripts/gga_first_generation.py: gga's first generation part by part, read from finished
turns of gga_turns.py on the synthetic conv space of the reproduce_gga tests (no TVM)."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script

exit_status = load_script("script_main").exit_status


def test_parts_are_read_by_position_against_xgbs_best(turns):
    fg = load_script("gga_first_generation")
    fc = load_script("first_configs")
    exp, _ = turns
    run = fc.read_run(exp.work, "r18_l4ds", "gga", confirmed=True)
    ratios = [t.gflops / run.reference for t in run.trials[:8]]
    parts = fg.read_parts(exp.work, "r18_l4ds", "0", lead=2, population=8, probe=3)
    assert parts.lead == pytest.approx(ratios[:2])
    assert parts.candidates == pytest.approx(max(ratios[2:5]))
    assert parts.probes == pytest.approx(max(ratios[5:8]))
    assert parts.fastest_before_probes == ratios[:5].index(max(ratios[:5])) + 1


def test_main_writes_the_table_and_the_counts(turns, tmp_path, capsys):
    fg = load_script("gga_first_generation")
    exp, _ = turns
    out = tmp_path / "report"
    assert fg.main(["--layers", "r18_l4ds", "--turns", f"0={exp.work}", "--population", "8",
                    "--probe", "3", "--out", str(out)]) == 0
    text = (out / "gga-first-generation.md").read_text()
    assert capsys.readouterr().out == text + "\n"
    assert "| r18_l4ds | 0 |" in text and "- Machine: " in text
    assert "nothing was timed" in text and "runs." in text


@pytest.mark.parametrize("args, message", [
    (["--layers", "r18_l4ds", "--turns", "0"], "--turns takes SEED=DIR"),
    (["--layers", "r18_l4ds", "--turns", "0=x", "--lead", "9"], "--lead must be within"),
])
def test_bad_arguments_are_usage_errors(args, message, capsys):
    fg = load_script("gga_first_generation")
    with pytest.raises(SystemExit) as e:
        fg.main(args)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_a_missing_or_short_run_is_a_one_line_error(turns, tmp_path, capsys):
    fg = load_script("gga_first_generation")
    exp, _ = turns
    assert exit_status(fg.main, ["--layers", "r18_l4ds", "--turns", f"0={tmp_path}"]) == 2
    assert "gga.db does not exist" in capsys.readouterr().err
    assert exit_status(fg.main, ["--layers", "r18_l4ds", "--turns", f"0={exp.work}",
                               "--population", "64", "--probe", "8"]) == 2
    assert "fewer than one generation of 64" in capsys.readouterr().err
