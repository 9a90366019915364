"""The Table III strategies as ``planner`` components (hook ``orchestrator_add_planners``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plugins.dlfusion.layers import Network
from plugins.dlfusion.plan import Plan


@dataclass(frozen=True)
class StrategyPlanner:
    """One named strategy of plugins.dlfusion.strategies, as a planner component."""

    strategy: str

    def plan(self, network: Network, accelerator: Any) -> Plan:
        """The strategy's plan for ``network`` on ``accelerator``."""
        from plugins.dlfusion.strategies import make_plan

        return make_plan(self.strategy, network, accelerator)
