"""The ``NAME=SEARCHER[:KEY=VALUE,...]`` text of a searcher variant and ``KEY=VALUE``
options, as the benchmark scripts' ``--variant`` and option flags take them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def parse_options(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` items as a dict, each value read as JSON (a number, a boolean, a
    quoted string) where it is JSON, else kept as its text."""
    out: dict[str, Any] = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def split_variant(text: str) -> tuple[str, str, dict[str, Any]]:
    """``NAME=SEARCHER[:KEY=VALUE,...]`` as (name, searcher, options); ValueError for any
    other text."""
    name, sep, rest = text.partition("=")
    searcher, _, opts = rest.partition(":")
    items = [o for o in opts.split(",") if o]
    if not sep or not name or not searcher or any("=" not in o for o in items):
        raise ValueError(f"--variant takes NAME=SEARCHER[:KEY=VALUE,...], got {text!r}")
    return name, searcher, parse_options(items)
