"""scripts/history_ranking.py: gga's first candidates from the whole history ranked, or
ranked lazily, timed side by side."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, smoke_report


@pytest.fixture(scope="module")
def script():
    return load_script("history_ranking")


def test_the_report_pairs_each_task_and_round_of_the_two_ways(script):
    S = script.Sample
    samples = []
    for r, (full, lazy) in enumerate([(0.5, 0.1), (0.6, 0.1), (0.4, 0.2)]):
        samples += [S("h.db", "t1", r, "full", full, 100), S("h.db", "t1", r, "lazy", lazy, 7)]
    text = script.report(samples, {"h.db": 120}, 8, 3, "cmd")
    # full / lazy per round: 5, 6, 2 (3 pairs: 75%)
    assert ("| h.db | 120 | 1 | 0.500 | 0.100 | 5.000 [2.000, 6.000] at 75.0% | 100 | 7 |"
            in text)
    assert "| h.db | t1 | 0.500 | 0.100 | 7 |" in text and "Machine:" in text


def test_smoke_run_finds_the_same_candidates_both_ways_on_a_real_history(script, tmp_path):
    text = smoke_report(script, tmp_path / "ranking.md")
    rows = [line for line in text.splitlines() if line.startswith("| smoke-history.db | 16 | 2 |")]
    assert len(rows) == 1  # two tasks of 8 real measurements, each left out in turn


def test_a_missing_database_is_a_one_line_error(script, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        script.main(["--db", str(tmp_path / "nowhere.db"), "--out", str(tmp_path / "r.md")])
    assert exc.value.code == 2
    assert "--db must name existing history databases" in capsys.readouterr().err
