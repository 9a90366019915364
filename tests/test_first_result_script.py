"""scripts/first_result.py: seconds to the first batch, workers started early or not."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("first_result")


def test_the_report_pairs_each_run_with_its_twin_of_the_other_setting(script):
    S = script.Sample
    samples = []
    for r, (off, on, x_off, x_on) in enumerate([(6.0, 5.0, 4.0, 4.0), (6.6, 5.5, 4.4, 4.0),
                                                (5.4, 6.0, 4.5, 4.5)]):
        samples += [S(r, "a", "gga", False, off, 2), S(r, "a", "gga", True, on, 2),
                    S(r, "a", "xgb", False, x_off, 8), S(r, "a", "xgb", True, x_on, 8)]
    text = script.report(samples, ["xgb", "gga"], "cmd")
    # gga: off / on per round 1.2, 1.2, 0.9 -> median 1.2 over [0.9, 1.2] (3 pairs: 75%).
    assert "| gga | 2 | 6.00 | 5.50 | 1.200 [0.900, 1.200] at 75.0% | 3 |" in text
    assert "| xgb | 8 | 4.40 | 4.00 | 1.000 [1.000, 1.100] at 75.0% | 3 |" in text
    # gga over xgb, per setting: off 1.5, 1.5, 1.2; on 1.25, 1.375, 1.333.
    assert "| gga | 1.500 [1.200, 1.500] | 1.333 [1.250, 1.375] |" in text
    assert "| 2 | a | gga | 6.60 | 5.50 |" in text and "Machine:" in text


def test_smoke_run_measures_real_first_batches(script, tmp_path):
    out = tmp_path / "first.md"
    assert script.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Smoke run (CI)" in text
    rows = [line for line in text.splitlines() if line.startswith(("| xgb | 8 |", "| gga | 2 |"))]
    assert len(rows) == 2  # xgb's first batch is a whole batch, gga's its lead of 2
    seconds = [float(cell) for row in rows for cell in row.split("|")[3:5]]
    assert all(s > 0 for s in seconds)


def test_an_unknown_searcher_is_a_one_line_error(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        script.main(["--db", str(tmp_path / "h.db"), "--searchers", "xgb,nope"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "unknown searcher(s) nope; known:" in err and "gga" in err
