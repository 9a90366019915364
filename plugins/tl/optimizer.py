"""Finding the configs a model scores best: simulated annealing over the knob indices
(as AutoTVM's SimulatedAnnealingOptimizer, restricted to configs the space accepts), or
ranking a random pool of valid configs."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from orchestrator.space import Config, Space

# Scores a (n, knobs) array of choice indices; higher is better.
IndexScorer = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AnnealParams:
    chains: int = 128
    iters: int = 500
    early_stop: int = 50
    temp_start: float = 1.0


class _Validity:
    """Cached ``space.validate`` of index tuples."""

    def __init__(self, space: Space) -> None:
        self.space = space
        self.cache: dict[tuple[int, ...], bool] = {}

    def __call__(self, idx: tuple[int, ...]) -> bool:
        ok = self.cache.get(idx)
        if ok is None:
            ok = self.cache[idx] = self.space.validate(self.space.config_at(idx)) is None
        return ok


def anneal(space: Space, scorer: IndexScorer, n: int, exclude: set[str], seed: int,
           starts: Sequence[Config] = (), params: AnnealParams = AnnealParams()) -> list[Config]:
    """Up to ``n`` valid configs not in ``exclude`` with the best scores met by parallel
    annealing chains (started at ``starts``, then at random valid configs), best first."""
    if space.candidates is not None:
        return rank_configs(space, lambda cs: scorer(np.asarray([space.indices(c) for c in cs])),
                            list(space.candidates), n, exclude)
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    sizes = np.asarray(space.knob_sizes)
    valid = _Validity(space)
    # Starts from history may predate a change of the space: keep the valid ones.
    points = [space.indices(c) for c in starts if space.validate(c) is None][:params.chains]
    for _ in range(params.chains * 4):
        if len(points) >= params.chains:
            break
        cfg = space.sample(prng, max_tries=50)
        if cfg is None:
            break
        points.append(space.indices(cfg))
    if not points:
        return []
    cur = np.asarray(points, dtype=np.int64)
    cur_scores = _masked(scorer(cur), cur, valid)
    top: dict[tuple[int, ...], float] = {}
    key_of: dict[tuple[int, ...], str] = {}

    def offer(pts: np.ndarray, scores: np.ndarray) -> bool:
        changed = False
        floor = min(top.values()) if len(top) >= n else -np.inf
        for p, s in zip(map(tuple, pts.tolist()), scores.tolist()):
            if s <= floor or p in top or not np.isfinite(s):
                continue
            if p not in key_of:
                key_of[p] = space.config_at(p).key
            if key_of[p] in exclude:
                continue
            top[p] = s
            changed = True
            if len(top) > n:
                del top[min(top, key=top.__getitem__)]
                floor = min(top.values())
        return changed

    offer(cur, cur_scores)
    still = 0
    for i in range(params.iters):
        temp = params.temp_start * (1 - i / params.iters)
        new = cur.copy()
        rows = np.arange(len(new))
        which = rng.integers(0, len(sizes), size=len(new))
        new[rows, which] = rng.integers(0, sizes[which])
        new_scores = _masked(scorer(new), new, valid)
        with np.errstate(over="ignore", invalid="ignore"):
            accept = np.exp(np.minimum((new_scores - cur_scores) / (temp + 1e-5), 0.0))
        accept = np.nan_to_num(accept, nan=0.0)
        take = rng.random(len(new)) < accept
        cur[take], cur_scores[take] = new[take], new_scores[take]
        still = 0 if offer(new, new_scores) else still + 1
        if still >= params.early_stop:
            break
    ranked = sorted(top, key=lambda p: (-top[p], p))
    return [space.config_at(p) for p in ranked]


def _masked(scores: np.ndarray, pts: np.ndarray, valid: _Validity) -> np.ndarray:
    out = np.asarray(scores, dtype=np.float64).copy()
    for i, p in enumerate(map(tuple, pts.tolist())):
        if not valid(p):
            out[i] = -np.inf
    return out


def rank_configs(space: Space, score: Callable[[list[Config]], np.ndarray],
                 configs: list[Config], n: int, exclude: set[str]) -> list[Config]:
    """The ``n`` best-scored of ``configs`` that are not in ``exclude``, best first."""
    fresh = [c for c in configs if c.key not in exclude]
    if not fresh:
        return []
    scores = np.asarray(score(fresh), dtype=np.float64)
    order = sorted(range(len(fresh)), key=lambda i: (-scores[i], fresh[i].key))
    return [fresh[i] for i in order[:n]]


def sample_pool(space: Space, size: int, exclude: set[str], seed: int) -> list[Config]:
    """Up to ``size`` distinct valid configs drawn at random, none in ``exclude``."""
    if space.candidates is not None:
        return [c for c in space.candidates if c.key not in exclude]
    rng = random.Random(seed)
    out: dict[str, Config] = {}
    misses = 0
    while len(out) < size and misses < size * 4:
        cfg = space.sample(rng, max_tries=50)
        if cfg is None or cfg.key in exclude or cfg.key in out:
            misses += 1
            continue
        out[cfg.key] = cfg
    return list(out.values())
