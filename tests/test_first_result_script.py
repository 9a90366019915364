"""scripts/first_result.py: seconds to the first batch, workers started late, early or
kept from an earlier task."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, smoke_report


@pytest.fixture(scope="module")
def script():
    return load_script("first_result")


def test_the_report_pairs_each_run_with_its_twins_of_the_other_settings(script):
    S = script.Sample
    samples = []
    for r, (off, on, kept, x_off, x_on, x_kept) in enumerate([
            (6.0, 5.0, 2.5, 4.0, 4.0, 8.0), (6.6, 5.5, 2.2, 4.4, 4.0, 6.6),
            (5.4, 6.0, 2.0, 4.5, 4.5, 7.0)]):
        samples += [S(r, "a", "gga", "off", off, 2), S(r, "a", "gga", "on", on, 2),
                    S(r, "a", "gga", "kept", kept, 2), S(r, "a", "xgb", "off", x_off, 8),
                    S(r, "a", "xgb", "on", x_on, 8), S(r, "a", "xgb", "kept", x_kept, 8)]
    text = script.report(samples, ["xgb", "gga"], "cmd")
    # gga: off / on per round 1.2, 1.2, 0.9; on / kept 2.0, 2.5, 3.0 (3 pairs: 75%).
    assert ("| gga | 2 | 6.00 | 5.50 | 2.20 | 1.200 [0.900, 1.200] at 75.0% | "
            "2.500 [2.000, 3.000] at 75.0% | 3 |") in text
    assert "| xgb | 8 | 4.40 | 4.00 | 7.00 | 1.000 [1.000, 1.100] at 75.0% |" in text
    # xgb over gga, per setting: off 0.667, 0.667, 0.833; on 0.8, 0.727, 0.75;
    # kept 3.2, 3.0, 3.5.
    assert ("| gga | 0.667 [0.667, 0.833] | 0.750 [0.727, 0.800] | "
            "3.200 [3.000, 3.500] |") in text
    assert "| 2 | a | gga | 6.60 | 5.50 | 2.20 |" in text and "Machine:" in text


def test_smoke_run_measures_real_first_batches(script, tmp_path):
    text = smoke_report(script, tmp_path / "first.md")
    rows = [line for line in text.splitlines() if line.startswith(("| xgb | 8 |", "| gga | 2 |"))]
    assert len(rows) == 2  # xgb's first batch is a whole batch, gga's its lead of 2
    seconds = [float(cell) for row in rows for cell in row.split("|")[3:6]]
    assert len(seconds) == 6 and all(s > 0 for s in seconds)  # off, on, kept


def test_the_batch_size_is_in_the_report_and_must_be_positive(script, tmp_path, capsys):
    S = script.Sample
    samples = [S(0, "a", "gga", x, 2.0, 2) for x in ("late", "on")]
    assert "(batches of 2)" in script.report(samples, ["gga"], "cmd", settings=("late", "on"),
                                             batch=2)
    with pytest.raises(SystemExit) as exit_:
        script.main(["--db", str(tmp_path / "h.db"), "--batch-size", "0"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(
        "--batch-size must be >= 1, got 0")


def test_an_unknown_searcher_is_a_one_line_error(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        script.main(["--db", str(tmp_path / "h.db"), "--searchers", "xgb,nope"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "unknown searcher(s) nope; known:" in err and "gga" in err


def test_the_report_with_other_settings_pairs_each_over_the_next(script):
    S = script.Sample
    samples = []
    for r, (late, on) in enumerate([(5.0, 4.0), (6.0, 4.0), (4.4, 4.0)]):
        samples += [S(r, "a", "gga", "late", late, 2), S(r, "a", "gga", "on", on, 2)]
    text = script.report(samples, ["gga"], "cmd", settings=("late", "on"))
    assert "# Seconds to the first result: settings `late`, `on`" in text
    assert "| searcher | first batch (trials) | median s, late | median s, on | " \
           "late / on [interval] | pairs |" in text
    # late / on per round 1.25, 1.5, 1.1 (3 pairs: 75%).
    assert "| gga | 2 | 5.00 | 4.00 | 1.250 [1.100, 1.500] at 75.0% | 3 |" in text
    assert "`early_sentinel=false`" in text and "`off`" not in text
    assert "| 3 | a | gga | 4.40 | 4.00 |" in text


@pytest.mark.parametrize("settings", ["on", "on,on", "on,later"])
def test_bad_settings_are_a_one_line_error(script, tmp_path, capsys, settings):
    with pytest.raises(SystemExit) as exit_:
        script.main(["--db", str(tmp_path / "h.db"), "--settings", settings])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--settings takes two or more of off, on, kept, late, each once" in err


def test_a_variant_runs_its_searcher_with_its_options_under_its_name(script, monkeypatch):
    calls = []

    def fake_first_result(task, searcher, setting, history, seed, scratch, kept, options=None,
                          batch=0):
        calls.append((searcher, options, batch))
        return 1.0, 1

    monkeypatch.setattr(script, "first_result", fake_first_result)
    samples = script.measure({"a": script.SMOKE_SHAPE}, ["gga", "gga-lead1"], 1, None,
                             ("on", "off"), {"gga-lead1": ("gga", {"lead": 1})}, batch=2)
    assert calls == [("gga", {}, 2), ("gga", {}, 2), ("gga", {"lead": 1}, 2),
                     ("gga", {"lead": 1}, 2)]
    assert [s.searcher for s in samples] == ["gga", "gga", "gga-lead1", "gga-lead1"]


@pytest.mark.parametrize("variant", ["gga-lead1", "x=nope:lead=1", "gga=gga:lead=1",
                                     "x=gga:lead"])
def test_a_bad_variant_is_a_one_line_error(script, tmp_path, capsys, variant):
    with pytest.raises(SystemExit) as exit_:
        script.main(["--db", str(tmp_path / "h.db"), "--variant", variant])
    assert exit_.value.code == 2
    assert "--variant takes NAME=SEARCHER" in capsys.readouterr().err.strip().splitlines()[-1]
