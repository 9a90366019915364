"""Measurement results: latency samples or a typed failure, never an exception."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from enum import Enum

from orchestrator.space import Config


class MeasureStatus(str, Enum):
    OK = "ok"
    INVALID_CONFIG = "invalid_config"
    BUILD_ERROR = "build_error"
    BUILD_TIMEOUT = "build_timeout"
    RUN_ERROR = "run_error"
    RUN_TIMEOUT = "run_timeout"
    WRONG_ANSWER = "wrong_answer"


@dataclass(frozen=True)
class MeasureResult:
    """One config's measurement. ``latencies`` are seconds per call, one per repeat."""

    config: Config
    status: MeasureStatus
    latencies: tuple[float, ...] = ()
    build_seconds: float = 0.0
    run_seconds: float = 0.0
    error: str = ""
    measurer: str = ""

    @property
    def ok(self) -> bool:
        return self.status is MeasureStatus.OK and bool(self.latencies)

    @property
    def latency(self) -> float:
        """Median latency in seconds; +inf for a failed measurement."""
        return statistics.median(self.latencies) if self.ok else float("inf")

    def gflops(self, flops: int) -> float:
        return flops / self.latency / 1e9 if self.ok else 0.0
