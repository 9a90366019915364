"""scripts/measure_guard.py: the contention guard's agreement benchmark."""

from __future__ import annotations

import json

import pytest

from tests.scripts_under_test import load_script


def _timings(script, rows):
    """rows: (config, measurer, round, gflops)."""
    return [script.Timing("r18_l1", c, m, r, g) for c, m, r, g in rows]


def test_summary_scores_each_timing_against_the_config_median():
    guard = load_script("measure_guard")
    rows = [("a", "plain", 0, 100.0), ("a", "guarded", 0, 98.0),
            ("a", "plain", 1, 60.0), ("a", "guarded", 1, 95.0),   # plain timed in a slow spell
            ("b", "plain", 0, 50.0), ("b", "guarded", 0, 50.0),
            ("b", "plain", 1, 44.0), ("b", "guarded", 1, 39.0),
            ("c", "plain", 0, 10.0), ("c", "guarded", 0, 0.0),    # failed once: left out
            ("c", "plain", 1, 10.0), ("c", "guarded", 1, 10.0)]
    plain, guarded = guard.summarize(_timings(guard, rows), {"plain": 10.0, "guarded": 12.0},
                                     {"guarded": {"retimed": 3, "slowed": 1}})
    assert plain.timings == guarded.timings == 4
    # medians: a 96.5 (60, 95, 98, 100), b 47 (39, 44, 50, 50)
    assert plain.below == {0.9: 1, 0.8: 1, 0.7: 1}      # 60/96.5
    assert guarded.below == {0.9: 1, 0.8: 0, 0.7: 0}    # 39/47 = 0.83
    assert plain.spread_median == pytest.approx((100 / 60 + 50 / 44) / 2)
    assert guarded.spread_p90 == pytest.approx(50 / 39)
    assert (guarded.retimed, guarded.slowed, plain.retimed) == (3, 1, 0)


def test_a_small_real_run_then_the_report_again(tmp_path):
    guard = load_script("measure_guard")
    out = tmp_path / "out"
    assert guard.main(["--layers", "r18_l4", "--configs", "2", "--rounds", "2",
                       "--guard", "0.5", "--guard-wait", "2", "--out", str(out)]) == 0
    raw = json.loads((out / guard.RAW).read_text())
    assert len(raw["timings"]) == 2 * 2 * 2
    assert {t["measurer"] for t in raw["timings"]} == {"plain", "guarded"}
    assert set(raw["counts"]["guarded"]) == {"retimed", "slowed"}
    text = (out / "measure-guard.md").read_text()
    assert "| plain | " in text and "| guarded | " in text and "guard=0.5" in text
    (out / "measure-guard.md").unlink()
    assert guard.main(["--out", str(out), "--report-only"]) == 0
    assert "| guarded | " in (out / "measure-guard.md").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--layers", "r18_nope"], "unknown layer"),
    (["--rounds", "1"], "--rounds >= 2"),
    (["--guard", "0"], "--guard must be > 0"),
    (["--db", "/nonexistent.db"], "does not exist"),
    (["--report-only"], "run without --report-only first"),
])
def test_bad_input_is_a_one_line_error(tmp_path, capsys, argv, message):
    guard = load_script("measure_guard")
    with pytest.raises(SystemExit) as exc:
        guard.main([*argv, "--out", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)


def test_a_history_without_the_layer_is_one_line_through_exit_status(tmp_path, capsys):
    from history.store import HistoryStore

    db = tmp_path / "empty.db"
    HistoryStore.open(db).close()
    guard = load_script("measure_guard")
    exit_status = load_script("script_main").exit_status
    out = tmp_path / "out"
    assert exit_status(guard.main, ["--layers", "r18_l4", "--db", str(db), "--out",
                                    str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "has no results of r18_l4" in err and "\n" not in err
    assert not out.exists()
