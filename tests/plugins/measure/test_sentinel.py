"""The contention guard: the sentinel kernel, the guarded timing rule, and the guard
through the run worker and the local measurer."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.result import MeasureStatus
from orchestrator.target import TargetInfo, detect_host
from plugins.measure import sentinel as sentinel_mod
from plugins.measure.local import LocalMeasurer
from plugins.measure.sentinel import POLL_SECONDS, Sentinel, guarded_timing
from plugins.measure.worker import RunHandler
from plugins.measure.workerpool import Outcome
from tests.plugins.measure import helpers

FAST, SLOW = 1.0, 1.7  # sentinel seconds: SLOW is the 0.6x slowdown seen on shared VMs


class Script:
    """A scripted sentinel and config, on a fake clock."""

    def __init__(self, sentinel_times: list[float]) -> None:
        self.sentinel_times = iter(sentinel_times)
        self.usual = FAST
        self.now = 0.0
        self.timings = 0

    def time_config(self) -> list[float]:
        self.timings += 1
        return [float(self.timings)]

    def time_sentinel(self) -> float:
        return next(self.sentinel_times)

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def run(self, wait: float = 10.0, guard: float = 0.25):
        return guarded_timing(self.time_config, self.time_sentinel, lambda: self.usual,
                              guard, wait, clock=lambda: self.now, sleep=self.sleep)


def test_a_fast_machine_times_each_config_once() -> None:
    s = Script([FAST])
    g = s.run()
    assert (g.latencies, g.retimed, g.slowed) == ([1.0], 0, False)


def test_one_slow_sentinel_timing_is_not_enough() -> None:
    s = Script([SLOW, FAST])  # a blip: the second look is fast
    g = s.run()
    assert (g.latencies, g.retimed, g.slowed) == ([1.0], 0, False)


def test_a_slowed_config_is_timed_again_once_the_machine_is_fast() -> None:
    # after the config: slow twice; then polls: slow twice, slow then fast (a blip,
    # so fast enough); the second timing is followed by a fast sentinel.
    s = Script([SLOW, SLOW, SLOW, SLOW, SLOW, FAST, FAST])
    g = s.run()
    assert (g.latencies, g.retimed, g.slowed) == ([2.0], 1, False)
    assert s.now == pytest.approx(2 * POLL_SECONDS)


def test_a_machine_slow_for_longer_than_the_wait_keeps_the_slowed_timing() -> None:
    s = Script([SLOW] * 100)
    g = s.run(wait=1.0)
    assert (g.latencies, g.retimed, g.slowed) == ([1.0], 0, True)
    assert s.now == pytest.approx(1.0)


def test_a_retiming_that_is_slowed_again_after_the_wait_is_kept() -> None:
    s = Script([SLOW, SLOW, FAST, SLOW, SLOW] + [SLOW] * 100)
    g = s.run(wait=2 * POLL_SECONDS)
    assert (g.latencies, g.retimed, g.slowed) == ([2.0], 1, True)


@pytest.fixture(scope="module")
def target() -> TargetInfo:
    return detect_host()


def test_the_sentinel_is_a_correct_parallel_matmul(target: TargetInfo) -> None:
    import tvm

    handler = RunHandler()
    s = Sentinel(tvm, np, handler.dev, target.tvm_target())
    s.module["main"](*s.args)
    a, b, c = (x.numpy() for x in s.args)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    assert len(s.recent) == 5  # timed when made: it has a usual time from the start
    now = s.time()
    assert now > 0 and s.recent[-1] == now and len(s.recent) == 6
    assert min(s.recent) <= s.usual() <= max(s.recent)
    assert sentinel_mod.FLOPS / s.usual() > 1e9  # a vectorised kernel, not a naive loop
    s.recent.clear()
    s.recent.extend([4.0, 1.0, 3.0, 2.0, 8.0, 7.0, 6.0, 5.0])
    assert s.usual() == 3.0  # the lower quartile: a slow spell does not become usual


def _run_request(measurer: LocalMeasurer, target: TargetInfo, tmp_path) -> dict:
    from plugins.measure.worker import BuildHandler

    space = helpers.space()
    built = BuildHandler().handle({"schedule_fn": space.schedule_fn,
                                   "task": space.task.to_dict(), "target": target.to_dict(),
                                   "config": helpers.config("ok").to_dict(),
                                   "out_dir": str(tmp_path)})
    assert built["status"] == "ok", built
    return measurer._run_request(space, target, Outcome(reply=built))


def test_the_runner_times_again_when_its_sentinel_says_slowed(
        target: TargetInfo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The request the measurer sends carries the guard; the runner's reply says how
    many timings were thrown away."""
    monkeypatch.setattr(sentinel_mod, "POLL_SECONDS", 0.0)
    m = LocalMeasurer(guard=0.25, guard_wait=5, repeat=2, min_repeat_ms=1)
    req = _run_request(m, target, tmp_path)
    assert req["guard"] == 0.25 and req["guard_wait"] == 5 and req["target"] == target.to_dict()
    handler = RunHandler()
    fake = Script([SLOW, SLOW, FAST, FAST])
    s, _ = handler._sentinel(req["target"])
    monkeypatch.setattr(s, "time", fake.time_sentinel)
    monkeypatch.setattr(s, "usual", lambda: FAST)
    reply = handler.handle(req)
    assert reply["status"] == "ok" and len(reply["latencies"]) == 2
    assert (reply["retimed"], reply["slowed"]) == (1, False)
    off = handler.handle({**req, "guard": 0})
    assert off["status"] == "ok" and "retimed" not in off


def test_after_a_wait_ran_out_the_runner_stops_waiting_for_a_while(
        target: TargetInfo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine slow for longer than guard_wait: the first config waits it out, the next
    ones keep their slowed timing at once instead of waiting guard_wait each."""
    import plugins.measure.worker as worker

    polls: list[float] = []
    monkeypatch.setattr(sentinel_mod, "POLL_SECONDS", 0.01)
    m = LocalMeasurer(guard=0.25, guard_wait=0.05, repeat=2, min_repeat_ms=1)
    req = _run_request(m, target, tmp_path)
    handler = RunHandler()
    s, _ = handler._sentinel(req["target"])
    monkeypatch.setattr(s, "time", lambda: polls.append(SLOW) or SLOW)
    monkeypatch.setattr(s, "usual", lambda: FAST)
    first = handler.handle(req)
    assert first["status"] == "ok" and first["slowed"] and first["retimed"] == 0
    waited = len(polls)
    assert waited > 2  # it polled the sentinel while waiting
    second = handler.handle(req)
    assert second["slowed"] and second["retimed"] == 0 and len(polls) == waited + 2
    monkeypatch.setattr(handler, "_no_wait_until", 0.0)  # the pause is over
    assert handler.handle(req)["slowed"] and len(polls) > waited + 4
    assert worker.NO_WAIT_SECONDS >= 60


def test_without_a_sentinel_configs_are_timed_unguarded_and_the_measurer_says_so_once(
        target: TargetInfo, tmp_path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    import plugins.measure.worker as worker

    def cannot_build(*args: object) -> None:
        raise RuntimeError("LLVM cannot target this CPU")

    monkeypatch.setattr(worker, "Sentinel", cannot_build)
    m = LocalMeasurer(guard=0.25, repeat=2, min_repeat_ms=1)
    req = _run_request(m, target, tmp_path)
    handler = RunHandler()
    reply = handler.handle(req)
    assert reply["status"] == "ok" and len(reply["latencies"]) == 2 and "retimed" not in reply
    assert reply["guard_error"] == "RuntimeError: LLVM cannot target this CPU"
    with caplog.at_level("WARNING", logger="plugins.measure.local"):
        m._count_guarded([Outcome(reply=reply)])
        m._count_guarded([Outcome(reply=handler.handle(req))])
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and "could not be built (RuntimeError: LLVM cannot" in warnings[0]
    assert m.guard_counts == {"retimed": 0, "slowed": 0}


def test_a_runner_given_a_target_builds_its_sentinel_before_it_is_ready(
        target: TargetInfo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The measurer names the target in the runner's environment; the runner builds that
    sentinel when it starts, and the first guarded request uses it instead of building."""
    import plugins.measure.worker as worker

    monkeypatch.setenv(worker.SENTINEL_ENV, json.dumps(target.to_dict()))
    handler = RunHandler()
    monkeypatch.setattr(worker, "Sentinel", _never_built)  # a second build would fail
    built, why = handler._sentinel(target.to_dict())
    assert isinstance(built, Sentinel) and why == "" and len(built.recent) == 5
    m = LocalMeasurer(guard=0.25, repeat=2, min_repeat_ms=1)
    # the early sentinel is the one asked; scripted fast, so a busy CI box cannot retime
    looks: list[float] = []
    monkeypatch.setattr(built, "time", lambda: looks.append(FAST) or FAST)
    monkeypatch.setattr(built, "usual", lambda: FAST)
    reply = handler.handle(_run_request(m, target, tmp_path))
    assert reply["status"] == "ok" and reply["retimed"] == 0 and "guard_error" not in reply
    assert looks and handler._sentinel(target.to_dict())[0] is built


def _never_built(*args: object) -> None:
    raise AssertionError("the sentinel was built again")


@pytest.mark.parametrize("value", ["", "not json", "[1, 2]"])
def test_a_runner_without_a_usable_sentinel_target_starts_as_before(
        monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    import plugins.measure.worker as worker

    monkeypatch.setenv(worker.SENTINEL_ENV, value)
    monkeypatch.setattr(worker, "Sentinel", _never_built)
    assert RunHandler()._sentinels == {}  # built at the first guarded request, as before


def test_a_sentinel_that_cannot_be_built_early_is_reported_with_the_first_timing(
        target: TargetInfo, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import plugins.measure.worker as worker

    def cannot_build(*args: object) -> None:
        raise RuntimeError("LLVM cannot target this CPU")

    monkeypatch.setattr(worker, "Sentinel", cannot_build)
    monkeypatch.setenv(worker.SENTINEL_ENV, json.dumps(target.to_dict()))
    handler = RunHandler()  # starts all the same
    m = LocalMeasurer(guard=0.25, repeat=2, min_repeat_ms=1)
    reply = handler.handle(_run_request(m, target, tmp_path))
    assert reply["status"] == "ok" and "retimed" not in reply
    assert reply["guard_error"] == "RuntimeError: LLVM cannot target this CPU"


@pytest.mark.parametrize(("guard", "early"), [(0.25, True), (0.0, True), (0.25, False)])
def test_the_measurer_names_the_sentinel_target_to_its_runner_only_when_guarding_early(
        target: TargetInfo, monkeypatch: pytest.MonkeyPatch, guard: float, early: bool) -> None:
    import plugins.measure.worker as worker
    from plugins.measure.workerpool import WorkerPool

    monkeypatch.setattr(WorkerPool, "start", lambda self, count=None: None)  # no processes
    m = LocalMeasurer(guard=guard, early_sentinel=str(early).lower())
    try:
        assert m.early_sentinel is early
        builders, runner = m._pools(target)
        assert worker.SENTINEL_ENV not in builders.env
        named = runner.env.get(worker.SENTINEL_ENV)
        want = target.to_dict() if guard and early else None
        assert (json.loads(named) if named else None) == want
    finally:
        m.close()


def test_the_measurer_counts_what_the_runner_reports(caplog: pytest.LogCaptureFixture) -> None:
    m = LocalMeasurer(guard=0.25)
    with caplog.at_level("INFO", logger="plugins.measure.local"):
        m._count_guarded([Outcome(reply={"status": "ok", "retimed": 2, "slowed": False}),
                          Outcome(reply={"status": "ok", "retimed": 0, "slowed": True}),
                          Outcome(reply={"status": "run_error", "retimed": 5}),
                          Outcome(reply=None, failure="timeout")])
    assert m.guard_counts == {"retimed": 2, "slowed": 1}
    assert m.counts == {"guard_retimed": 2, "guard_slowed": 1}  # for the tune summary
    said = {r.levelname: r.getMessage() for r in caplog.records}
    assert "2 timing(s) of this batch were taken while the machine was slowed" in said["INFO"]
    assert said["WARNING"].startswith("local measurer: 1 timing(s) kept although the machine "
                                      "was slowed")


@pytest.fixture()
def guarded() -> Iterator[LocalMeasurer]:
    m = LocalMeasurer(build_workers=2, repeat=2, min_repeat_ms=1, guard=0.5, guard_wait=2)
    yield m
    m.close()


def test_a_guarded_measurer_times_real_kernels(guarded: LocalMeasurer,
                                               target: TargetInfo) -> None:
    configs = [helpers.config(v) for v in ("ok", "split", "wrong")]
    results = guarded.measure(helpers.space(), target, configs)
    assert [r.status for r in results] == [MeasureStatus.OK, MeasureStatus.OK,
                                            MeasureStatus.WRONG_ANSWER]
    assert all(len(r.latencies) == 2 for r in results[:2])
    counts = guarded.guard_counts
    assert set(counts) == {"retimed", "slowed"} and all(v >= 0 for v in counts.values())


@pytest.mark.parametrize("options, message", [
    ({"guard": -0.1}, "option guard must be >= 0.0, got -0.1"),
    ({"guard_wait": -1}, "option guard_wait must be >= 0.0, got -1.0"),
    ({"guard": float("nan")}, "option guard must be >= 0.0, got nan")])
def test_bad_guard_options_are_one_line_errors(options: dict, message: str) -> None:
    with pytest.raises(OrchestratorError, match=f"^measurer 'local': {message}$"):
        LocalMeasurer(**options)
