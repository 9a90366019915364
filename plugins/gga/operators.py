"""The guided operators of Algorithm 1 (GGA): rank-proportional crossover that switches
one gene, elite-gene mutation, expertise mutation, and performance-proportional selection.

A gene is one knob's value. Every operator returns the child and the gene it changed
(``(knob name, value)``), which the searcher stores in its Genes dictionary. The paper's
GGA has no random mutation: new values come from elite genes, from the divisors of the
knob's extent (plus the small factors 2 and 4), or, for choice knobs, from the
neighbouring choices. :func:`mutate_random` (any other choice of one knob) is here for
the searcher's ``explore`` option only, which is off by default.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from history.similarity import adapt_split
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob, divisors

Gene = tuple[str, Any]
SMALL_FACTORS = (2, 4)


def rank_weights(n: int) -> list[float]:
    """Rank fitness of ``n`` individuals sorted best first: n, n-1, ..., 1."""
    return [float(n - i) for i in range(n)]


def pick_rank_proportional(rng: random.Random, ranked: Sequence[Config]) -> Config:
    """One individual of a best-first list, with probability proportional to its rank."""
    return rng.choices(ranked, weights=rank_weights(len(ranked)), k=1)[0]


def select_proportional(rng: random.Random, scored: Sequence[tuple[Config, float]],
                        size: int, keep: Sequence[Config] = ()) -> list[Config]:
    """The next population: ``keep`` (the best individuals, kept by hand) then draws with
    probability proportional to performance up to ``size`` in all. Zero performance
    (failures) is drawn only if every individual has it."""
    if not scored:
        return list(keep)
    weights = [max(p, 0.0) for _, p in scored]
    if sum(weights) <= 0:
        weights = [1.0] * len(scored)
    drawn = rng.choices([c for c, _ in scored], weights=weights, k=max(size - len(keep), 0))
    return [*keep, *drawn]


def crossover(rng: random.Random, a: Config, b: Config, space: Space) -> tuple[Config, Gene] | None:
    """``a`` with one gene switched to ``b``'s value (None if they do not differ)."""
    differing = [k.name for k in space.knobs if a[k.name] != b[k.name]]
    if not differing:
        return None
    name = rng.choice(differing)
    return Config.of({**a.to_dict(), name: b[name]}), (name, b[name])


def mutate_elite(rng: random.Random, parent: Config,
                 elite_genes: Mapping[str, Sequence[Any]]) -> tuple[Config, Gene] | None:
    """``parent`` with one gene replaced by an elite gene it does not already carry."""
    options = [(name, v) for name in sorted(elite_genes) for v in elite_genes[name]
               if parent.get(name) != v]
    if not options:
        return None
    name, value = rng.choice(options)
    return Config.of({**parent.to_dict(), name: value}), (name, value)


def refit_split(current: Sequence[int], extent: int, pos: int, factor: int) -> tuple[int, ...] | None:
    """``current`` with inner factor ``pos`` set to ``factor`` and the other inner factors
    refitted so that the split is perfect again: innermost first, each kept if it divides
    what is left of the extent, else the nearest divisor of it; the outer factor takes
    the rest (None if ``factor`` does not divide the extent)."""
    if factor < 1 or extent % factor:
        return None
    return adapt_split((*current[:pos], factor, *current[pos + 1:]), extent, fixed=pos)


def expertise_values(knob: SplitKnob | ChoiceKnob, current: Any, refit: bool = False,
                     swap: bool = False) -> list[Any]:
    """The values expertise suggests for a knob, other than ``current``.

    Split knob: one inner factor replaced by a divisor of the loop extent or a small
    factor (2, 4), the outer factor recomputed; kept only if it is one of the knob's
    choices. With ``refit``, a factor that no longer fits beside the other inner factors
    is kept and those are refitted around it (:func:`refit_split`), so that a register
    tile of 7 can replace one of 2 under a middle factor of 14 in one move. With
    ``swap``, also the split with two of its factors exchanged (:func:`swapped_splits`),
    after those. Choice knob: the neighbouring choices (unroll depths, orders as listed).
    """
    if isinstance(knob, ChoiceKnob):
        try:
            i = knob.choices.index(current)
        except ValueError:
            return list(knob.choices[:1])
        return [knob.choices[j] for j in (i - 1, i + 1) if 0 <= j < len(knob.choices)]
    if not isinstance(current, tuple) or len(current) != knob.parts or knob.parts < 2:
        return []
    allowed = set(knob.choices)
    pool = sorted(set(divisors(knob.extent)) | set(SMALL_FACTORS))
    out: list[tuple[int, ...]] = []
    for pos in range(1, knob.parts):
        for f in pool:
            if f == current[pos]:
                continue
            inner = [*current[1:pos], f, *current[pos + 1:]]
            tile = math.prod(inner)
            if knob.extent % tile == 0:
                cand: tuple[int, ...] | None = (knob.extent // tile, *inner)
            elif refit:
                cand = refit_split(current, knob.extent, pos, f)
            else:
                continue
            if cand in allowed and cand not in out:
                out.append(cand)
    if swap:
        out += [c for c in swapped_splits(current) if c in allowed and c not in out]
    return out


def swapped_splits(current: Sequence[int]) -> list[tuple[int, ...]]:
    """``current`` with two of its factors (the outer one included) exchanged, each pair
    once, in position order; the product is unchanged. A tile of 7 under one of 8 becomes
    8 under 7 in one move, which replacing one inner factor cannot do when neither
    factor divides the other's place. Two different pairs never give the same split."""
    out: list[tuple[int, ...]] = []
    for i, j in itertools.combinations(range(len(current)), 2):
        if current[i] != current[j]:
            cand = list(current)
            cand[i], cand[j] = cand[j], cand[i]
            out.append(tuple(cand))
    return out


def mutate_expertise(rng: random.Random, parent: Config, space: Space,
                     refit: bool = False, swap: bool = False) -> tuple[Config, Gene] | None:
    """``parent`` with one knob moved to a value expertise suggests."""
    knobs = list(space.knobs)
    rng.shuffle(knobs)
    for knob in knobs:
        values = expertise_values(knob, parent[knob.name], refit, swap)
        if values:
            value = rng.choice(values)
            return Config.of({**parent.to_dict(), knob.name: value}), (knob.name, value)
    return None


def mutate_random(rng: random.Random, parent: Config, space: Space) -> tuple[Config, Gene] | None:
    """``parent`` with one knob (uniformly chosen) set to any other of its choices,
    uniformly: AutoTVM GA's mutation, one gene at a time. Not a guided operator."""
    knobs = [k for k in space.knobs if len(k.choices) > 1]
    if not knobs:
        return None
    knob = rng.choice(knobs)
    value = parent.get(knob.name)
    options = [c for c in knob.choices if c != value]
    value = rng.choice(options)
    return Config.of({**parent.to_dict(), knob.name: value}), (knob.name, value)
