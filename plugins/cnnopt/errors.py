"""The error every CNNOpt component raises on purpose."""

from __future__ import annotations

from orchestrator.errors import OrchestratorError


class CnnoptError(OrchestratorError):
    """A CNNOpt space, pruner, model or training problem (one line, says what to do)."""
