"""scripts/tuna_feature_study.py in a small but real form: tiny workloads measured for
real, their configs analyzed, feature sets compared, the counts reused on a rerun."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"
REFERENCE = "mb_dw13;depthwise_conv2d:N=1,C=32,H=14,W=14,R=3,S=3,stride=1,pad=1"
CALIBRATION = "dense:M=16,K=64,N=64"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=900)


def test_feature_study_compares_feature_sets_on_measured_configs(tmp_path):
    ref, cal = tmp_path / "ref.db", tmp_path / "cal.db"
    for db, workloads in ((ref, REFERENCE), (cal, CALIBRATION)):
        proc = _run(str(SCRIPTS / "reproduce_tuna.py"), "--measure-only", "--sample", "12",
                    "--workloads", workloads, "--db", str(db))
        assert proc.returncode == 0, proc.stderr[-2000:]
    out, counts = tmp_path / "features.md", tmp_path / "counts.jsonl"
    cmd = [str(SCRIPTS / "tuna_feature_study.py"), "--reference-db", str(ref),
           "--workloads", REFERENCE, "--calibration-db", str(cal),
           "--calibration-workloads", CALIBRATION, "--calibration-cores", "2",
           "--counts", str(counts), "--out", str(out), "--workers", "2"]
    proc = _run(*cmd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "analyzing" in proc.stderr
    rows = [line for line in out.read_text().splitlines()
            if line.startswith("| version") or line.startswith("| instructions")]
    methods = {tuple(c.strip() for c in row.strip("|").split("|")[:2]) for row in rows}
    assert any(m == "LOWO on reference, strong pull" for _, m in methods)
    assert any(m == "fitted on calibration, weak pull" for _, m in methods)
    assert ("instructions alone", "prior alone") in methods
    for row in rows:
        top10, top50, rho = (c.strip() for c in row.strip("|").split("|")[2:5])
        assert 0.0 < float(top10) <= 1.0 and 0.0 < float(top50) <= 1.0
        assert -1.0 <= float(rho) <= 1.0
    assert len(counts.read_text().splitlines()) == 1 + 36  # header + every measured config
    again = _run(*cmd)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "reusing the raw counts" in again.stderr and "analyzing" not in again.stderr


def test_a_database_without_the_workloads_is_a_one_line_error(tmp_path):
    proc = _run(str(SCRIPTS / "tuna_feature_study.py"), "--reference-db",
                str(tmp_path / "missing.db"), "--calibration-db", str(tmp_path / "none.db"),
                "--out", str(tmp_path / "x.md"), "--counts", str(tmp_path / "c.jsonl"))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
