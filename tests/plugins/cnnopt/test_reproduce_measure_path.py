"""The --measure path of scripts/reproduce_cnnopt.py, driven by a SYNTHETIC measurer
(the real one needs a GPU): training, LoP of the top-30 and trials to 95%."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from history.store import HistoryStore
from orchestrator.gpus import GPUS
from orchestrator.result import MeasureResult, MeasureStatus
from tests.plugins.cnnopt.helpers import H100, synthetic_seconds

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "reproduce_cnnopt.py"


class SyntheticMeasurer:
    def measure(self, space, target, configs):
        return [MeasureResult(c, MeasureStatus.OK,
                              (synthetic_seconds(space, c, GPUS[target.arch]),),
                              measurer="cuda") for c in configs]

    def close(self) -> None:
        pass


def _script():
    spec = importlib.util.spec_from_file_location("reproduce_cnnopt", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["reproduce_cnnopt"] = module
    spec.loader.exec_module(module)
    return module


def test_synthetic_measure_path_trains_and_reports_lop(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    script = _script()
    monkeypatch.setattr(script, "local_gpu_names", lambda: ["NVIDIA H100 80GB HBM3"])
    monkeypatch.setattr(script, "resolve_target", lambda name: H100)

    class Bench(script.Bench):
        def __init__(self, target, db, batch):
            self.target, self.batch = target, batch
            self.measurer = SyntheticMeasurer()
            self.store = HistoryStore.open(db)
            self.target_id = self.store.ensure_target(target)
            self.cache = {}

    monkeypatch.setattr(script, "Bench", Bench)
    out, db = tmp_path / "m.md", tmp_path / "m.db"
    code = script.main(["--measure", "--only", "r18_l4", "--no-ptx", "--top", "1",
                        "--train-problems", "3", "--train-configs", "20", "--train-max-xy", "28",
                        "--train-max-channels", "64", "--exhaustive",
                        "300", "--max-trials", "40", "--db", str(db), "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert "UNVERIFIED" in text and "No GPU measurements were made" not in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| r18_l4 | 232 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "232 (all)"                   # exhaustive: the whole pruned space
    assert all(c.endswith("%") for c in cells[5:8])  # LoP analytical, ML, hybrid
    assert float(cells[5].rstrip("%")) >= 0
    assert (tmp_path / "config" / "orchestrator" / "cnnopt" / "h100-hybrid.json").exists()
