"""Helpers for testing plugins without hardware: a replay measurer, a synthetic toy
space, and conformance test classes for searchers and cost models."""

from __future__ import annotations

from orchestrator.testing.conformance import CostModelConformance, SearcherConformance
from orchestrator.testing.replay import NOT_RECORDED, ReplayMeasurer
from orchestrator.testing.toy import TOY_TASK, toy_latency, toy_results, toy_space

__all__ = ["NOT_RECORDED", "TOY_TASK", "CostModelConformance", "ReplayMeasurer",
           "SearcherConformance", "toy_latency", "toy_results", "toy_space"]
