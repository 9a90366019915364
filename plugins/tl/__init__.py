"""Model-guided searchers and the XGBoost cost model: ``tl`` (transfer learning from
filtered history), ``xgb`` (AutoTVM's XGBoost tuner without history) and the ``xgb``
cost model. XGBoost is imported on the first fit, not when plugins load."""

from __future__ import annotations

from orchestrator.hookspecs import hookimpl
from orchestrator.registry import ComponentRegistry
from plugins.tl.model import XGBCostModel
from plugins.tl.searcher import TransferSearcher, XGBSearcher


@hookimpl
def orchestrator_add_searchers(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers ``tl`` and ``xgb``."""
    registry.add("tl", TransferSearcher,
                 description="XGBoost rank model trained on importance-filtered history (Mu et al.)")
    registry.add("xgb", XGBSearcher,
                 description="AutoTVM's XGBoost tuner: rank model + simulated annealing, no history")


@hookimpl
def orchestrator_add_cost_models(registry: ComponentRegistry) -> None:
    """Called once at start-up; registers the ``xgb`` cost model."""
    registry.add("xgb", XGBCostModel, description="XGBoost with a ranking loss on knob features")
