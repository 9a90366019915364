"""scripts/gga_screen_cost.py: the seconds gga's screen spends on its rank model, by
``screen_rows``, timed side by side."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, smoke_report


@pytest.fixture(scope="module")
def script():
    return load_script("gga_screen_cost")


def test_the_report_pairs_each_task_and_round_with_every_record(script):
    S = script.Sample
    samples = []
    for r, (every, capped) in enumerate([(0.4, 0.1), (0.6, 0.2), (0.5, 0.1)]):
        samples += [S("h.db", "t1", r, 0, every, every / 2, 5000, 5000),
                    S("h.db", "t1", r, 1000, capped, capped / 2, 1000, 1040)]
    text = script.report(samples, {"h.db": 5500}, [(0, False), (1000, False)], 3, 32, "cmd")
    # every / capped per round: 4, 3, 5 (3 pairs: 75%), the same for the refits
    assert ("| h.db | 5500 | screen_rows=1000 | 1000 | 1040 | 0.100 | 4.000 [3.000, 5.000] "
            "at 75.0% | 0.050 | 4.000 [3.000, 5.000] at 75.0% |" in text)
    assert "| h.db | 5500 | every record | 5000 | 5000 | 0.500 | - | 0.250 | - |" in text
    assert "Machine:" in text
    spread = [S("h.db", "t1", r, 1000, 0.25, 0.05, 1000, 5000, True) for r in range(3)]
    text = script.report(samples + spread, {"h.db": 5500},
                         [(0, False), (1000, False), (1000, True)], 3, 32, "cmd")
    assert ("| h.db | 5500 | screen_rows=1000,screen_rows_from=spread | 1000 | 5000 | 0.250 | "
            in text)


def test_smoke_run_times_both_ways_on_a_real_history(script, tmp_path):
    text = smoke_report(script, tmp_path / "cost.md")
    rows = [line for line in text.splitlines() if line.startswith("| smoke-history.db | 16 |")]
    # two tasks of 8 real measurements, each left out in turn: 8 records to learn from
    assert len(rows) == 2 and all("| 8 | 8 |" in row for row in rows)


def test_a_missing_database_is_a_one_line_error(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        script.main(["--db", str(tmp_path / "nowhere.db"), "--out", str(tmp_path / "r.md")])
    assert exc.value.code == 2
    assert "--db must name existing history databases" in capsys.readouterr().err


def test_smoke_run_times_a_spread_cap(script, tmp_path):
    out = tmp_path / "cost.md"
    assert script.main(["--smoke", "--rows", "0", "--spread", "4", "--out", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines()
            if "screen_rows=4,screen_rows_from=spread" in line]
    # two tasks left out in turn, each learning from 4 of the other's 8 records, all scored
    assert len(rows) == 1 and "| 4 | 8 |" in rows[0]
