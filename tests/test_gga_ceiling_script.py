"""scripts/gga_ceiling.py: the ceilings of reported turns, read from their reports."""

from __future__ import annotations

import math

import pytest

from tests.scripts_under_test import load_script, turns_report


RUNS = ["| [a](turns-a.png) | 2.0 / 20.0 | 10.0x | 6.0 | 3.0x | 1.000 | 1.0 | yes, yes |",
        "| [b](turns-b.png) | - / 8.0 | - | - | - | 0.990 | 2.0 | no, yes |"]
AGAIN = ["| [a](turns-a.png) | 1.0 / 2.0 | 2.0x | 3.0 | 3.0x | 1.010 | 1.0 | no, yes |",
         "| [b](turns-b.png) | 2.0 / 4.0 | 2.0x | 2.0 | 1.0x | 0.970 | 2.0 | no, no |"]


def test_a_report_is_read_into_its_views_with_each_layers_seconds_and_ggas_means(tmp_path):
    gc = load_script("gga_ceiling")
    path = tmp_path / "set" / "gga-turns.md"
    path.parent.mkdir()
    path.write_text(turns_report(RUNS, AGAIN))
    rep = gc.read_report(path)
    assert (rep.machine, rep.batch) == ("AMD EPYC (znver4, AVX-512)", 2)
    runs, again = rep.views
    assert (runs.name, again.name) == ("runs", "timed again")
    assert runs.rows[1] == gc.LayerRow("b", None, 8.0, None, 2.0)
    assert runs.gga_means == {"xgb": 2.0, "ga": 1.5} and again.gga_means == {"xgb": 1.2}
    # ceilings over xgb 20 / 1 and 8 / 2: geometric mean sqrt(80); over ga only layer a
    assert runs.ceiling("xgb").geometric == pytest.approx(math.sqrt(80))
    assert runs.ceiling("ga").layers == 1 and runs.ceiling("ga").geometric == pytest.approx(6)
    assert again.ceiling("xgb").geometric == pytest.approx(2)


def test_the_summary_gives_each_view_its_ceiling_and_ggas_share_of_it(tmp_path, capsys):
    gc = load_script("gga_ceiling")
    path = tmp_path / "set" / "gga-turns.md"
    path.parent.mkdir()
    path.write_text(turns_report(RUNS, AGAIN))
    older = tmp_path / "old" / "gga-turns.md"
    older.parent.mkdir()
    older.write_text("| layer | gga / xgb seconds to 95% | speed-up (>= 5x) |\n|---|---|---|\n")
    out = tmp_path / "ceiling.md"
    assert gc.main([str(path), str(older), "--out", str(out)]) == 0
    text = out.read_text()
    assert "Left out, written before the reports gave first results: old." in text
    assert (f"| set | AMD EPYC (znver4, AVX-512) | 2 | runs | 2 | {math.sqrt(80):.2f}x ["
            in text)
    assert f"| 2.00x | {2 / math.sqrt(80):.2f} | 6.00x [6.00, 6.00] |" in text
    assert "| set | AMD EPYC (znver4, AVX-512) | 2 | timed again | 2 | 2.00x [" in text
    # by machine: xgb at the mark within twice the first result on neither layer, gga on
    # layer a (2 s against a first result of 1 s); the ceiling over ga only of layer a
    assert (f"| AMD EPYC (znver4, AVX-512) | 2 | runs | 1 | {math.sqrt(80):.2f}x | 0 | "
            f"{2 / math.sqrt(80):.2f} | 0 of 2 | 1 of 2 | 6.00x | 0 |") in text
    assert "- runs: ceiling over xgb under 5x on 0 of 1 report views" in text
    assert "- timed again: ceiling over xgb under 5x on 1 of 1 report views (its whole " \
        "interval under 5x on 1)" in text


def test_a_file_that_is_no_turns_report_is_a_one_line_error(tmp_path, capsys):
    gc = load_script("gga_ceiling")
    other = tmp_path / "notes.md"
    other.write_text("# notes\n")
    assert gc.main([str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "has no targets table with first results" in err
    assert gc.main([str(tmp_path / "missing.md")]) == 2
    assert "cannot read" in capsys.readouterr().err
    broken = tmp_path / "gga-turns.md"
    broken.write_text(turns_report([RUNS[0].replace("| 6.0 |", "| n/a |"), RUNS[1]]))
    assert gc.main([str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {broken}: ") and err.count("\n") == 1
    assert "a table cell is not a number: 'n/a'" in err
