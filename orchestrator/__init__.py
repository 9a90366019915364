"""Plugin-based tuning orchestrator for tensor programs on Apache TVM."""

from __future__ import annotations

__version__ = "0.1.0"
