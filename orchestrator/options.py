"""Parsing of plugin options, which may arrive as command-line strings."""

from __future__ import annotations

from typing import Any

from orchestrator.errors import OrchestratorError

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def as_bool(owner: str, name: str, value: Any) -> bool:
    """An on/off option of ``owner`` (a plugin's name): a bool, or true/false, 1/0,
    yes/no, on/off as text; a one-line error for anything else."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise OrchestratorError(f"{owner}: option {name} must be true or false, got {value!r}")
