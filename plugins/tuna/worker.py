"""Analysis worker subprocess: ``python -m plugins.tuna.worker``.

Speaks the JSON-line protocol of ``plugins.measure.workerpool`` (ready line, one reply
per request echoing its id, replies on a private copy of stdout). A request names the
schedule function, task, target and config, and optionally ``programs``, the directory
of a :class:`~plugins.tuna.programs.ProgramCache` shared by the workers, and
``opt_level``, LLVM's optimization level for the analysis; the reply
carries the features or a failure status (``invalid_config`` or ``build_error``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugins.measure.workerpool import Worker, WorkerPool, describe_exception

MODULE = "plugins.tuna.worker"


def handle(req: Mapping[str, Any]) -> dict[str, Any]:
    """Analyze one config; never raises."""
    from orchestrator.errors import InvalidConfigError
    from orchestrator.space import Config
    from orchestrator.target import TargetInfo
    from orchestrator.task import Task
    from plugins.tuna.features import analyze
    from plugins.tuna.programs import ProgramCache

    try:
        task = Task.from_dict(req["task"])
        target = TargetInfo.from_dict(req["target"])
        config = Config.of(req["config"])
        programs = ProgramCache(req["programs"]) if req.get("programs") else None
        level = req.get("opt_level")
        features = analyze(req["schedule_fn"], task, config, target, programs,
                           None if level is None else int(level))
    except InvalidConfigError as exc:
        return {"status": "invalid_config", "error": describe_exception(exc)}
    except Exception as exc:  # anything TVM or a template raises is this config's failure
        return {"status": "build_error", "error": describe_exception(exc)}
    return {"status": "ok", "features": features.to_dict()}


class AnalysisWorker(Worker):
    """A :class:`Worker` that runs this module instead of the measurement worker."""

    def __init__(self, role: str, env: Mapping[str, str], log_path: Path) -> None:
        self.role = role
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=log, env=dict(env), start_new_session=True, bufsize=0)
        self.started = time.monotonic()
        self.ready = False
        self.hello: dict[str, Any] = {}
        self._buf = b""


class AnalysisPool(WorkerPool):
    """A :class:`WorkerPool` of analysis workers."""

    worker_class = AnalysisWorker


def main() -> int:
    # Reuse the measurement worker's process setup: replies on a private stdout copy,
    # exit with the parent, Ctrl-C left to the parent.
    from plugins.measure.worker import _claim_reply_stream, _die_with_parent

    replies = _claim_reply_stream()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    start = time.monotonic()
    import tvm  # noqa: F401  (paid once, before the ready line)

    replies.write(json.dumps({"ready": True, "pid": os.getpid(),
                              "seconds": time.monotonic() - start}) + "\n")
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        reply = handle(req)
        reply["id"] = req.get("id")
        replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
