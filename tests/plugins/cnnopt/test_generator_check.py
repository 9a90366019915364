"""The cnnopt space's check against what happened on an H100: configs whose shared-memory
stage exceeds the 48 KiB TVM can declare failed in ptxas; the check now rejects them."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.space import Config
from orchestrator.task import Task
from plugins.cnnopt.capacity import STATIC_SMEM_BYTES
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.plan import smem_bytes
from plugins.cnnopt.schema import dims_of, tiles_of
from tests.plugins.cnnopt.helpers import H100

DATASET = (Path(__file__).resolve().parents[3] / "docs" / "results" / "data"
           / "cnnopt-psa-h100.jsonl")


def _measured(layer_shape: dict[str, int]) -> list[tuple[Config, str, str]]:
    out = []
    for line in DATASET.read_text().splitlines():
        rec = json.loads(line)
        if rec["task"]["shape"] == layer_shape:
            out.append((Config.of(rec["config"]), rec["status"], rec.get("error", "")))
    return out


def test_check_rejects_exactly_the_configs_ptxas_refused_on_the_h100() -> None:
    shape = {"N": 1, "C": 256, "H": 14, "W": 14, "K": 512, "R": 3, "S": 3, "stride": 2,
             "pad": 1, "dilation": 1}
    task = Task.create("conv2d", shape)
    space = CnnoptSpaces().generate(task, H100)
    measured = _measured(shape)
    failed = [(c, e) for c, status, e in measured if status == "build_error"]
    built = [c for c, status, _ in measured if status == "ok"]
    assert failed and built
    assert all("too much shared data" in e for _, e in failed)
    dims = dims_of(task)
    for cfg, _ in failed:
        why = space.validate(cfg)
        assert why is not None and "shared-memory stage" in why
        assert smem_bytes(dims, tiles_of(dims, cfg)) > STATIC_SMEM_BYTES
    assert all(space.validate(c) is None for c in built)
