"""`orchestrator tune --pruner psa --pruner-opt ...`: the options reach the psa pruner on a
real CUDA space (cuda:h100, no GPU needed: the replay measurer answers, from an empty
history, that nothing is recorded) and the run's space is the pruned one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SHAPE = "N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1"


def tune(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    db = cwd / "history.db"
    env = {**os.environ, "ORCHESTRATOR_DB": str(db), "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", "tune", "--op", "conv2d", "--shape", SHAPE,
         "--target", "cuda:h100", "--space", "cuda", "--searcher", "grid", "--trials", "100",
         "--measurer", "replay", "--measurer-opt", f"db={db}", "--json", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_pruner_options_set_the_target_space_size(tmp_path: Path) -> None:
    small = ["--pruner", "psa", "--pruner-opt", "size=5", "--pruner-opt",
             "psa:max_enumerate=2000", "--pruner-opt", "psa:sample_size=400"]
    p = tune(*small, "--pruner-opt", "explore=0", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (run,) = json.loads(p.stdout)
    assert run["space_size"] == 5 and run["trials"] == 5
    assert run["stop_reason"] == "space_exhausted"
    assert run["statuses"] == {"run_error": 5}  # replay: none of them is recorded
    wider = tune(*small, "--pruner-opt", "explore=0.4", cwd=tmp_path)
    assert wider.returncode == 0, wider.stderr
    (other,) = json.loads(wider.stdout)
    assert other["run_id"] != run["run_id"] and other["space_size"] == 7  # 5 + 40% of 5
