"""scripts/cli_start.py: a short `orchestrator tune`, host CPU asked of TVM or remembered."""

from __future__ import annotations

import pytest

from tests.scripts_under_test import load_script, smoke_report


@pytest.fixture(scope="module")
def script():
    return load_script("cli_start")


def test_the_report_pairs_the_two_settings_round_by_round(script):
    S = script.Sample
    samples = [S(0, "asked", 6.0), S(0, "remembered", 5.0), S(1, "remembered", 4.0),
               S(1, "asked", 6.0), S(2, "asked", 5.5), S(2, "remembered", 5.0)]
    text = script.report(samples, 8, "cmd")
    # asked / remembered per round: 1.2, 1.5, 1.1 -> median 1.2 over [1.1, 1.5] (75%).
    assert "| 6.00 | 5.00 | 1.200 [1.100, 1.500] at 75.0% | 3 |" in text
    assert "| 2 | 6.00 | 4.00 |" in text and "Machine:" in text


def test_smoke_run_times_real_commands(script, tmp_path):
    text = smoke_report(script, tmp_path / "cli.md")
    row = next(line for line in text.splitlines() if line.startswith("| ") and " at " in line)
    asked, remembered = (float(c) for c in row.split("|")[1:3])
    assert asked > 0 and remembered > 0
