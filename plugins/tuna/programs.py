"""Counts of lowered programs, shared by the analysis workers of one engine.

Different configs often lower to the same TIR (an unroll limit below every loop's
extent, for one), and then LLVM emits the same assembly. The counting of Algorithm 1
depends on nothing else, so the counts are kept under a hash of the lowered module's
text and code generation, the expensive step, runs once per distinct program. One JSON
file per program, written to a temporary name and renamed, so that workers may share
the directory without locks (two that race compute the same thing twice).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def program_key(lowered: Any, salt: str) -> str:
    """A hash of the lowered module's TVMScript text and ``salt`` (what else the counts
    depend on: the counting code's version and the target)."""
    digest = hashlib.sha256(salt.encode())
    digest.update(str(lowered).encode())
    return digest.hexdigest()[:32]


class ProgramCache:
    """Counts by program key, in ``directory`` (created on the first write)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def get(self, key: str) -> dict[str, float] | None:
        try:
            with open(self.directory / f"{key}.json", encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            return None
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else None

    def put(self, key: str, counts: dict[str, float]) -> None:
        path = self.directory / f"{key}.json"
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(counts, sort_keys=True), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # an unwritable directory only costs recomputation
