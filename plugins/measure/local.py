"""The ``local`` measurer: parallel builds, then serial timed runs, on this machine."""

from __future__ import annotations

import inspect
import itertools
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.errors import OrchestratorError
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, cpu_cores
from plugins.measure.workerpool import STARTUP_TIMEOUT, Outcome, WorkerPool

NAME = "local"


class LocalMeasurer:
    """Builds in parallel worker processes, then times each kernel alone in an isolated runner.

    A batch is built completely before anything runs, so that compiling never disturbs
    a timing. Workers are started on the first ``measure``, reused by later ones and
    replaced after a crash or a timeout, which costs that one config only.
    """

    name = NAME

    def __init__(self, *, build_workers: int | None = None, build_timeout: float = 60.0,
                 run_timeout: float = 30.0, number: int = 1, repeat: int = 5,
                 min_repeat_ms: int = 50, rtol: float = 1e-3, atol: float = 1e-3,
                 seed: int = 0, check: bool = True,
                 startup_timeout: float = STARTUP_TIMEOUT, **unknown: Any) -> None:
        if unknown:
            known = [p for p in inspect.signature(LocalMeasurer).parameters if p != "unknown"]
            raise OrchestratorError(
                f"local measurer: unknown option(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(known)}")
        self.build_workers = int(build_workers) if build_workers else cpu_cores()
        self.build_timeout = float(build_timeout)
        self.run_timeout = float(run_timeout)
        self.number = int(number)
        self.repeat = int(repeat)
        self.min_repeat_ms = int(min_repeat_ms)
        self.rtol = float(rtol)
        self.atol = float(atol)
        self.seed = int(seed)
        # Options may arrive as command-line strings.
        self.check = check if isinstance(check, bool) else str(check).lower() not in (
            "0", "false", "no", "off")
        self.startup_timeout = float(startup_timeout)
        self._root: Path | None = None
        self._remove_root: weakref.finalize | None = None
        self._builders: WorkerPool | None = None
        self._runner: WorkerPool | None = None
        self._runner_threads = 0
        self._serial = itertools.count()

    # -- Measurer protocol -------------------------------------------------------------

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        """One result per config, in order; failures are statuses, never exceptions."""
        if not configs:
            return []
        builders, runner = self._pools(target)
        root = self._root
        assert root is not None
        out_dirs = [root / f"kernel-{next(self._serial)}" for _ in configs]
        common = {"schedule_fn": space.schedule_fn, "task": space.task.to_dict(),
                  "target": target.to_dict()}
        try:
            built = builders.map(
                [{**common, "config": c.to_dict(), "out_dir": str(d)}
                 for c, d in zip(configs, out_dirs, strict=True)],
                self.build_timeout)
            results: list[MeasureResult | None] = [
                None if b.reply and b.reply.get("status") == "ok" else _build_failure(c, b)
                for c, b in zip(configs, built, strict=True)]
            to_run = [i for i, r in enumerate(results) if r is None]
            ran = runner.map([self._run_request(space, built[i]) for i in to_run],
                             self.run_timeout)
            for i, outcome in zip(to_run, ran, strict=True):
                results[i] = _run_result(configs[i], built[i], outcome)
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
            self._runner = WorkerPool("run", 1, self._root,
                                      env={"TVM_NUM_THREADS": str(threads)},
                                      startup_timeout=self.startup_timeout)
            self._runner_threads = threads
        # Start the runner now: its import overlaps the first batch's builds.
        self._runner.start()
        return self._builders, self._runner

    def _run_request(self, space: Space, built: Outcome) -> dict[str, Any]:
        assert built.reply is not None
        return {"path": built.reply["path"], "task": space.task.to_dict(), "seed": self.seed,
                "check": self.check, "rtol": self.rtol, "atol": self.atol,
                "number": self.number, "repeat": self.repeat,
                "min_repeat_ms": self.min_repeat_ms}


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
