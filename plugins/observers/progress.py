"""A rich progress bar on stderr: trials, best GFLOPS so far, errors."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestrator.hookspecs import hookimpl
from orchestrator.result import MeasureResult
from orchestrator.run_info import RunInfo, TuneSummary


class ProgressBar:
    """Observer plugin: one progress bar per task (quiet when ``enabled`` is False)."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._progress: Progress | None = None
        self._task_id = None
        self._errors = 0

    @hookimpl
    def orchestrator_task_started(self, run: RunInfo) -> None:
        if not self.enabled:
            return
        self._errors = 0
        self._progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("best {task.fields[best]}"), TextColumn("errors {task.fields[errors]}"),
            TimeElapsedColumn(), console=Console(file=sys.stderr), transient=False)
        self._progress.start()
        label = run.task.name or run.task.op
        self._task_id = self._progress.add_task(
            label, total=run.max_trials, completed=run.resumed_trials, best="-", errors=0)

    @hookimpl
    def orchestrator_results_measured(self, run: RunInfo, results: Sequence[MeasureResult],
                                      trials_done: int, best: MeasureResult | None) -> None:
        if self._progress is None:
            return
        self._errors += sum(1 for r in results if not r.ok)
        best_text = f"{best.gflops(run.task.flops):.1f} GFLOPS" if best else "-"
        self._progress.update(self._task_id, completed=trials_done, best=best_text,
                              errors=self._errors)

    @hookimpl
    def orchestrator_task_finished(self, run: RunInfo, summary: TuneSummary) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
