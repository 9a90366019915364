"""The local measurer with real TVM builds and runs of tiny dense kernels."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from orchestrator.components import Measurer
from orchestrator.errors import OptionError, OrchestratorError
from orchestrator.kernels import compare
from orchestrator.registry import ComponentRegistry
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.target import TargetInfo, cpu_cores, detect_host
from plugins.measure import orchestrator_add_measurers
from plugins.measure.local import LocalMeasurer
from plugins.measure.workerpool import one_line
from tests.plugins.measure import helpers

ROOT = Path(__file__).resolve().parents[3]
REPEAT = 2
# Ok variants come after the crashing ones: a crash must cost its own result only.
BATCH = ("ok", "invalid", "die", "crash", "split", "error", "slow", "hang", "wrong", "noisy")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_gone(pids: list[int], seconds: float = 15.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


@pytest.fixture(scope="module")
def target() -> TargetInfo:
    return detect_host()


@pytest.fixture(scope="module")
def measurer() -> Iterator[LocalMeasurer]:
    # The contention guard is on (by default); a hang is found after run_timeout plus
    # guard_wait, the longest a guarded timing may wait.
    m = LocalMeasurer(build_workers=2, build_timeout=4, run_timeout=4, repeat=REPEAT,
                      min_repeat_ms=1, guard_wait=1)
    yield m
    m.close()


@pytest.fixture(scope="module")
def batch(measurer: LocalMeasurer, target: TargetInfo) -> dict[str, MeasureResult]:
    configs = [helpers.config(v) for v in BATCH]
    results = measurer.measure(helpers.space(), target, configs)
    assert [r.config for r in results] == configs
    return {r.config["variant"]: r for r in results}


@pytest.mark.parametrize("variant", ["ok", "split", "noisy"])
def test_good_kernels_are_timed(batch: dict[str, MeasureResult], variant: str) -> None:
    r = batch[variant]
    assert r.status is MeasureStatus.OK, r.error
    assert len(r.latencies) == REPEAT and all(s > 0 for s in r.latencies)
    assert r.build_seconds > 0 and r.run_seconds > 0
    assert r.measurer == "local" and r.error == ""


def test_invalid_config(batch: dict[str, MeasureResult]) -> None:
    r = batch["invalid"]
    assert r.status is MeasureStatus.INVALID_CONFIG
    assert r.error == "InvalidConfigError: variant 'invalid' cannot be applied"
    assert r.latencies == ()


def test_build_error_keeps_the_last_line(batch: dict[str, MeasureResult]) -> None:
    r = batch["error"]
    assert r.status is MeasureStatus.BUILD_ERROR
    assert r.error == "RuntimeError: the meaningful last line"


def test_build_timeout(batch: dict[str, MeasureResult]) -> None:
    r = batch["slow"]
    assert r.status is MeasureStatus.BUILD_TIMEOUT
    assert "timeout" in r.error and r.build_seconds >= 4


def test_build_worker_crash(batch: dict[str, MeasureResult]) -> None:
    r = batch["die"]
    assert r.status is MeasureStatus.BUILD_ERROR
    assert "died" in r.error and "SIGSEGV" in r.error


def test_wrong_answer(batch: dict[str, MeasureResult]) -> None:
    r = batch["wrong"]
    assert r.status is MeasureStatus.WRONG_ANSWER
    assert r.error.startswith("max abs error")


def test_kernel_crash(batch: dict[str, MeasureResult]) -> None:
    r = batch["crash"]
    assert r.status is MeasureStatus.RUN_ERROR
    assert "SIGABRT" in r.error


def test_kernel_hang(batch: dict[str, MeasureResult]) -> None:
    r = batch["hang"]
    assert r.status is MeasureStatus.RUN_TIMEOUT
    assert r.run_seconds >= 4 + 1


def test_a_config_given_twice_is_built_once_and_timed_twice(
        measurer: LocalMeasurer, target: TargetInfo) -> None:
    """The loop's re-timings under ``--confirm`` come as one batch of the same config."""
    ok, bad = helpers.config("ok"), helpers.config("error")
    results = measurer.measure(helpers.space(), target, [ok, bad, ok, bad])
    assert [r.config for r in results] == [ok, bad, ok, bad]
    first, again = results[0], results[2]
    assert first.status is again.status is MeasureStatus.OK, (first.error, again.error)
    assert first.build_seconds > 0 and again.build_seconds == 0  # built once
    assert again.run_seconds > 0 and len(again.latencies) == REPEAT
    assert [r.status for r in results[1::2]] == [MeasureStatus.BUILD_ERROR] * 2
    assert results[3].error == "RuntimeError: the meaningful last line"


def test_workers_are_reused_then_closed(batch: dict[str, MeasureResult],
                                        measurer: LocalMeasurer, target: TargetInfo) -> None:
    """After the batch's crashes the workers were replaced; now they are reused as they are."""
    space = helpers.space()
    first = measurer.measure(space, target, [helpers.config("ok"), helpers.config("split")])
    assert [r.status for r in first] == [MeasureStatus.OK] * 2
    pids = measurer.worker_pids()
    assert measurer.runner_threads() == target.cores  # TVM_NUM_THREADS reached the runner
    second = measurer.measure(space, target, [helpers.config("split"), helpers.config("ok")])
    assert [r.status for r in second] == [MeasureStatus.OK] * 2
    assert measurer.worker_pids() == pids
    root = measurer._root
    assert root is not None and not list(root.glob("kernel-*"))  # artifacts deleted
    measurer.close()  # a later measure would start workers again
    assert _wait_gone([p for role in pids.values() for p in role], 0.0) == []
    assert measurer.worker_pids() == {"build": [], "run": []} and not root.exists()


def test_empty_batch_starts_nothing(target: TargetInfo) -> None:
    m = LocalMeasurer()
    assert m.measure(helpers.space(), target, []) == []
    assert m.worker_pids() == {"build": [], "run": []}
    m.close()


def test_prepare_starts_the_workers_before_the_first_batch(target: TargetInfo) -> None:
    m = LocalMeasurer(build_workers=2, repeat=REPEAT, min_repeat_ms=1)
    try:
        m.prepare(helpers.space(), target)
        pids = m.worker_pids()
        assert len(pids["build"]) == 2 and len(pids["run"]) == 1
        results = m.measure(helpers.space(), target, [helpers.config("ok")])
        assert [r.status for r in results] == [MeasureStatus.OK]
        assert m.worker_pids() == pids  # the first batch used the workers started early
    finally:
        m.close()
    off = LocalMeasurer(prestart="false")
    off.prepare(helpers.space(), target)
    assert off.worker_pids() == {"build": [], "run": []}
    off.close()


@pytest.mark.skipif(sys.platform != "linux", reason="busy workers die with their parent "
                    "through prctl(PR_SET_PDEATHSIG), which only Linux has")
def test_killed_parent_leaves_no_workers(tmp_path: Path) -> None:
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    # TMPDIR: the killed parent cannot remove its scratch directory.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "tests.plugins.measure.parent_script"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line, "the parent script printed no worker pids"
        pids = [p for role in json.loads(line).values() for p in role]
        assert len(pids) == 2
        time.sleep(0.5)  # let the runner get stuck in the hanging kernel
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert _wait_gone(pids) == []


def test_registered_as_local() -> None:
    registry = ComponentRegistry("measurer")
    orchestrator_add_measurers(registry=registry)
    m = registry.create("local", repeat="3", build_timeout=10)
    assert isinstance(m, LocalMeasurer) and isinstance(m, Measurer)
    assert m.repeat == 3 and m.build_timeout == 10.0
    assert m.guard == 0.25 and m.guard_wait == 20.0  # the contention guard is on by default
    assert registry.get("local").description
    with pytest.raises(OrchestratorError,
                       match="unknown option 'repeats'.*known: atol, build_timeout"):
        registry.create("local", repeats=3)
    with pytest.raises(OrchestratorError, match="option guard takes a number, got 'abc'"):
        registry.create("local", guard="abc")
    with pytest.raises(OrchestratorError, match="option number takes a whole number, got 'x'"):
        registry.create("local", number="x")
    with pytest.raises(OrchestratorError, match="option startup_timeout takes a number"):
        registry.create("local", startup_timeout="soon")
    assert registry.create("local", check="off").check is False
    assert registry.create("local").prestart is True
    with pytest.raises(OrchestratorError, match="measurer 'local': option prestart must be true or false, got 'later'"):
        registry.create("local", prestart="later")
    # made in Python, it names itself as the registry does
    with pytest.raises(OptionError,
                       match=r"^measurer 'local': unknown option 'repeats'; known: "):
        LocalMeasurer(repeats=3)
    with pytest.raises(OptionError,
                       match="^measurer 'local': option guard takes a number, got 'abc'$"):
        LocalMeasurer(guard="abc")


@pytest.mark.parametrize("options, message", [
    ({"number": 8.5}, "option number takes a whole number, got 8.5"),
    ({"repeat": 0}, "option repeat must be >= 1, got 0"),
    ({"min_repeat_ms": -1}, "option min_repeat_ms must be >= 0, got -1"),
    ({"build_timeout": 0}, "option build_timeout must be > 0.0, got 0.0"),
    ({"rtol": -1e-3}, "option rtol must be >= 0.0, got -0.001"),
    ({"build_workers": -2}, "option build_workers must be >= 0, got -2")])
def test_numeric_options_are_checked_not_truncated(options: dict, message: str) -> None:
    with pytest.raises(OptionError, match=f"^measurer 'local': {message}$"):
        LocalMeasurer(**options)
    ok = LocalMeasurer(number=2.0, build_workers=0, repeat="3")  # integral values convert
    assert (ok.number, ok.repeat, ok.build_workers) == (2, 3, cpu_cores())


def test_compare_tolerance_and_nan() -> None:
    ref = np.array([[100.0, 0.0], [1.0, -2.0]], dtype="float32")
    assert compare(ref + np.float32(0.05), ref, 1e-3, 1e-3) == ""  # atol scales to 0.1
    assert "max abs error 1" in compare(ref + np.float32(1.0), ref, 1e-3, 1e-3)
    out = ref.copy()
    out[1, 1] = np.nan
    assert "at (1, 1)" in compare(out, ref, 1e-3, 1e-3)


def test_one_line_skips_traceback_frames() -> None:
    text = "Traceback (most recent call last):\n  File \"x.py\", line 1\n" \
           "Error message: the loop is not parallel\n  File \"y.py\", line 2\n"
    assert one_line(text) == "the loop is not parallel"
    assert one_line("x" * 500, limit=20) == "x" * 17 + "..."
