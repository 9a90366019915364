"""scripts/reproduce_cnnopt.py --smoke: sizes, top config, PTX features, report."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "reproduce_cnnopt.py"


def test_smoke_run_writes_a_report_that_says_no_gpu_was_used(tmp_path):
    out = tmp_path / "cnnopt.md"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--smoke", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert "No GPU measurements were made" in text
    assert "Machine:" in text and "smoke run" in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| r18_l4 | C=512"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    full, schema, pruned_h100 = (int(c.replace(",", "")) for c in cells[2:5])
    assert full > schema > pruned_h100 > 0
    top = next(ln for ln in text.splitlines() if ln.startswith("| r18_l4 | 1 |"))
    cells = [c.strip() for c in top.strip("|").split("|")]
    if shutil.which("nvcc") and shutil.which("ptxas"):
        assert int(cells[12]) > 0                     # ptxas registers
        assert cells[13] == "0"                       # no spills
        assert cells[16] == cells[17]                 # executed FMAs per thread = expected


def test_measure_refuses_without_a_gpu_in_one_line(tmp_path):
    if shutil.which("nvidia-smi"):
        return  # a GPU machine would really measure
    proc = subprocess.run([sys.executable, str(SCRIPT), "--measure", "--out",
                           str(tmp_path / "m.md")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert err.count("\n") == 0 and err.startswith("error: --measure needs an NVIDIA GPU")
    assert not (tmp_path / "m.md").exists()
