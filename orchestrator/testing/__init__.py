"""Helpers for testing plugins without hardware: a replay measurer, a synthetic toy
space, conformance test classes for searchers and cost models, and an observer that
interrupts a run (to test resuming)."""

from __future__ import annotations

from orchestrator.testing.conformance import CostModelConformance, SearcherConformance
from orchestrator.testing.interrupt import InterruptAfter
from orchestrator.testing.replay import NOT_RECORDED, ReplayMeasurer
from orchestrator.testing.toy import TOY_TASK, toy_latency, toy_results, toy_space

__all__ = ["NOT_RECORDED", "TOY_TASK", "CostModelConformance", "InterruptAfter", "ReplayMeasurer",
           "SearcherConformance", "toy_latency", "toy_results", "toy_space"]
