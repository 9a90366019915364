"""``orchestrator train --cost-model cnnopt-hybrid`` on SYNTHETIC measurements in history."""

from __future__ import annotations

import random

import pytest

from history.store import HistoryStore
from orchestrator.gpus import GPUS
from orchestrator.cli import main
from plugins.cnnopt.capacity import CapacityPruner
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.regression import TrainedModel
from tests.plugins.cnnopt.helpers import H100, layer, synthetic_results


def _history(path, measurer="cuda", n=60):
    task = layer("r18_l4ds")
    space = CapacityPruner(rank=False).prune(CnnoptSpaces().generate(task, H100), H100)
    configs = list(space.candidates)
    random.Random(0).shuffle(configs)
    store = HistoryStore.open(str(path))
    try:
        store.record(run_id=None, task_id=store.ensure_task(task),
                     target_id=store.ensure_target(H100),
                     results=synthetic_results(space, configs[:n], GPUS["h100"], measurer))
    finally:
        store.close()


def _run(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(args)
    captured = capsys.readouterr()
    return exc.value.code, captured.out, captured.err


def test_train_writes_a_model_from_real_measurer_results(tmp_path, capsys):
    db, out = tmp_path / "h.db", tmp_path / "model.json"
    _history(db)
    code, stdout, stderr = _run(["train", "--cost-model", "cnnopt-hybrid", "--target",
                                 "cuda:h100", "--db", str(db), "--out", str(out)], capsys)
    assert code == 0, stderr
    assert "trained on 60 configs of 1 task(s)" in stdout
    model = TrainedModel.read(out)
    assert model.kind == "hybrid" and model.gpu == "h100" and model.info["samples"] == 60


def test_train_ignores_static_results_and_says_so_in_one_line(tmp_path, capsys):
    db = tmp_path / "h.db"
    _history(db, measurer="static")
    code, _, stderr = _run(["train", "--cost-model", "cnnopt-hybrid", "--target", "cuda:h100",
                            "--db", str(db), "--out", str(tmp_path / "m.json")], capsys)
    assert code == 2
    errors = [ln for ln in stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and "needs at least 16 measured cnnopt configs, found 0" in errors[0]


def test_train_refuses_an_analytical_model(tmp_path, capsys):
    code, _, stderr = _run(["train", "--cost-model", "cnnopt-analytical", "--target",
                            "cuda:h100", "--db", str(tmp_path / "x.db")], capsys)
    assert code == 2 and "cannot train cost model 'cnnopt-analytical'" in stderr
