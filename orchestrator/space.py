"""Search spaces: typed knobs, configs with stable keys, and the space that holds them."""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Union

from orchestrator.errors import InvalidConfigError
from orchestrator.jsonkey import canonical_json, key_hash

# The template the history gives measurements stored before it recorded templates.
LEGACY_TEMPLATE = ""

if TYPE_CHECKING:
    from orchestrator.task import Task


def _freeze(value: Any) -> Any:
    """Lists from JSON become tuples so that config values are hashable."""
    if isinstance(value, list | tuple):
        # Most values are flat tuples of split factors; history loads thousands at a start.
        if all(type(v) is int for v in value):
            return tuple(value)
        return tuple(_freeze(v) for v in value)
    return value


def factorizations(extent: int, parts: int) -> list[tuple[int, ...]]:
    """Every ordered tuple of ``parts`` positive integers whose product is ``extent``."""
    if parts == 1:
        return [(extent,)]
    out = []
    for d in divisors(extent):
        out.extend((d, *rest) for rest in factorizations(extent // d, parts - 1))
    return out


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending (a new list each call)."""
    return list(_divisors(n))


@functools.lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    # Scoring a history of thousands of records asks for the same few extents again and again.
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return tuple(sorted(set(small + [n // d for d in small])))


@dataclass(frozen=True)
class SplitKnob:
    """Split of a loop of length ``extent`` into ``parts`` nested loops, outermost first.

    Every candidate's product is exactly ``extent`` (perfect tiles), so a value can be
    adapted to another extent by keeping the inner factors that still divide it.
    """

    name: str
    extent: int
    parts: int
    choices: tuple[tuple[int, ...], ...]
    kind = "split"

    @classmethod
    def perfect(cls, name: str, extent: int, parts: int,
                keep: Callable[[tuple[int, ...]], bool] | None = None) -> SplitKnob:
        cands = [c for c in factorizations(extent, parts) if keep is None or keep(c)]
        if not cands:
            raise ValueError(f"split knob {name}: no factorization of {extent} passes the filter")
        return cls(name, extent, parts, tuple(cands))

    def decode(self, value: Any) -> tuple[int, ...]:
        return tuple(int(v) for v in value)


@dataclass(frozen=True)
class ChoiceKnob:
    """A categorical knob: loop orders, on/off switches, unroll depths, cache placements."""

    name: str
    choices: tuple[Any, ...]
    kind = "choice"

    def decode(self, value: Any) -> Any:
        return _freeze(value)


Knob = Union[SplitKnob, ChoiceKnob]


@dataclass(frozen=True)
class Config:
    """An assignment knob name -> value, with a stable key (canonical JSON)."""

    values: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, mapping: Mapping[str, Any]) -> Config:
        return cls(tuple(sorted((k, _freeze(v)) for k, v in mapping.items())))

    @classmethod
    def from_key(cls, key: str) -> Config:
        """The config whose canonical key (``Config.key``, as history stores it) is
        ``key``; keeps that text as its key instead of writing it again."""
        config = cls.of(json.loads(key))
        config.__dict__["key"] = key  # what functools.cached_property would store
        return config

    def __getitem__(self, name: str) -> Any:
        for k, v in self.values:
            if k == name:
                return v
        raise KeyError(name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.values}

    @functools.cached_property
    def key(self) -> str:
        # Cached: searchers and the loop look configs up by key many times over.
        return canonical_json(self.to_dict())

    @property
    def key_hash(self) -> str:
        return key_hash(self.key)


@dataclass(frozen=True)
class Space:
    """The configs a space generator offers for one task.

    ``schedule_fn`` names an importable function ``f(task, config, target) -> IRModule``
    (``"package.module:function"``) so that build workers can rebuild a config by name.
    ``check`` rejects configs the knobs alone allow but the template cannot build well
    (returns the reason, or None). Pruners narrow a space with :meth:`with_check` or
    replace it by a ranked explicit list with :meth:`with_candidates`. GPU spaces name
    ``plan_fn``, ``f(task, config, target) -> KernelPlan`` (orchestrator.kernel_plan), which
    analytical pruners and cost models read instead of building.

    ``template_version`` is the schedule's version: a generator bumps it when a config
    would build different code than before, so that the history stops reusing latencies
    measured with the old code (they stay in the history; see :attr:`template`).
    """

    task: Task
    generator: str
    knobs: tuple[Knob, ...]
    schedule_fn: str
    check: Callable[[Config], str | None] | None = field(default=None, compare=False)
    candidates: tuple[Config, ...] | None = None
    notes: tuple[str, ...] = ()
    plan_fn: str | None = None
    template_version: int = 1

    @property
    def template(self) -> str:
        """What built a measurement, as the history records it: generator and version."""
        return f"{self.generator}@{self.template_version}"

    @property
    def reusable_templates(self) -> tuple[str, ...]:
        """Templates whose stored latencies stand for this space's builds: its own and,
        for a first version, the measurements stored before the history kept templates
        (recorded as ``LEGACY_TEMPLATE``, the empty string)."""
        return (self.template, LEGACY_TEMPLATE) if self.template_version == 1 else (self.template,)

    def knob(self, name: str) -> Knob:
        for k in self.knobs:
            if k.name == name:
                return k
        raise KeyError(name)

    @property
    def knob_sizes(self) -> tuple[int, ...]:
        return tuple(len(k.choices) for k in self.knobs)

    @property
    def size(self) -> int:
        """Number of configs (before ``check``, for a knob space; exact for a candidate list)."""
        if self.candidates is not None:
            return len(self.candidates)
        return math.prod(self.knob_sizes)

    def config_at(self, indices: Sequence[int]) -> Config:
        """The config whose knob values are ``knob.choices[index]`` (searchers work on indices)."""
        return Config.of({k.name: k.choices[i] for k, i in zip(self.knobs, indices, strict=True)})

    def indices(self, config: Config) -> tuple[int, ...]:
        return tuple(k.choices.index(config[k.name]) for k in self.knobs)

    def validate(self, config: Config) -> str | None:
        """None when ``config`` belongs to this space, else the reason it does not."""
        names = {k.name for k in self.knobs}
        extra = sorted(set(dict(config.values)) - names)
        if extra:
            return f"unknown knob(s) {', '.join(extra)}"
        for k in self.knobs:
            value = config.get(k.name)
            if value is None:
                return f"knob {k.name} has no value"
            if value not in k.choices:
                return f"knob {k.name}: {value!r} is not one of its choices"
        if self.candidates is not None and config not in self._candidate_set:
            return "not among the pruned candidates"
        return self.check(config) if self.check else None

    def require_valid(self, config: Config) -> None:
        reason = self.validate(config)
        if reason:
            raise InvalidConfigError(f"config {config.key} is invalid: {reason}")

    def config_from_dict(self, data: Mapping[str, Any]) -> Config:
        return Config.of({k.name: k.decode(data[k.name]) for k in self.knobs if k.name in data})

    def sample(self, rng: random.Random, max_tries: int = 1000) -> Config | None:
        """A uniformly drawn valid config, or None if ``max_tries`` draws were all invalid."""
        if self.candidates is not None:
            return rng.choice(self.candidates) if self.candidates else None
        for _ in range(max_tries):
            cfg = self.config_at([rng.randrange(n) for n in self.knob_sizes])
            if self.check is None or self.check(cfg) is None:
                return cfg
        return None

    def __iter__(self) -> Iterator[Config]:
        """Every valid config, in a fixed order (grid search)."""
        if self.candidates is not None:
            yield from self.candidates
            return
        for idx in itertools.product(*(range(n) for n in self.knob_sizes)):
            cfg = self.config_at(idx)
            if self.check is None or self.check(cfg) is None:
                yield cfg

    def with_check(self, check: Callable[[Config], str | None], note: str) -> Space:
        """This space with one more rejection rule (used by pruners)."""
        previous = self.check

        def both(cfg: Config) -> str | None:
            return (previous(cfg) if previous else None) or check(cfg)

        return replace(self, check=both, notes=(*self.notes, note))

    def with_candidates(self, configs: Sequence[Config], note: str) -> Space:
        """This space reduced to an explicit list, best-ranked first (used by pruners)."""
        return replace(self, candidates=tuple(configs), notes=(*self.notes, note))

    @property
    def _candidate_set(self) -> frozenset[Config]:
        return frozenset(self.candidates or ())
