"""scripts/retime_cost.py: re-timings of a config built each time, or built once."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, smoke_report


@pytest.fixture(scope="module")
def script():
    return load_script("retime_cost")


def test_the_report_pairs_each_config_with_itself_the_other_way(script):
    S = script.Sample
    samples = [S("a", 0, "apart", 3.0, 2e-4), S("a", 0, "batch", 2.0, 2e-4),
               S("a", 1, "batch", 1.0, 4e-4), S("a", 1, "apart", 1.5, 4e-4),
               S("b", 0, "apart", 2.0, None), S("b", 0, "batch", 1.0, 1e-4)]
    text = script.report(samples, 3, "cmd")
    # a: apart / batch 1.5 and 1.5; b: 2.0; all: 1.5, 1.5, 2.0.
    assert "| a | 2 | 2.25 | 1.50 | 1.500 [1.500, 1.500] at 50.0% | 300.0 | 300.0 |" in text
    assert "| b | 1 | 2.00 | 1.00 | 2.000" in text and "| - | 100.0 |" in text
    assert "| all | 3 | 2.00 | 1.00 | 1.500" in text
    assert "| b | 1 | 2.00 | 1.00 | - | 100.0 |" in text and "Machine:" in text


def test_smoke_run_times_real_kernels_both_ways(script, tmp_path):
    text = smoke_report(script, tmp_path / "retime.md")
    rows = [line.split("|") for line in text.splitlines() if line.startswith("| smoke_c16 | ")]
    assert len(rows) == 3  # the summary row and two configs
    for cells in rows[1:]:
        apart, batch, lat_apart, lat_batch = (float(c) for c in cells[3:7])
        assert apart > 0 and batch > 0 and lat_apart > 0 and lat_batch > 0


def test_a_count_below_one_is_a_one_line_error(script, capsys):
    with pytest.raises(SystemExit) as exit_:
        script.main(["--confirm", "0"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "--configs and --confirm must be >= 1, got 8 and 0")
