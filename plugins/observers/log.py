"""Logs task start, each batch and the end through the ``orchestrator`` logger."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from orchestrator.hookspecs import hookimpl
from orchestrator.result import MeasureResult
from orchestrator.run_info import RunInfo, TuneSummary

log = logging.getLogger("orchestrator")


@hookimpl
def orchestrator_task_started(run: RunInfo) -> None:
    log.info("run %d: %s, space of %d configs, searcher %s, measurer %s%s", run.run_id,
             run.task.label(), run.space.size, run.searcher, run.measurer,
             f", resuming after {run.resumed_trials} trials" if run.resumed_trials else "")


@hookimpl
def orchestrator_results_measured(run: RunInfo, results: Sequence[MeasureResult],
                                  trials_done: int, best: MeasureResult | None) -> None:
    for r in results:
        if not r.ok:
            log.debug("run %d: %s %s", run.run_id, r.status.value, r.error[:200])
    log.debug("run %d: %d/%d trials, best %s", run.run_id, trials_done, run.max_trials,
              f"{best.latency * 1e3:.4f} ms" if best else "-")


@hookimpl
def orchestrator_task_finished(run: RunInfo, summary: TuneSummary) -> None:
    log.info("run %d finished (%s): %d trials, best %.1f GFLOPS", run.run_id,
             summary.stop_reason, summary.trials, summary.best_gflops)
