"""`orchestrator build`: the best recorded config of an installed template, built with TVM
into a library that loads and matches the NumPy reference; bad requests fail in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from history.store import HistoryStore
from orchestrator.errors import OrchestratorError
from orchestrator.export import export_best, file_stem, find_best
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.target import detect_host
from orchestrator.task import Task

TASK = Task.create("dense", {"M": 16, "K": 32, "N": 16}, name="tiny dense")


@pytest.fixture(scope="module")
def host():
    return detect_host()


@pytest.fixture(scope="module")
def space(host):
    return load_plugins().registry("space_generator").create("cpu").generate(TASK, host)


def _valid(space, n):
    configs = [c for c in space if space.check is None or space.check(c) is None]
    return configs[:n]


def _record(store, host, config, seconds, template):
    store.record(run_id=None, task_id=store.ensure_task(TASK), target_id=store.ensure_target(host),
                 template=template,
                 results=[MeasureResult(config, MeasureStatus.OK, (seconds,), measurer="local")])


def test_the_fastest_config_of_an_installed_template_is_built_and_checked(tmp_path, host, space):
    store = HistoryStore.open(tmp_path / "h.db")
    mine, other, older = _valid(space, 3)
    _record(store, host, mine, 2e-3, space.template)
    _record(store, host, other, 3e-3, space.template)
    _record(store, host, older, 1e-3, "cpu@999")  # faster, but built by a template we lack
    best = find_best(store, load_plugins(), TASK, host)
    assert best.record.result.config == mine and best.space.template == space.template

    built = export_best(best, host, tmp_path / "out", check=True, source="test.db")
    assert built.library == tmp_path / "out" / "tiny_dense.so" and built.library.exists()
    assert built.check is not None and built.check.ok and built.check.latency > 0
    note = json.loads(built.note.read_text())
    assert note["config"] == mine.to_dict() and note["template"] == space.template
    assert note["recorded"]["latency_ms"] == pytest.approx(2.0)
    assert note["recorded"]["database"] == "test.db" and note["checked"]["matches_reference"]

    import tvm  # the library is usable on its own, as the README says
    a, b = TASK.operator.random_inputs(TASK.params, seed=3)
    out = tvm.runtime.tensor(np.zeros((16, 16), "float32"), tvm.cpu())
    tvm.runtime.load_module(str(built.library))["main"](
        tvm.runtime.tensor(a, tvm.cpu()), tvm.runtime.tensor(b, tvm.cpu()), out)
    expected = TASK.operator.reference([a, b], TASK.params)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-4)
    store.close()


def test_no_buildable_record_is_a_one_line_error(tmp_path, host, space):
    store = HistoryStore.open(tmp_path / "h.db")
    with pytest.raises(OrchestratorError, match="no measurement of tiny dense .* tune it first"):
        find_best(store, load_plugins(), TASK, host)
    _record(store, host, _valid(space, 1)[0], 1e-3, "cpu@999")
    with pytest.raises(OrchestratorError, match=rf"built by an installed template \({space.template}\)"):
        find_best(store, load_plugins(), TASK, host)
    store.close()


def test_an_out_that_is_a_file_is_a_one_line_error(tmp_path, host, space):
    store = HistoryStore.open(tmp_path / "h.db")
    _record(store, host, _valid(space, 1)[0], 1e-3, space.template)
    (tmp_path / "taken").write_text("")
    with pytest.raises(OrchestratorError, match="cannot write to --out .*taken"):
        export_best(find_best(store, load_plugins(), TASK, host), host, tmp_path / "taken")
    store.close()


def test_a_library_that_does_not_run_is_a_failed_check(tmp_path, host, space, monkeypatch):
    import orchestrator.export as export

    def broken(path, task):
        raise RuntimeError("cannot load\nTVMError: undefined symbol: main")

    store = HistoryStore.open(tmp_path / "h.db")
    _record(store, host, _valid(space, 1)[0], 1e-3, space.template)
    monkeypatch.setattr(export, "check_library", broken)
    built = export_best(find_best(store, load_plugins(), TASK, host), host, tmp_path / "out",
                        check=True)
    assert built.check is not None and not built.check.ok
    assert built.check.mismatch == ("the library did not run: RuntimeError: TVMError: "
                                    "undefined symbol: main")
    assert json.loads(built.note.read_text())["checked"]["matches_reference"] is False
    store.close()


def test_file_names_are_safe():
    assert file_stem(TASK) == "tiny_dense"
    unnamed = Task.create("dense", {"M": 16, "K": 32, "N": 16})
    assert file_stem(unnamed) == f"dense-{unnamed.key_hash[:10]}"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORCHESTRATOR_DB": str(cwd / "history.db"), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "orchestrator", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_cli_builds_what_tune_found(tmp_path):
    shape = ["--op", "dense", "--shape", "M=16,K=32,N=16"]
    tuned = cli("tune", *shape, "--trials", "4", "--json", cwd=tmp_path)
    assert tuned.returncode == 0, tuned.stderr
    best = json.loads(tuned.stdout)[0]["best"]
    p = cli("build", *shape, "--out", "libs", "--check", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    [note] = json.loads(p.stdout)
    assert note["config"] == best["config"] and Path(tmp_path / note["library"]).exists()
    assert note["checked"]["matches_reference"] and note["checked"]["latency_ms"] > 0
    assert note["recorded"]["latency_ms"] == pytest.approx(best["latency_ms"])
    table = cli("build", *shape, "--out", "libs", cwd=tmp_path)
    assert table.returncode == 0 and "Best configs built for llvm" in table.stdout


@pytest.mark.parametrize("args,needle", [
    (["build", "--only", "r18_l2"], "no history database at"),
    (["build", "--only", "r18_l2", "--target", "cuda:h100", "--check"], "--check runs the library"),
])
def test_cli_errors_are_one_line(tmp_path, args, needle):
    p = cli(*args, cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    [line] = p.stderr.strip().splitlines()
    assert line.startswith("error:") and needle in line


def test_cli_build_of_an_untuned_workload_says_to_tune_it(tmp_path):
    HistoryStore.open(tmp_path / "history.db").close()
    p = cli("build", "--only", "r18_l2", cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    [line] = p.stderr.strip().splitlines()
    assert "no measurement of r18_l2" in line and "tune it first" in line
