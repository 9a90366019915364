"""Frozen plan and result records: what a planner proposes and what a measurer answers."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.errors import OrchestratorError


class PlanError(OrchestratorError, ValueError):
    """A plan that does not tile the layer list or asks for more cores than exist."""


@dataclass(frozen=True)
class Block:
    """Layers ``[start, stop)`` fused into one operator that runs on ``mp`` cores."""

    start: int
    stop: int
    mp: int

    def __post_init__(self) -> None:
        if self.stop <= self.start or self.start < 0:
            raise PlanError(f"empty or negative block [{self.start}, {self.stop})")
        if self.mp < 1:
            raise PlanError(f"block [{self.start}, {self.stop}) has MP {self.mp} < 1")

    @property
    def size(self) -> int:
        return self.stop - self.start

    def to_dict(self) -> dict[str, int]:
        return {"start": self.start, "stop": self.stop, "mp": self.mp}


@dataclass(frozen=True)
class Plan:
    """A fusion partition of a network's layer list with one MP per block."""

    strategy: str
    model: str
    blocks: tuple[Block, ...]

    def validate(self, n_layers: int, cores: int) -> None:
        """Blocks must tile ``[0, n_layers)`` in order with 1 <= MP <= cores."""
        pos = 0
        for b in self.blocks:
            if b.start != pos:
                raise PlanError(f"plan {self.strategy!r}: block [{b.start}, {b.stop}) does not "
                                 f"start where the previous one ended ({pos})")
            if b.mp > cores:
                raise PlanError(f"plan {self.strategy!r}: MP {b.mp} exceeds {cores} cores")
            pos = b.stop
        if pos != n_layers:
            raise PlanError(f"plan {self.strategy!r} covers {pos} of {n_layers} layers")

    def to_dict(self) -> dict[str, object]:
        return {"strategy": self.strategy, "model": self.model,
                "blocks": [b.to_dict() for b in self.blocks]}


@dataclass(frozen=True)
class BlockResult:
    """Predicted cost of one block; ``mode`` is how its work is split across cores."""

    block: Block
    latency_s: float
    compute_s: float
    dispatch_s: float
    memory_s: float
    ops: int
    ops_per_core: float
    efficiency: float
    redundancy: float
    offchip_bytes: float
    mode: str

    def to_dict(self) -> dict[str, object]:
        return {**self.block.to_dict(), "latency_s": self.latency_s,
                "compute_s": self.compute_s, "dispatch_s": self.dispatch_s,
                "memory_s": self.memory_s, "ops": self.ops,
                "ops_per_core": self.ops_per_core, "efficiency": self.efficiency,
                "redundancy": self.redundancy, "offchip_bytes": self.offchip_bytes,
                "mode": self.mode}


@dataclass(frozen=True)
class PlanResult:
    """A measured (or, for the simulated accelerator, predicted) plan."""

    plan: Plan
    accelerator: str
    simulated: bool
    blocks: tuple[BlockResult, ...]
    latency_s: float

    @property
    def fps(self) -> float:
        return 1.0 / self.latency_s if self.latency_s > 0 else float("inf")

    def to_dict(self) -> dict[str, object]:
        return {"plan": self.plan.to_dict(), "accelerator": self.accelerator,
                "simulated": self.simulated, "latency_s": self.latency_s, "fps": self.fps,
                "blocks": [b.to_dict() for b in self.blocks]}
