"""scripts/reproduce_tuna.py in a small but real form: real measurements of a tiny
sample, static analysis, end-to-end static tuning with verification, report."""

from __future__ import annotations

import collections
import re
import subprocess
import sys
from pathlib import Path

from history.models import MeasurementRow
from history.store import HistoryStore

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "reproduce_tuna.py"


def test_smoke_run_measures_analyzes_tunes_and_reports(tmp_path):
    db, out = tmp_path / "ref.db", tmp_path / "tuna.md"
    cmd = [sys.executable, str(SCRIPT), "--smoke", "--workloads", "mb_dw13", "--sample", "6",
           "--static-trials", "8", "--no-lowo", "--db", str(db), "--out", str(out),
           "--feature-cache", str(tmp_path / "features")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| mb_dw13 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3] == "6"                                     # sample size
    assert 0 < float(cells[5]) <= 1.0                           # top-10 ratio
    found = float(cells[13].rstrip("%"))                        # e2e best / sample best
    assert found > 0
    assert re.fullmatch(r"\d+ \+ \d+ of \d+", cells[14])        # static s + verify s of sample s
    assert "Smoke run" in text and "configs/s/core** (cold cache)" in text
    # The caches with their ways (or '?' where Linux does not say), and where the
    # coefficients come from: a fit with its data, or the prior.
    assert re.search(r"L1d \d+ KiB (\d+|\?)-way, L2 \d+ KiB (\d+|\?)-way\.", text)
    assert re.search(r"Default: (the built-in prior of \w+ \(nothing fitted|.+? \(\w+\); "
                     r"fitted on \d+ configs)", text)
    assert re.search(r"e2e >= 90% of the sample best \(mean (met|NOT met); [01] of 1 workloads\)",
                     text)
    # the sample and the verified top configs are in the reference history
    # and, side by side, the 3 best verified configs and the sample's 3 best (a config may
    # be both), 3 rounds each
    store = HistoryStore.open(db)
    try:
        views = store.runs()
        runs = {r.searcher: r.id for r in views}
        assert sorted(runs) == ["remeasure", "tuna-es", "uniform-sample"]
        # every run the script records is closed, none left "running"
        assert {r.status for r in views} == {"finished"}
        assert all(r.finished_at for r in views)

        def configs(run: int) -> list[str]:
            return [rec.result.config.key
                    for rec in store.records(where=[MeasurementRow.run_id == run])]
        again, verified = configs(runs["remeasure"]), set(configs(runs["tuna-es"]))
    finally:
        store.close()
    assert 3 <= len(set(again)) <= 6 and set(collections.Counter(again).values()) == {3}
    assert 0 < len(verified & set(again)) <= 3
    # a rerun reuses the measured sample (nothing measured twice) and the sample's
    # features (nothing analyzed twice), and still reports
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "measuring 6 configs" not in again.stderr
    assert "static analysis: 0 configs" in again.stderr
    assert "all 6 configs' features came from the feature cache" in out.read_text()


def test_an_unknown_operator_is_a_one_line_error(tmp_path):
    db = tmp_path / "ref.db"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--measure-only", "--workloads",
                           "convolution:N=1", "--db", str(db)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown operator 'convolution'")
    assert "Traceback" not in proc.stderr and not db.exists()
