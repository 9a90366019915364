"""`orchestrator tune` labels latencies that a measurer predicts (static analysis) as
predictions, in the table and in --json, and measured ones as measured."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def tune(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORCHESTRATOR_DB": str(cwd / "history.db"), "COLUMNS": "200",
           "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run([sys.executable, "-m", "orchestrator", "tune", "--op", "dense",
                           "--shape", "M=16,K=16,N=16", "--trials", "3", "--seed", "1", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_static_results_are_labelled_predicted(tmp_path: Path) -> None:
    table = tune("--measurer", "static", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "PREDICTED by the static measurer" in table.stdout
    assert "predicted best ms" in table.stdout and "scored" in table.stdout
    as_json = tune("--measurer", "static", "--json", cwd=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    assert [d["predicted"] for d in json.loads(as_json.stdout)] == [True]


def test_measured_results_are_not_labelled_predicted(tmp_path: Path) -> None:
    p = tune("--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [d["predicted"] for d in json.loads(p.stdout)] == [False]
    table = tune(cwd=tmp_path)
    assert table.returncode == 0 and "PREDICTED" not in table.stdout
