"""Parsing of searcher options, which may arrive as command-line strings."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from orchestrator.errors import OrchestratorError
from orchestrator.options import as_bool

__all__ = ["as_bool", "as_choice", "as_float", "as_int", "reject_unknown"]


def reject_unknown(searcher: str, factory: Callable[..., Any], unknown: dict[str, Any]) -> None:
    """Fail with the list of known options when ``unknown`` is not empty."""
    if unknown:
        known = [p for p in inspect.signature(factory).parameters if p != "unknown"]
        raise OrchestratorError(
            f"{searcher}: unknown option(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(known)}")


def as_float(searcher: str, name: str, value: Any, *, low: float | None = None,
             high: float | None = None, low_open: bool = False) -> float:
    """``value`` as a float in [low, high] (or (low, high] with ``low_open``)."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise OrchestratorError(
            f"{searcher}: option {name} must be a number, got {value!r}") from None
    too_low = low is not None and (out <= low if low_open else out < low)
    if too_low or (high is not None and out > high) or out != out:
        bound = f"{'(' if low_open else '['}{low}, {high if high is not None else 'inf'}]"
        raise OrchestratorError(f"{searcher}: option {name} must be in {bound}, got {value!r}")
    return out


def as_int(searcher: str, name: str, value: Any, *, low: int = 1) -> int:
    """``value`` as an integer of at least ``low`` ("8" and 8.0 are accepted, 8.5 is not)."""
    try:
        number = float(value)
        out = int(number)
    except (TypeError, ValueError, OverflowError):
        raise OrchestratorError(
            f"{searcher}: option {name} must be an integer, got {value!r}") from None
    if out != number or out < low:
        raise OrchestratorError(
            f"{searcher}: option {name} must be an integer >= {low}, got {value!r}")
    return out


def as_choice(searcher: str, name: str, value: Any, choices: tuple[str, ...]) -> str:
    text = str(value).strip().lower()
    if text not in choices:
        raise OrchestratorError(
            f"{searcher}: option {name} must be one of {', '.join(choices)}, got {value!r}")
    return text
