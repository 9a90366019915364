"""Random valid configs: starting points, and fresh configs when a search stalls."""

from __future__ import annotations

import random

from orchestrator.space import Config, Space

# Spaces up to this size are enumerated once, so that "no unseen config left" is exact.
ENUMERATE_UP_TO = 20000
# Consecutive draws that hit only seen configs before a large space counts as exhausted.
MAX_MISSES = 2000
# Draws per valid config asked for; after a failure, a tenth of that (the space is
# nearly all invalid, and a strategy asks for whole populations of starting points).
MAX_TRIES = 1000


class FreshSampler:
    """Seeded draws of valid configs, optionally excluding the keys in ``seen``."""

    def __init__(self, space: Space, rng: random.Random) -> None:
        self.space, self.rng = space, rng
        self._pool: list[Config] | None = None
        self._tries = MAX_TRIES

    def any(self) -> Config | None:
        """One valid config, seen or not (None if none turned up)."""
        cfg = self.space.sample(self.rng, max_tries=self._tries)
        if cfg is None:
            self._tries = MAX_TRIES // 10
        return cfg

    def unseen(self, n: int, seen: set[str]) -> list[Config]:
        """Up to ``n`` valid configs whose keys are not in ``seen`` (fewer when none are left)."""
        out: list[Config] = []
        if self.space.size <= ENUMERATE_UP_TO:
            if self._pool is None:
                self._pool = list(self.space)
                self.rng.shuffle(self._pool)
            while self._pool and len(out) < n:
                cfg = self._pool.pop()
                if cfg.key not in seen:
                    out.append(cfg)
            return out
        misses = 0
        keys: set[str] = set()
        while len(out) < n and misses < MAX_MISSES:
            cfg = self.space.sample(self.rng)
            if cfg is None:
                break
            if cfg.key in seen or cfg.key in keys:
                misses += 1
                continue
            keys.add(cfg.key)
            out.append(cfg)
        return out
