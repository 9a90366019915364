"""`orchestrator tune` with several workloads keeps one measurer for all of them: the
local measurer's workers (a TVM import each) start once, not once per workload."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli import app
from plugins.measure import workerpool


def test_the_workers_start_once_for_every_workload(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[str] = []
    real_init = workerpool.Worker.__init__

    def counting_init(self, role, env, log_path):
        started.append(role)
        real_init(self, role, env, log_path)

    monkeypatch.setattr(workerpool.Worker, "__init__", counting_init)
    suite = tmp_path / "two.json"
    suite.write_text(json.dumps({"small": [
        {"name": "d1", "op": "dense", "M": 16, "K": 32, "N": 16},
        {"name": "d2", "op": "dense", "M": 32, "K": 16, "N": 16}]}))
    out = CliRunner().invoke(app, ["tune", "--suite", str(suite), "--trials", "2",
                                   "--batch-size", "2", "--db", str(tmp_path / "h.db"),
                                   "--measurer-opt", "build_workers=2", "--json"])
    assert out.exit_code == 0, out.output
    summaries = json.loads(out.stdout)
    assert [s["measured"] for s in summaries] == [2, 2]
    # the default searcher, auto: tl on an empty history, then gga on d1's results
    assert [s["searcher_note"].split(":")[0] for s in summaries] == ["auto ran tl",
                                                                   "auto ran gga"]
    assert sorted(started) == ["build", "build", "run"]  # one set, for both workloads
