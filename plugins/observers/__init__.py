"""Built-in observers: the log (the progress bar is registered by the CLI, which owns the terminal)."""

from __future__ import annotations

from plugins.observers.log import (  # noqa: F401  (hook implementations)
    orchestrator_results_measured,
    orchestrator_task_finished,
    orchestrator_task_started,
)
