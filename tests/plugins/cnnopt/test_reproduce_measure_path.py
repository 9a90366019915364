"""The --measure path of scripts/reproduce_cnnopt.py, driven by a SYNTHETIC measurer
(the real one needs a GPU): training, LoP of the top-30 and trials to 95%."""

from __future__ import annotations

import sys
from pathlib import Path

from history.store import HistoryStore
from orchestrator.gpus import GPUS
from orchestrator.result import MeasureResult, MeasureStatus
from tests.plugins.cnnopt.helpers import H100, synthetic_seconds
from tests.scripts_under_test import load_script

exit_status = load_script("script_main").exit_status
SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "reproduce_cnnopt.py"


class SyntheticMeasurer:
    def measure(self, space, target, configs):
        return [MeasureResult(c, MeasureStatus.OK,
                              (synthetic_seconds(space, c, GPUS[target.arch]),),
                              measurer="cuda") for c in configs]

    def close(self) -> None:
        pass


def test_synthetic_measure_path_trains_and_reports_lop(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    script = load_script("reproduce_cnnopt")
    monkeypatch.setattr(script, "local_gpu_names", lambda: ["NVIDIA H100 80GB HBM3"])
    monkeypatch.setattr(script, "resolve_target", lambda name: H100)

    import gpu_bench

    monkeypatch.setattr(gpu_bench.Bench, "_measure",
                        lambda self, space, chunk: SyntheticMeasurer().measure(
                            space, self.target, chunk))
    out, db = tmp_path / "m.md", tmp_path / "m.db"
    code = script.main(["--measure", "--only", "r18_l4", "--no-ptx", "--top", "1",
                        "--train-problems", "3", "--train-configs", "20", "--train-max-xy", "28",
                        "--train-max-channels", "64", "--exhaustive",
                        "300", "--max-trials", "40", "--db", str(db), "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert "Measured on an NVIDIA H100" in text and "No GPU measurements were made" not in text
    row = next(ln for ln in text.splitlines() if ln.startswith("| r18_l4 | 232 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "232 (all)"                   # exhaustive: the whole pruned space
    assert all(c.endswith("%") for c in cells[5:8])  # LoP analytical, ML, hybrid
    assert float(cells[5].rstrip("%")) >= 0
    assert (tmp_path / "config" / "orchestrator" / "cnnopt" / "h100-hybrid.json").exists()


def test_replay_of_the_committed_h100_dataset_gives_the_recorded_report(tmp_path, monkeypatch):
    """The H100 measurements committed in docs/results/data, imported into a database,
    reproduce the recorded report's row without a GPU (--replay): same training set,
    same models, same LoP and trials."""
    from history.io import import_records

    root = SCRIPT.parents[1]
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    script = load_script("reproduce_cnnopt")
    monkeypatch.setattr(script, "local_gpu_names", lambda: [])
    db = tmp_path / "h100.db"
    store = HistoryStore.open(str(db))
    imported, _ = import_records(store, root / "docs" / "results" / "data" /
                                 "cnnopt-psa-h100.jsonl", "jsonl")
    store.close()
    assert imported > 1000
    out = tmp_path / "replay.md"
    code = script.main(["--measure", "--replay", "--no-static", "--db", str(db),
                        "--train-problems", "9", "--train-configs", "40", "--only", "r18_l4",
                        "--reference", "100", "--exhaustive", "250", "--max-trials", "60",
                        "--vendor", "--vendor-json",
                        str(root / "docs" / "results" / "data" / "cnnopt-vendor-h100.json"),
                        "--out", str(out)])
    assert code == 0
    recorded = (root / "docs" / "results" / "cnnopt-h100.md").read_text().splitlines()
    rows = [ln for ln in recorded if ln.startswith("| r18_l4 |")]
    replayed = [ln for ln in out.read_text().splitlines() if ln.startswith("| r18_l4 |")]
    assert len(rows) == 2 and replayed == rows   # LoP row, then the cuDNN/MetaSchedule row


def test_replay_refuses_a_missing_measurement_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    script = load_script("reproduce_cnnopt")
    code = exit_status(script.main, ["--measure", "--replay", "--no-static", "--db",
                                     str(tmp_path / "e.db"), "--train-problems", "1",
                                     "--only", "r18_l4", "--out", str(tmp_path / "x.md")])
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]  # progress lines come first
    assert last.startswith("error: replay:") and "measure on a GPU" in last


def test_metaschedule_candidates_build_with_the_baseline_builder():
    """MetaSchedule's default CUDA builder timed out on every candidate (H100 run); the
    baseline's builder compiles them (on the CPU: building needs no GPU)."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    sys.path.insert(0, str(SCRIPT.parent))
    import ms_builder
    from orchestrator.task import Task

    task = Task.create("conv2d", {"N": 1, "C": 32, "H": 7, "W": 7, "K": 32, "R": 3, "S": 3,
                                  "stride": 1, "pad": 1})
    target = tvm.target.Target("nvidia/nvidia-h100")
    ctx = ms.TuneContext(mod=tvm.IRModule({"main": task.operator.prim_func(task.params)}),
                         target=target, space_generator="post-order-apply",
                         search_strategy="replay-trace", num_threads=1)
    design = ctx.space_generator.generate_design_space(ctx.mod)[0]
    module = ms_builder.fast_build(design.mod, target, None)
    assert any(m.kind == "cuda" for m in module.imports)
