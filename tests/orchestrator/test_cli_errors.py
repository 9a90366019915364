"""Bad input: one line on stderr, exit code 2, no traceback, nothing recorded lost."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from history.store import HistoryStore
from orchestrator.testing import TOY_TASK, toy_results
from orchestrator.testing.conformance import TOY_TARGET


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORCHESTRATOR_DB": str(cwd / "history.db")}
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def assert_one_line_error(p: subprocess.CompletedProcess, *needles: str) -> None:
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = [line for line in p.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), p.stderr
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("args,needles", [
    (["tune", "--op", "conv3d", "--shape", "N=1"], ["unknown operator 'conv3d'"]),
    (["tune", "--op", "conv2d", "--shape", "N=1,C=3,H=2,W=2,K=4,R=5,S=5"], ["the output would be"]),
    (["tune", "--op", "dense", "--shape", "M=1,K"], ["NAME=VALUE"]),
    (["tune", "--op", "dense"], ["needs --shape"]),
    (["tune"], ["nothing to tune"]),
    (["tune", "--only", "r18_l99"], ["no workload named r18_l99", "r18_l2"]),
    (["tune", "--suite", "missing.json"], ["cannot read suite file missing.json"]),
    (["tune", "--suite", "[onnx].json"], ["cannot read suite file [onnx].json"]),  # not markup
    (["tune", "--only", "r18_l2", "--searcher", "nope"], ["unknown searcher 'nope'", "random"]),
    (["tune", "--only", "r18_l2", "--measurer", "nope"], ["unknown measurer 'nope'"]),
    (["tune", "--only", "r18_l2", "--pruner", "nope"], ["unknown pruner 'nope'"]),
    (["tune", "--only", "r18_l2", "--searcher", "gga", "--searcher-opt", "popsize=4"],
     ["searcher 'gga': unknown option 'popsize'", "population"]),
    (["tune", "--only", "r18_l2", "--searcher", "xgb", "--searcher-opt", "rounds=many"],
     ["searcher 'xgb': option rounds takes a whole number, got 'many'"]),
    (["tune", "--only", "r18_l2", "--searcher", "tl", "--searcher-opt", "bogus=1"],
     ["searcher 'tl': unknown option 'bogus'", "filter", "plan_size"]),
    (["tune", "--only", "r18_l2", "--searcher", "auto", "--searcher-opt", 'gga={"pop": 4}'],
     ["searcher 'auto': gga: unknown option 'pop'"]),
    (["tune", "--only", "r18_l2", "--searcher", "auto", "--searcher-opt", "threshold=1.5"],
     ["searcher 'auto': option threshold must be within [0.0, 1.0], got 1.5"]),
    (["tune", "--only", "r18_l2", "--searcher", "random", "--searcher-opt", "x=1"],
     ["searcher 'random': unknown option 'x'; it takes no options"]),
    (["tune", "--only", "r18_l2", "--cost-model-opt", "rounds=3"],
     ["--cost-model-opt sets options of the cost model", "give --cost-model too"]),
    (["tune", "--only", "r18_l2", "--cost-model", "xgb", "--cost-model-opt", "rounds=many"],
     ["cost model 'xgb': option rounds takes a whole number, got 'many'"]),
    (["tune", "--only", "r18_l2", "--cost-model", "xgb", "--cost-model-opt", "depth=2"],
     ["cost model 'xgb': unknown option 'depth'", "max_depth"]),
    (["tune", "--only", "r18_l2", "--pruner", "psa", "--pruner", "psa-512", "--pruner-opt",
      "size=5"], ["--pruner-opt 'size=5': say which pruner", "--pruner-opt psa:size=5"]),
    (["tune", "--only", "r18_l2", "--pruner-opt", "psa:size=5"],
     ["--pruner-opt names pruner 'psa', which is not among --pruner", "add --pruner psa"]),
    (["tune", "--only", "r18_l2", "--pruner", "psa", "--pruner-opt", "psa:size"],
     ["--pruner-opt takes NAME:KEY=VALUE, got 'psa:size'"]),
    (["tune", "--only", "r18_l2", "--pruner", "psa", "--pruner-opt", "sise=5"],
     ["pruner 'psa': unknown option 'sise'", "explore"]),
    (["tune", "--only", "r18_l2", "--pruner", "psa", "--pruner-opt", "psa:size=many"],
     ["pruner 'psa': option size takes a whole number, got 'many'"]),
    (["tune", "--only", "r18_l2", "--space-opt", "x=1"],
     ["--space-opt sets options of the space generator", "give --space too"]),
    (["tune", "--only", "r18_l2", "--space", "cpu", "--space-opt", "x=1"],
     ["space generator 'cpu': unknown option 'x'; known: check"]),
    (["tune", "--only", "r18_l2", "--space", "cpu", "--space-opt", "check=loose"],
     ["space generator 'cpu': option check must be one of full, relaxed, off, got 'loose'"]),
    (["tune", "--only", "r18_l2", "--trials", "0"], ["--trials must be positive"]),
    (["tune", "--only", "r18_l2", "--runoff", "-2"], ["--runoff must be 0 (off) or more"]),
    (["tune", "--only", "r18_l2", "--db", "nosuch://x"], ["cannot use database URL"]),
    (["tune", "--only", "r18_l2", "--target", "tpu"], ["unknown target 'tpu'"]),
    (["history", "runs", "--db", "absent.db"], ["no history database"]),
    (["tune", "--only", "r18_l2", "--seconds", "-5"], ["--seconds must be positive, got -5"]),
    (["tune", "--only", "r18_l2", "--early-stop", "-1"], ["--early-stop must be 0 (off) or more"]),
    (["tune", "--only", "r18_l2", "--verify-top", "-1"], ["--verify-top must be 0 (off) or more"]),
    (["history", "runs", "--limit", "0"], ["--limit must be positive, got 0"]),
    (["history", "runs", "--op", "conv3d"], ["unknown operator 'conv3d'"]),
    (["history", "export", "--op", "conv3d", "out.jsonl"], ["unknown operator 'conv3d'"]),
    (["history", "export", "--status", "fine", "out.jsonl"], ["unknown status 'fine'", "ok, "]),
    (["history", "best", "--only", "r18_l2", "--k", "0"], ["--k must be positive, got 0"]),
    (["history", "similar", "--op", "dense", "--shape", "M=8,K=8,N=8", "--k", "0"],
     ["--k must be positive, got 0"]),
])
def test_bad_input(tmp_path, args, needles):
    assert_one_line_error(cli(*args, cwd=tmp_path), *needles)


def test_malformed_suite_entries_name_the_entry(tmp_path):
    (tmp_path / "s.json").write_text('{"x": [{"name": "w1", "op": "dense", "M": 1, "K": 2}]}')
    assert_one_line_error(cli("tune", "--suite", "s.json", cwd=tmp_path), "w1", "missing shape parameter")
    (tmp_path / "t.json").write_text("{oops")
    assert_one_line_error(cli("tune", "--suite", "t.json", cwd=tmp_path), "not valid JSON")


def test_a_corrupted_database_is_refused_and_left_alone(tmp_path):
    db = tmp_path / "broken.db"
    db.write_bytes(b"\x00garbage" * 512)
    before = db.read_bytes()
    assert_one_line_error(cli("tune", "--only", "r18_l2", "--db", str(db), cwd=tmp_path),
                          "cannot open history database")
    assert db.read_bytes() == before


def test_a_bad_import_file_keeps_the_database(tmp_path):
    store = HistoryStore.open(tmp_path / "history.db")
    store.record(run_id=None, task_id=store.ensure_task(TOY_TASK),
                 target_id=store.ensure_target(TOY_TARGET), results=toy_results(n=3))
    store.close()
    (tmp_path / "bad.jsonl").write_text('{"task": 1}\n')
    assert_one_line_error(cli("history", "import", "bad.jsonl", cwd=tmp_path), "bad.jsonl:1")
    assert HistoryStore.open(tmp_path / "history.db").count() == 3


def test_usage_errors_exit_2_without_traceback(tmp_path):
    p = cli("tune", "--bogus", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "--bogus" in p.stderr


def test_plan_prints_and_stores_plans(tmp_path):
    p = cli("plan", "--model", "resnet18", "--compare", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    import json
    data = json.loads(p.stdout)
    assert data["simulated"] is True and len(data["results"]) >= 7
    plans = HistoryStore.open(tmp_path / "history.db").plans()
    assert {r["strategy"] for r in plans} == {r["plan"]["strategy"] for r in data["results"]}
    assert_one_line_error(cli("plan", "--model", "nope", cwd=tmp_path), "unknown model 'nope'")
