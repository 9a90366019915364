"""scripts/turns_before_after.py: the same turns before and after a change, from reports."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, turns_report

MACHINE = "AMD EPYC (znver3, AVX2)"


def _write(path, rows, again=None, machine=MACHINE):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(turns_report(rows, again, machine))
    return path


BEFORE = ["| [a](turns-a.png) | 4.0 / 40.0 | 10.0x | 8.0 | 2.0x | 1.000 | 4.0 | yes, yes |",
          "| [b](turns-b.png) | 6.0 / 30.0 | 5.0x | - | - | 0.990 | 3.0 | yes, yes |"]
AFTER = ["| [a](turns-a.png) | 2.0 / 40.0 | 20.0x | 16.0 | 8.0x | 1.000 | 2.0 | yes, yes |",
         "| [b](turns-b.png) | 12.0 / 15.0 | 1.2x | - | - | 0.990 | 2.0 | yes, yes |"]


def test_each_layer_gets_its_seconds_before_and_after_and_their_ratio(tmp_path):
    ba = load_script("turns_before_after")
    gc = load_script("gga_ceiling")
    before = gc.read_report(_write(tmp_path / "b" / "gga-turns.md", BEFORE))
    after = gc.read_report(_write(tmp_path / "a" / "gga-turns.md", AFTER))
    a, b = ba.pair_layers(1, before, after, "runs")
    assert (a.layer, a.ratio("first"), a.ratio("gga"), a.ratio("xgb")) == ("a", 2.0, 2.0, 1.0)
    assert a.ratio("ga") == pytest.approx(0.5)
    assert b.ratio("gga") == pytest.approx(0.5) and b.ratio("xgb") == pytest.approx(2.0)
    assert b.ratio("ga") is None  # ga never reached the mark in either report


def test_the_report_has_a_row_per_layer_and_a_median_per_quantity(tmp_path):
    ba = load_script("turns_before_after")
    b = _write(tmp_path / "b" / "gga-turns.md", BEFORE)
    a = _write(tmp_path / "a" / "gga-turns.md", AFTER)
    out = tmp_path / "out" / "before-after.md"
    assert ba.main(["--pair", str(b), str(a), "--pair", str(b), str(a),
                    "--out", str(out)]) == 0
    text = out.read_text()
    assert "Machine, as the reports name it: AMD EPYC (znver3, AVX2)" in text
    assert 'A ratio is left out ("-") unless the searcher reached the mark in both' in text
    assert ("| 1 | a | 4.0 / 2.0 | 2.00x | 4.0 / 2.0 | 2.00x | 40.0 / 40.0 | 1.00x | "
            "8.0 / 16.0 | 0.50x |") in text
    assert "| 2 | b | 3.0 / 2.0 | 1.50x | 6.0 / 12.0 | 0.50x | 30.0 / 15.0 | 2.00x | - / - | - |" \
        in text
    # first result: ratios 2, 1.5, 2, 1.5; four values give [min, max] at 87.5%
    assert ("- first result: before / after a median 1.75x [1.50, 2.00] at 87.5% over 4 "
            "layer runs; sooner after on 4 of 4.") in text
    assert "- gga to 95%: before / after a median 1.25x [0.50, 2.00]" in text
    assert "- ga to 95%: before / after a median 0.50x [0.50, 0.50] at 50.0% over 2" in text


def test_the_timed_again_view_is_read_when_asked(tmp_path, capsys):
    ba = load_script("turns_before_after")
    b = _write(tmp_path / "b" / "gga-turns.md", BEFORE, again=BEFORE)
    a = _write(tmp_path / "a" / "gga-turns.md", AFTER, again=BEFORE)
    assert ba.main(["--pair", str(b), str(a), "--view", "timed again"]) == 0
    out = capsys.readouterr().out
    assert "(view: timed again)" in out
    assert "- first result: before / after a median 1.00x" in out
    # a report without that table is a one-line error
    plain = _write(tmp_path / "p" / "gga-turns.md", AFTER)
    assert ba.main(["--pair", str(b), str(plain), "--view", "timed again"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "has no 'timed again' targets table" in err
    assert "\n" not in err


def test_reports_of_different_turns_are_a_one_line_error(tmp_path, capsys):
    ba = load_script("turns_before_after")
    b = _write(tmp_path / "b" / "gga-turns.md", BEFORE)
    other = _write(tmp_path / "o" / "gga-turns.md", AFTER[:1])
    assert ba.main(["--pair", str(b), str(other)]) == 2
    err = capsys.readouterr().err.strip()
    assert "hold different layers (a, b against a): give two reports of the same turns" in err
    elsewhere = _write(tmp_path / "e" / "gga-turns.md", AFTER,
                       machine="AMD EPYC (znver4, AVX-512)")
    assert ba.main(["--pair", str(b), str(elsewhere)]) == 2
    assert "compare turns made on the same machine" in capsys.readouterr().err
    assert ba.main(["--pair", str(b), str(tmp_path / "missing.md")]) == 2
    assert "cannot read" in capsys.readouterr().err
