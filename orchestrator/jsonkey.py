"""Canonical JSON text and hashes used as stable keys for tasks, targets and configs."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def key_hash(text: str) -> str:
    """A short, stable hash of a canonical key (indexing only; equality compares the text)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]
