"""Worker subprocess entry point: ``python -m plugins.measure.worker build|run``.

A build worker imports a space's schedule function by name, compiles the module it
returns and exports a shared library. A run worker loads such a library, checks its
output against the NumPy reference and times it. Requests and replies are JSON lines
(see ``workerpool.py``); the reply stream is a private copy of the original stdout,
and fd 1 is pointed at stderr so that prints from TVM or LLVM cannot corrupt it.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections import OrderedDict
from typing import IO, Any

from orchestrator.kernels import ENTRY, as_module, call, compare, schedule_function
from plugins.measure.sentinel import Sentinel, guarded_timing
from plugins.measure.workerpool import PARENT_ENV, describe_exception

KERNEL_FILE = "kernel.so"
# The target (JSON) whose contention-guard sentinel a run worker builds before it says it
# is ready, so that the first timing does not wait for that compile.
SENTINEL_ENV = "ORCHESTRATOR_SENTINEL_TARGET"
NO_WAIT_SECONDS = 300.0  # the contention guard's pause after a wait ran out
_PR_SET_PDEATHSIG = 1
_CACHED_TASKS = 4


def _claim_reply_stream() -> IO[str]:
    fd = os.dup(1)  # not inheritable: compilers the worker spawns do not get it
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def _die_with_parent() -> None:
    """Exit when the parent dies, even while busy in a hanging kernel (Linux only)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    parent = os.environ.get(PARENT_ENV)
    if parent and os.getppid() != int(parent):  # the parent died before prctl
        os._exit(0)


class BuildHandler:
    """Schedule, compile and export one config per request."""

    def __init__(self) -> None:
        import tvm

        self.tvm = tvm

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        """Schedule the requested config, then :meth:`build` it; a failure is a reply."""
        from orchestrator.errors import InvalidConfigError
        from orchestrator.space import Config
        from orchestrator.target import TargetInfo
        from orchestrator.task import Task

        try:
            fn = schedule_function(req["schedule_fn"])
        except Exception as exc:
            return _fail("build_error", f"cannot import schedule function "
                                        f"{req['schedule_fn']!r}: {describe_exception(exc)}")
        task = Task.from_dict(req["task"])
        target = TargetInfo.from_dict(req["target"])
        config = Config.of(req["config"])
        try:
            mod = as_module(fn(task, config, target))
        except InvalidConfigError as exc:
            return _fail("invalid_config", describe_exception(exc))
        except Exception as exc:
            return _fail("build_error", describe_exception(exc))
        try:
            return self.build(mod, target, req)
        except Exception as exc:
            return _fail("build_error", describe_exception(exc))

    def build(self, mod: Any, target: Any, req: dict[str, Any]) -> dict[str, Any]:
        """Compile the scheduled module into ``req["out_dir"]``; returns the reply."""
        executable = self.tvm.compile(mod, target=target.tvm_target())
        os.makedirs(req["out_dir"], exist_ok=True)
        path = os.path.join(req["out_dir"], KERNEL_FILE)
        executable.export_library(path)
        return {"status": "ok", "path": path}


class RunHandler:
    """Load one library per request, check it, time it. TVM_NUM_THREADS is set by the parent."""

    def __init__(self) -> None:
        import numpy as np
        import tvm

        self.np = np
        self.tvm = tvm
        self.dev = tvm.cpu()
        self.threads = int(tvm.runtime.num_threads())
        # task key + seed -> (inputs, reference): computed once per task.
        self._data: OrderedDict[str, tuple[list[Any], Any]] = OrderedDict()
        # target JSON -> its compiled sentinel, or None and why it could not be made
        self._sentinels: dict[str, tuple[Sentinel | None, str]] = {}
        self._no_wait_until = 0.0
        self._build_sentinel_early()

    def _build_sentinel_early(self) -> None:
        """Build the sentinel for the target in ``SENTINEL_ENV`` now, while the build
        workers work; a failure is kept and reported with the first guarded timing, as
        when it is built there."""
        try:
            target = json.loads(os.environ.get(SENTINEL_ENV) or "null")
        except ValueError:
            return
        if isinstance(target, dict):
            self._sentinel(target)

    def _task_data(self, task: Any, seed: int) -> tuple[list[Any], Any]:
        key = f"{task.key}#{seed}"
        if key not in self._data:
            inputs = task.operator.random_inputs(task.params, seed)
            reference = self.np.asarray(task.operator.reference(inputs, task.params),
                                        dtype="float32")
            self._data[key] = (inputs, reference)
            while len(self._data) > _CACHED_TASKS:
                self._data.popitem(last=False)
        self._data.move_to_end(key)
        return self._data[key]

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        from orchestrator.task import Task

        tvm = self.tvm
        task = Task.from_dict(req["task"])
        inputs, reference = self._task_data(task, int(req.get("seed", 0)))
        try:
            module = tvm.runtime.load_module(req["path"])
            args = call(module, inputs, reference.shape, self.dev)
        except Exception as exc:
            return _fail("run_error", describe_exception(exc))
        if req.get("check", True):
            mismatch = compare(args[-1].numpy(), reference, float(req.get("rtol", 1e-3)),
                               float(req.get("atol", 1e-3)))
            if mismatch:
                return _fail("wrong_answer", mismatch)
        try:
            timer = module.time_evaluator(
                ENTRY, self.dev, number=int(req.get("number", 1)),
                repeat=int(req.get("repeat", 5)), min_repeat_ms=int(req.get("min_repeat_ms", 50)))

            def time_config() -> list[float]:
                return [float(s) for s in timer(*args).results]

            guard = float(req.get("guard", 0.0))
            sentinel, why = self._sentinel(req["target"]) if guard > 0 else (None, "")
            if sentinel is None:
                reply = {"status": "ok", "latencies": time_config()}
                return {**reply, "guard_error": why} if why else reply
            # After a wait ran out the machine is slow for longer than a spell: waiting
            # for every config would cost guard_wait each, so for a while none waits.
            patient = time.monotonic() >= self._no_wait_until
            timed = guarded_timing(time_config, sentinel.time, sentinel.usual, guard,
                                   float(req.get("guard_wait", 0.0)) if patient else 0.0)
            if timed.slowed:
                self._no_wait_until = time.monotonic() + NO_WAIT_SECONDS
        except Exception as exc:
            return _fail("run_error", describe_exception(exc))
        return {"status": "ok", "latencies": timed.latencies, "retimed": timed.retimed,
                "slowed": timed.slowed}

    def _sentinel(self, target: dict[str, Any]) -> tuple[Sentinel | None, str]:
        """The contention guard's sentinel for ``target``, compiled on first use, or None
        and why it could not be made (then configs are timed unguarded)."""
        from orchestrator.target import TargetInfo

        key = json.dumps(target, sort_keys=True)
        if key not in self._sentinels:
            try:
                self._sentinels[key] = (Sentinel(self.tvm, self.np, self.dev,
                                                 TargetInfo.from_dict(target).tvm_target()), "")
            except Exception as exc:
                self._sentinels[key] = (None, describe_exception(exc))
        return self._sentinels[key]


def _fail(status: str, error: str) -> dict[str, Any]:
    return {"status": status, "error": error}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    role = args[0] if args else ""
    if role not in ("build", "run"):
        print(f"usage: python -m {__spec__.name if __spec__ else 'worker'} build|run",
              file=sys.stderr)
        return 2
    replies = _claim_reply_stream()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    start = time.monotonic()
    handler: BuildHandler | RunHandler = BuildHandler() if role == "build" else RunHandler()
    hello: dict[str, Any] = {"ready": True, "pid": os.getpid(),
                             "seconds": time.monotonic() - start}
    if isinstance(handler, RunHandler):
        hello["threads"] = handler.threads
    replies.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        try:
            reply = handler.handle(req)
        except Exception as exc:  # a malformed request; never let it end the worker
            reply = _fail("build_error" if role == "build" else "run_error",
                          describe_exception(exc))
        reply["id"] = req.get("id")
        replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
