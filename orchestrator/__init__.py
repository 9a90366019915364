"""Plugin-based tuning orchestrator for tensor programs on Apache TVM.

The public API: tasks, spaces and configs, results, the hook markers, and ``tune``.
TVM itself is imported only when something is built, measured or detected.
"""

from __future__ import annotations

from orchestrator.components import CostModel, Measurer, Pruner, SearchContext, Searcher, SpaceGenerator
from orchestrator.errors import OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, make_measurer, tune
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.run_info import RunInfo, TuneSummary
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob
from orchestrator.target import TargetInfo, detect_host
from orchestrator.task import Task

__version__ = "0.1.0"

__all__ = [
    "ChoiceKnob", "Config", "CostModel", "MeasureResult", "MeasureStatus", "Measurer",
    "OrchestratorError", "Pruner", "RunInfo", "SearchContext", "Searcher", "Space",
    "SpaceGenerator", "SplitKnob", "TargetInfo", "Task", "TuneOptions", "TuneSummary",
    "detect_host", "hookimpl", "make_measurer", "tune",
]
