"""The ``local`` measurer: parallel builds, then serial timed runs, on this machine."""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.options import as_bool, option_names, owner_name, unknown_options, whole
from orchestrator.options import number as a_number  # "number" is also an option here
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, cpu_cores
from plugins.measure.worker import SENTINEL_ENV
from plugins.measure.workerpool import STARTUP_TIMEOUT, Outcome, WorkerPool

NAME = "local"
# A slowed spell on the shared 2-core EPYC VMs makes kernels about 0.6x as fast, far past
# 25%; the sentinel's own noise rarely passes it twice in a row (the guard's false alarms
# are among the "timings thrown away" of docs/results/measure-guard).
DEFAULT_GUARD = 0.25
log = logging.getLogger(__name__)


class LocalMeasurer:
    """Builds in parallel worker processes, then times each kernel alone in an isolated runner.

    A batch is built completely before anything runs, so that compiling never disturbs
    a timing. Workers are started when the task starts (``prepare``; ``prestart=false``
    leaves it to the first ``measure``), reused by every ``measure`` and replaced after a
    crash or a timeout, which costs that one config only. Started early, their TVM
    import (about 2 s each) overlaps the searcher's start instead of delaying the first
    batch.

    The contention guard (``plugins.measure.sentinel``) is on by default (``guard=0``
    turns it off): after each config the runner times a fixed sentinel kernel, and when
    that is more than ``guard`` (a fraction: 0.25 = 25%) slower than usual, twice in a
    row, the config was timed while something else slowed the machine. The runner then
    waits for the sentinel to be back to usual and times the config again, for at most
    ``guard_wait`` seconds per config. When a wait runs out, the machine is slow for
    longer than a spell and no config waits for the next 5 minutes (slowed timings are
    kept and counted). ``guard_counts`` holds how many timings were thrown away and how
    many slowed timings were kept. The runner builds its sentinel when it starts, after its
    TVM import, so that the first batch's builds and not its first timing wait for it
    (``early_sentinel=false``: at its first guarded timing, as before that change; for
    timing the difference, ``scripts/first_result.py --settings late,on``).
    """

    name = NAME

    def __init__(self, *, build_workers: int | None = None, build_timeout: float = 60.0,
                 run_timeout: float = 30.0, number: int = 1, repeat: int = 5,
                 min_repeat_ms: int = 50, rtol: float = 1e-3, atol: float = 1e-3,
                 seed: int = 0, check: bool = True, guard: float = DEFAULT_GUARD,
                 guard_wait: float = 20.0, prestart: bool = True, early_sentinel: bool = True,
                 startup_timeout: float = STARTUP_TIMEOUT, **unknown: Any) -> None:
        owner = owner_name("measurer", self.name)
        if unknown:
            raise unknown_options(owner, unknown, option_names(LocalMeasurer))
        workers = None if build_workers is None else whole(owner, "build_workers",
                                                            build_workers, 0)
        self.build_workers = workers or cpu_cores()  # 0, like None: one per core
        self.build_timeout = _seconds(owner, "build_timeout", build_timeout)
        self.run_timeout = _seconds(owner, "run_timeout", run_timeout)
        self.number = whole(owner, "number", number, 1)
        self.repeat = whole(owner, "repeat", repeat, 1)
        self.min_repeat_ms = whole(owner, "min_repeat_ms", min_repeat_ms, 0)
        self.rtol = a_number(owner, "rtol", rtol, 0.0)
        self.atol = a_number(owner, "atol", atol, 0.0)
        self.seed = whole(owner, "seed", seed, 0)
        self.check = as_bool(owner, "check", check)
        self.prestart = as_bool(owner, "prestart", prestart)
        self.early_sentinel = as_bool(owner, "early_sentinel", early_sentinel)
        self.guard = a_number(owner, "guard", guard, 0.0)  # 0 turns it off
        self.guard_wait = a_number(owner, "guard_wait", guard_wait, 0.0)
        self.guard_counts = {"retimed": 0, "slowed": 0}
        self._guard_warned = False
        self.startup_timeout = _seconds(owner, "startup_timeout", startup_timeout)
        self._root: Path | None = None
        self._remove_root: weakref.finalize | None = None
        self._builders: WorkerPool | None = None
        self._runner: WorkerPool | None = None
        self._runner_threads = 0
        self._serial = itertools.count()

    # -- Measurer protocol -------------------------------------------------------------

    @property
    def counts(self) -> dict[str, int]:
        """What the contention guard did, for the tune summary."""
        return {"guard_retimed": self.guard_counts["retimed"],
                "guard_slowed": self.guard_counts["slowed"]}

    def prepare(self, space: Space, target: TargetInfo) -> None:
        """Called when a task starts: start the workers (unless ``prestart`` is off)
        without waiting for them."""
        if self.prestart:
            builders, _ = self._pools(target)  # which starts the runner
            builders.start()

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        """One result per config, in order; failures are statuses, never exceptions."""
        if not configs:
            return []
        builders, runner = self._pools(target)
        root = self._root
        assert root is not None
        # A config given more than once (the loop's re-timings under ``--confirm``) is
        # built once and timed once per time given; its later results show no build.
        unique = list({c.key: c for c in configs}.values())
        out_dirs = [root / f"kernel-{next(self._serial)}" for _ in unique]
        common = {"schedule_fn": space.schedule_fn, "task": space.task.to_dict(),
                  "target": target.to_dict()}
        try:
            built_once = builders.map(
                [{**common, "config": c.to_dict(), "out_dir": str(d)}
                 for c, d in zip(unique, out_dirs, strict=True)],
                self.build_timeout)
            by_key = dict(zip((c.key for c in unique), built_once, strict=True))
            seen: set[str] = set()
            built = []
            for c in configs:
                b = by_key[c.key]
                built.append(b if c.key not in seen else dataclasses.replace(b, seconds=0.0))
                seen.add(c.key)
            results: list[MeasureResult | None] = [
                None if b.reply and b.reply.get("status") == "ok" else _build_failure(c, b)
                for c, b in zip(configs, built, strict=True)]
            to_run = [i for i, r in enumerate(results) if r is None]
            ran = runner.map([self._run_request(space, target, built[i]) for i in to_run],
                             self.run_timeout + (self.guard_wait if self.guard > 0 else 0.0))
            for i, outcome in zip(to_run, ran, strict=True):
                results[i] = _run_result(configs[i], built[i], outcome)
            self._count_guarded(ran)
        finally:
            for d in out_dirs:
                shutil.rmtree(d, ignore_errors=True)
        done = [r for r in results if r is not None]
        assert len(done) == len(configs)
        return done

    def close(self) -> None:
        """Stop every worker and delete the scratch directory (a later ``measure`` restarts)."""
        for pool in (self._builders, self._runner):
            if pool is not None:
                pool.close()
        self._builders = self._runner = None
        if self._remove_root is not None:
            self._remove_root()
        self._root = self._remove_root = None

    def __enter__(self) -> LocalMeasurer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------

    def worker_pids(self) -> dict[str, list[int]]:
        """The live workers' process ids, by role (for tests and diagnostics)."""
        return {"build": self._builders.pids if self._builders else [],
                "run": self._runner.pids if self._runner else []}

    def runner_threads(self) -> int | None:
        """The TVM thread count the runner reported, once it is ready."""
        ready = [w for w in self._runner.workers if w.ready] if self._runner else []
        return int(ready[0].hello["threads"]) if ready else None

    def _pools(self, target: TargetInfo) -> tuple[WorkerPool, WorkerPool]:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="orchestrator-measure-"))
            # Also removed at interpreter exit when close() is never called.
            self._remove_root = weakref.finalize(self, shutil.rmtree, self._root,
                                                 ignore_errors=True)
        threads = max(1, int(target.cores))
        if self._runner is not None and self._runner_threads != threads:
            self._runner.close()
            self._runner = None
        if self._builders is None:
            self._builders = WorkerPool("build", self.build_workers, self._root,
                                        startup_timeout=self.startup_timeout)
        if self._runner is None:
            # TVM reads TVM_NUM_THREADS when it is imported; on x86 it would otherwise
            # use half the cores, assuming hyper-threading.
            env = {"TVM_NUM_THREADS": str(threads)}
            if self.guard > 0 and self.early_sentinel:  # built while the first batch builds
                env[SENTINEL_ENV] = json.dumps(target.to_dict())
            self._runner = WorkerPool("run", 1, self._root, env=env,
                                      startup_timeout=self.startup_timeout)
            self._runner_threads = threads
        # Start the runner now: its import overlaps the first batch's builds.
        self._runner.start()
        return self._builders, self._runner

    def _run_request(self, space: Space, target: TargetInfo, built: Outcome) -> dict[str, Any]:
        assert built.reply is not None
        req = {"path": built.reply["path"], "task": space.task.to_dict(), "seed": self.seed,
               "check": self.check, "rtol": self.rtol, "atol": self.atol,
               "number": self.number, "repeat": self.repeat,
               "min_repeat_ms": self.min_repeat_ms}
        if self.guard > 0:
            req.update(guard=self.guard, guard_wait=self.guard_wait, target=target.to_dict())
        return req

    def _count_guarded(self, ran: Sequence[Outcome]) -> None:
        replies = [o.reply for o in ran if o.reply and o.reply.get("status") == "ok"]
        errors = {str(r["guard_error"]) for r in replies if r.get("guard_error")}
        if errors and not self._guard_warned:
            self._guard_warned = True
            log.warning("local measurer: no contention guard, its sentinel kernel could not "
                        "be built (%s); timing without it", "; ".join(sorted(errors)))
        retimed = sum(int(r.get("retimed", 0)) for r in replies)
        slowed = sum(1 for r in replies if r.get("slowed"))
        self.guard_counts["retimed"] += retimed
        self.guard_counts["slowed"] += slowed
        if retimed:
            log.info("local measurer: %d timing(s) of this batch were taken while the "
                     "machine was slowed (contention guard) and were taken again", retimed)
        if slowed:
            log.warning("local measurer: %d timing(s) kept although the machine was slowed "
                        "(contention guard: it stayed slow past guard_wait=%gs, and the guard "
                        "does not wait again for 5 minutes)", slowed, self.guard_wait)


def _seconds(owner: str, name: str, value: Any) -> float:
    """A time limit: a number of seconds above 0."""
    return a_number(owner, name, value, 0.0, low_open=True)


_BUILD_STATUS = {"invalid_config": MeasureStatus.INVALID_CONFIG,
                 "build_error": MeasureStatus.BUILD_ERROR}
_RUN_STATUS = {"wrong_answer": MeasureStatus.WRONG_ANSWER, "run_error": MeasureStatus.RUN_ERROR}


def _build_failure(config: Config, built: Outcome) -> MeasureResult:
    if built.reply is None:
        status = (MeasureStatus.BUILD_TIMEOUT if built.failure == "timeout"
                  else MeasureStatus.BUILD_ERROR)
        error = built.error
    else:
        status = _BUILD_STATUS.get(str(built.reply.get("status")), MeasureStatus.BUILD_ERROR)
        error = str(built.reply.get("error", ""))
    return MeasureResult(config, status, build_seconds=built.seconds, error=error,
                         measurer=NAME)


def _run_result(config: Config, built: Outcome, ran: Outcome) -> MeasureResult:
    common: dict[str, Any] = {"build_seconds": built.seconds, "run_seconds": ran.seconds,
                              "measurer": NAME}
    if ran.reply is None:
        status = (MeasureStatus.RUN_TIMEOUT if ran.failure == "timeout"
                  else MeasureStatus.RUN_ERROR)
        return MeasureResult(config, status, error=ran.error, **common)
    if ran.reply.get("status") == "ok":
        latencies = tuple(float(s) for s in ran.reply.get("latencies", ()))
        if latencies:
            return MeasureResult(config, MeasureStatus.OK, latencies=latencies, **common)
        return MeasureResult(config, MeasureStatus.RUN_ERROR, error="no latency samples",
                             **common)
    status = _RUN_STATUS.get(str(ran.reply.get("status")), MeasureStatus.RUN_ERROR)
    return MeasureResult(config, status, error=str(ran.reply.get("error", "")), **common)
