"""Turning any position vector into a valid config of the space, or giving up quickly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from orchestrator.space import Config, Space
from plugins.es.encoding import KnobEncoding

# A repaired vector: its valid positions and their config.
Repaired = tuple[tuple[int, ...], Config]

# Most single-axis moves tried before a vector counts as beyond repair.
MAX_CHECKS = 128
# Repairs remembered (populations revisit the same vectors often); the cache is
# cleared when full.
CACHE_SIZE = 100_000


class Repairer:
    """Maps a position vector to the nearest valid config it can find.

    For a space pruned to an explicit candidate list, that is the nearest candidate in
    the unit cube (L1). Otherwise the space's ``check`` decides, and single-axis moves
    are tried in order of their length relative to the axis, up to :data:`MAX_CHECKS`.
    The search is deterministic, so equal vectors always repair to equal configs.
    """

    def __init__(self, space: Space, encoding: KnobEncoding, max_checks: int = MAX_CHECKS) -> None:
        self.space, self.encoding, self.max_checks = space, encoding, max_checks
        self._candidate_keys: set[str] | None = None
        self._candidate_points: np.ndarray | None = None
        self._candidates: tuple[Config, ...] = ()
        if space.candidates is not None:
            self._candidates = space.candidates
            self._candidate_keys = {c.key for c in space.candidates}
            self._candidate_points = np.array(
                [encoding.to_unit(encoding.positions(c)) for c in space.candidates],
                dtype=float).reshape(len(space.candidates), encoding.dim)
        moves = [(abs(d) / n, a, d) for a, n in enumerate(encoding.sizes)
                 for d in range(-(n - 1), n) if d]
        self._moves = [(a, d) for _, a, d in sorted(moves)]
        self._cache: dict[tuple[int, ...], Repaired | None] = {}

    def valid(self, config: Config) -> bool:
        if self._candidate_keys is not None:
            return config.key in self._candidate_keys
        check = self.space.check
        return check is None or check(config) is None

    def repair(self, positions: Sequence[int]) -> Repaired | None:
        """``(positions, config)`` of a valid config near ``positions``, or None."""
        key = tuple(int(p) for p in positions)
        if key not in self._cache:
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = self._repair(key)
        return self._cache[key]

    def _repair(self, positions: tuple[int, ...]) -> Repaired | None:
        config = self.encoding.config(positions)
        if self.valid(config):
            return positions, config
        if self._candidate_points is not None:
            return self._nearest_candidate(positions)
        checks = 0
        for axis, delta in self._moves:
            moved = positions[axis] + delta
            if not 0 <= moved < self.encoding.sizes[axis]:
                continue
            trial = positions[:axis] + (moved,) + positions[axis + 1:]
            config = self.encoding.config(trial)
            if self.valid(config):
                return trial, config
            checks += 1
            if checks >= self.max_checks:
                break
        return None

    def _nearest_candidate(self, positions: tuple[int, ...]) -> Repaired | None:
        if not self._candidates:
            return None
        assert self._candidate_points is not None
        point = self.encoding.to_unit(positions)
        distance = np.abs(self._candidate_points - point).sum(axis=1)
        best = int(np.argmin(distance))  # ties go to the better-ranked candidate
        config = self._candidates[best]
        return self.encoding.positions(config), config
