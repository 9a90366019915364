"""A measurer whose workers have already served an earlier task, as ``orchestrator tune``
keeps them for every workload of a command but the first: its build and run workers
have imported TVM and the runner has built its contention-guard sentinel.

Used where a script compares searchers on one task at a time but wants the seconds a
multi-workload command would see (``first_result.py``'s ``kept``, ``gga_turns.py
--keep-workers``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.loop import TuneOptions, make_measurer, tune
from orchestrator.manager import Plugins
from orchestrator.target import TargetInfo
from orchestrator.task import Task

WARM_UP = {"M": 16, "K": 32, "N": 16}  # the earlier task: a tiny dense


def warm_measurer(scratch: Path, *, options: TuneOptions | None = None,
                  plugins: Plugins | None = None, target: TargetInfo | None = None,
                  name: str = "warm_up") -> Any:
    """A measurer made with ``options``' measurer and measurer options, after two trials
    of a tiny dense task on ``target`` (kept in ``scratch/<name>.db``, not in any history
    a comparison reads). The caller closes it."""
    measurer = make_measurer(options, plugins)
    try:
        tune(Task.create("dense", WARM_UP, name=name), target=target,
             db=str(scratch / f"{name}.db"), plugins=plugins, searcher="random", trials=2,
             batch_size=2, shared_measurer=measurer)
    except BaseException:
        measurer.close()
        raise
    return measurer
