"""The ``psa`` pruner: the target space of Pruner's Parameterized Static Analyzer.

Every config of the space (or a large uniform sample of a space too large to
enumerate) gets an estimated latency L_total (equation 4); the ``size`` configs with the
lowest estimate are kept, plus ``round(explore * size)`` configs drawn uniformly (seeded)
from the rest, so that the search can still reach programs beyond the analysis (the
paper's "retain a small portion from the original space"). Configs that cannot launch
(a block does not fit on an SM) are dropped.
"""

from __future__ import annotations

import math
import random

from orchestrator.options import number, owner_name, whole
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.psa.analysis import Analyzer, describe
from plugins.psa.penalties import PsaError

DEFAULT_SIZE = 256
DEFAULT_EXPLORE = 0.1
# Spaces with more configs (before ``check``) are sampled instead of enumerated.
MAX_ENUMERATE = 200_000
# How many distinct valid configs are drawn from a space too large to enumerate.
SAMPLE_SIZE = 100_000


def uniform_sample(space: Space, n: int, rng: random.Random,
                   max_tries_per_config: int = 20) -> list[Config]:
    """Up to ``n`` distinct valid configs drawn uniformly (rejection on ``check``)."""
    seen: set[tuple[int, ...]] = set()
    out: list[Config] = []
    sizes = space.knob_sizes
    for _ in range(n * max_tries_per_config):
        if len(out) >= n:
            break
        idx = tuple(rng.randrange(s) for s in sizes)
        if idx in seen:
            continue
        seen.add(idx)
        cfg = space.config_at(idx)
        if space.check is None or space.check(cfg) is None:
            out.append(cfg)
    return out


def population(space: Space, rng: random.Random, max_enumerate: int = MAX_ENUMERATE,
               sample_size: int = SAMPLE_SIZE) -> tuple[list[Config], bool]:
    """The configs to rank and whether they are a sample (True) or the whole space."""
    if space.candidates is not None or space.size <= max_enumerate:
        return list(space), False
    return uniform_sample(space, sample_size, rng), True


class PsaPruner:
    """Keeps the ``size`` configs PSA estimates fastest plus an ``explore`` share of the rest.

    Options: ``size`` (256 or 512 in the paper; any positive number), ``explore`` (share
    of ``size`` drawn uniformly from the rest, 0 for none), ``seed`` (of that draw and of
    the sample of a huge space), ``max_enumerate`` and ``sample_size`` (spaces with more
    than ``max_enumerate`` configs are ranked on ``sample_size`` uniformly drawn ones).
    The result is ``space.with_candidates(...)`` ranked by estimated latency, best first.
    """

    name = "psa"  # the name its option errors give it

    def __init__(self, *, size: int = DEFAULT_SIZE, explore: float = DEFAULT_EXPLORE,
                 seed: int = 0, max_enumerate: int = MAX_ENUMERATE,
                 sample_size: int = SAMPLE_SIZE) -> None:
        owner = owner_name("pruner", self.name)
        self.size = whole(owner, "size", size, 1)
        self.explore = number(owner, "explore", explore, 0.0, 1.0)
        self.seed = whole(owner, "seed", seed, 0)
        self.max_enumerate = whole(owner, "max_enumerate", max_enumerate, 0)
        self.sample_size = whole(owner, "sample_size", sample_size, 1)

    def rank(self, space: Space, target: TargetInfo) -> tuple[list[tuple[float, Config]], bool]:
        """(estimated seconds, config) of every launchable config ranked, and whether sampled."""
        analyzer = Analyzer(space, target, "pruner psa")
        configs, sampled = population(space, random.Random(self.seed), self.max_enumerate,
                                      self.sample_size)
        scored = [(lat, i) for i, lat in enumerate(analyzer.latencies(configs))
                  if math.isfinite(lat)]
        scored.sort()
        return [(lat, configs[i]) for lat, i in scored], sampled

    def prune(self, space: Space, target: TargetInfo) -> Space:
        """The target space: ``space.with_candidates`` ranked best first, with a note."""
        ranked, sampled = self.rank(space, target)
        return self.select(space, target, ranked, sampled)

    def select(self, space: Space, target: TargetInfo, ranked: list[tuple[float, Config]],
               sampled: bool) -> Space:
        """The target space built from a ranking made by :meth:`rank`."""
        if not ranked:
            raise PsaError(f"pruner psa: no config of {space.task.name or space.task.op} can "
                           f"launch on {describe(target)} (every block is too large)")
        kept = ranked[:self.size]
        rest = ranked[self.size:]
        n_explore = min(len(rest), round(self.explore * self.size))
        rng = random.Random(f"psa-explore-{self.seed}")
        picked = sorted(rng.sample(range(len(rest)), n_explore))
        chosen = kept + [rest[i] for i in picked]
        total = len(ranked)
        where = (f"a uniform sample of {total:,} launchable configs (space of "
                 f"{space.size:,} too large to enumerate)" if sampled
                 else f"{total:,} launchable configs")
        note = (f"psa: kept the {len(kept)} configs with the lowest estimated latency "
                f"(Pruner PSA, eq. 4, {describe(target)}) of {where}, best "
                f"{kept[0][0] * 1e6:.1f} us, plus {n_explore} drawn uniformly from the rest "
                f"(seed {self.seed})")
        return space.with_candidates([c for _, c in chosen], note)


class Psa512Pruner(PsaPruner):
    """The ``psa`` pruner with the paper's larger target space, ``size`` 512 by default."""

    name = "psa-512"

    def __init__(self, *, size: int = 512, explore: float = DEFAULT_EXPLORE, seed: int = 0,
                 max_enumerate: int = MAX_ENUMERATE, sample_size: int = SAMPLE_SIZE) -> None:
        super().__init__(size=size, explore=explore, seed=seed, max_enumerate=max_enumerate,
                         sample_size=sample_size)
