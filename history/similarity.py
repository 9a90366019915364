"""How well a history record fits a new task: match score, utilization, filtering metric,
and adaptation of a history config to the new task's space.

The formulas are those of Mu et al., "A History-Based Auto-Tuning Framework for Fast and
High-Performance DNN Design on GPU" (equations 1 to 3):

- match score (eq. 1, TVM's fallback score): for every split knob, the share of the
  divisors of the record's loop extent that also divide the input's extent, averaged
  over the split knobs of the input's space;
- utilization gamma (eq. 3): for every split knob, how much of the record's tile
  (``P(h, k)``, the product of its inner split factors: the work one outer iteration
  does) the input's extent fills when the tile is applied to it, multiplied over knobs;
- filtering metric (eq. 2): ``Th(h) * gamma(h, i) * s(h, i) ** omega`` with ``Th`` the
  record's throughput in GFLOPS.

History configs are made comparable with a task of another shape by :func:`adapt_config`:
inner split factors that still divide the new extent are kept, the others are replaced by
the nearest divisor, the outer factor is recomputed; a config the space still rejects is
repaired by the smallest single-knob change the space accepts, or dropped.

Everything here works on the generic knob API (:class:`SplitKnob` extents and choices,
:class:`ChoiceKnob` choices) and never on knob names.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.components import HistoryReader
from orchestrator.result import MeasureResult
from orchestrator.space import ChoiceKnob, Config, Space, SplitKnob, divisors
from orchestrator.target import TargetInfo
from orchestrator.task import Task

DEFAULT_OMEGA = 2.0
# Single-knob changes tried when an adapted config is rejected by the space's check.
_REPAIR_BUDGET = 400


# -- equations 1 to 3 -------------------------------------------------------------------

def split_extents(space: Space) -> dict[str, int]:
    """Loop extent of every split knob of ``space`` (``prod(i[k])`` in the paper)."""
    return {k.name: k.extent for k in space.knobs if isinstance(k, SplitKnob)}


def _split_value(config: Config, name: str) -> tuple[int, ...] | None:
    value = config.get(name)
    if not isinstance(value, tuple) or not value:
        return None
    try:
        factors = tuple(int(v) for v in value)
    except (TypeError, ValueError):
        return None
    return factors if min(factors) >= 1 else None


@functools.lru_cache(maxsize=4096)
def knob_match(record_extent: int, input_extent: int) -> float:
    """One term of equation 1: |factors(h) ∩ factors(i)| / |factors(h)|."""
    mine = set(divisors(record_extent))
    return len(mine & set(divisors(input_extent))) / len(mine)


def match_score(config: Config, extents: Mapping[str, int]) -> float:
    """Equation 1: the match score s(h, i) of a history config against an input whose
    split knobs have ``extents`` (0 when the input has no split knob). A knob the record
    lacks counts as no match."""
    if not extents:
        return 0.0
    total = 0.0
    for name, extent in extents.items():
        value = _split_value(config, name)
        if value is not None:
            total += knob_match(math.prod(value), extent)
    return total / len(extents)


def knob_utilization(config_value: Sequence[int], input_extent: int) -> float:
    """One factor of equation 3: gamma(h, i, k) with P(h, k) = product of the inner
    split factors of the record (every factor but the outermost)."""
    tile = math.prod(config_value[1:]) if len(config_value) > 1 else 1
    if input_extent > tile:
        return input_extent / (math.ceil(input_extent / tile) * tile)
    return input_extent / tile


def utilization(config: Config, extents: Mapping[str, int]) -> float:
    """Equation 3: gamma(h, i), the product of the per-knob utilization ratios
    (a knob the record lacks does not scale it; match_score already penalizes it)."""
    gamma = 1.0
    for name, extent in extents.items():
        value = _split_value(config, name)
        if value is not None:
            gamma *= knob_utilization(value, extent)
    return gamma


def filtering_metric(throughput: float, config: Config, extents: Mapping[str, int],
                     omega: float = DEFAULT_OMEGA) -> float:
    """Equation 2: m(h, i) = Th(h) * gamma(h, i) * s(h, i) ** omega."""
    return throughput * utilization(config, extents) * match_score(config, extents) ** omega


# -- adaptation to another shape --------------------------------------------------------

def _nearest_divisor(n: int, target: int) -> int:
    """The divisor of ``n`` closest to ``target`` on a log scale (the smaller on ties)."""
    return min(divisors(n), key=lambda d: (abs(math.log(d / target)), d))


def adapt_split(value: Sequence[int], extent: int, fixed: int | None = None) -> tuple[int, ...]:
    """A perfect split of ``extent`` with as many parts as ``value``: inner factors are
    kept from the innermost outwards while they divide what is left of the extent (the
    others become the nearest divisor), and the outermost factor takes the rest. The
    inner factor at index ``fixed`` (which must divide ``extent``) is kept whatever the
    others are; they are fitted around it."""
    remaining = extent // value[fixed] if fixed is not None else extent
    inner = list(value[1:])
    for i in reversed(range(len(inner))):
        if i + 1 == fixed:
            continue
        if remaining % inner[i]:
            inner[i] = _nearest_divisor(remaining, inner[i])
        remaining //= inner[i]
    return (remaining, *inner)


def _split_distance(a: Sequence[int], b: Sequence[int]) -> float:
    """Log-distance of two splits over their inner factors (the outer one follows)."""
    return sum(abs(math.log2(x) - math.log2(y)) for x, y in zip(a[1:], b[1:]))


def _choice_distance(a: Any, b: Any, choices: Sequence[Any]) -> float:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(math.log2(1 + abs(a)) - math.log2(1 + abs(b)))
    try:
        return abs(choices.index(a) - choices.index(b))
    except ValueError:
        return float(len(choices))


def nearest_values(knob: SplitKnob | ChoiceKnob, value: Any) -> list[Any]:
    """The knob's choices ordered by distance from ``value`` (nearest first, stable)."""
    if isinstance(knob, SplitKnob):
        if isinstance(value, tuple) and len(value) == knob.parts:
            return sorted(knob.choices, key=lambda c: _split_distance(c, value))
        return list(knob.choices)
    return sorted(knob.choices, key=lambda c: _choice_distance(c, value, knob.choices))


def _adapt_knob(knob: SplitKnob | ChoiceKnob, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(knob, SplitKnob):
        if not isinstance(value, tuple) or len(value) != knob.parts:
            return None
        try:
            split = adapt_split(tuple(int(v) for v in value), knob.extent)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
        return split if split in knob.choices else nearest_values(knob, split)[0]
    return value if value in knob.choices else nearest_values(knob, value)[0]


def repair(config: Config, space: Space, budget: int = _REPAIR_BUDGET,
           fixed: Iterable[str] = (), avoid: Container[str] = ()) -> Config | None:
    """``config`` if the space accepts it, else the accepted config reached by the
    smallest single-knob change (nearest values first) of a knob not in ``fixed`` whose
    key is not in ``avoid``, else None."""
    if space.validate(config) is None:
        return config
    values = dict(config.values)
    held = set(fixed)
    moves: list[tuple[int, int, str, Any]] = []
    for ki, knob in enumerate(space.knobs):
        if knob.name in held:
            continue
        for rank, alt in enumerate(nearest_values(knob, values[knob.name])):
            if alt != values[knob.name]:
                moves.append((rank, ki, knob.name, alt))
    moves.sort(key=lambda m: (m[0], m[1]))
    for _, _, name, alt in moves[:budget]:
        cand = Config.of({**values, name: alt})
        if cand.key not in avoid and space.validate(cand) is None:
            return cand
    return None


def adapt_config(config: Config, space: Space) -> Config | None:
    """``config`` (from any task with the same knobs) moved into ``space``, or None if a
    knob is missing or no nearby config is valid."""
    values: dict[str, Any] = {}
    for knob in space.knobs:
        adapted = _adapt_knob(knob, config.get(knob.name))
        if adapted is None:
            return None
        values[knob.name] = adapted
    if space.candidates is not None:
        cfg = Config.of(values)
        return cfg if space.validate(cfg) is None else None
    return repair(Config.of(values), space)


# -- ranking history for a task ---------------------------------------------------------

@dataclass(frozen=True)
class ScoredRecord:
    """A history result scored against an input task (the paper's h with s, gamma, m)."""

    task: Task
    result: MeasureResult
    gflops: float
    match: float
    gamma: float
    metric: float


def fastest_per_config(results: Iterable[MeasureResult]) -> list[MeasureResult]:
    """The fastest successful result of each config in ``results`` (equal timings: the
    first), in the order the configs first come."""
    best: dict[str, MeasureResult] = {}
    for r in results:
        if r.ok and (r.config.key not in best or r.latency < best[r.config.key].latency):
            best[r.config.key] = r
    return list(best.values())


def history_results(history: HistoryReader, op: str, target: TargetInfo | None = None,
                    exclude: Task | None = None) -> list[tuple[Task, MeasureResult]]:
    """Successful results of every task of ``op`` (but ``exclude``), the best measurement
    of each config only. With a ``target``, that target's results, or every target's
    when it has none (throughputs of other machines are better than nothing)."""
    tasks = [t for t in history.tasks(op) if exclude is None or t.key != exclude.key]

    def collect(tgt: TargetInfo | None) -> list[tuple[Task, MeasureResult]]:
        return [(task, r) for task in tasks
                for r in fastest_per_config(history.results(task, tgt, ok_only=True))]

    found = collect(target)
    return found if found or target is None else collect(None)


def score_records(records: Iterable[tuple[Task, MeasureResult]], space: Space,
                  omega: float = DEFAULT_OMEGA) -> list[ScoredRecord]:
    """Every record scored against ``space``'s task, best filtering metric first."""
    extents = split_extents(space)
    out = []
    for task, r in records:
        gflops = r.gflops(task.flops)
        s = match_score(r.config, extents)
        g = utilization(r.config, extents)
        out.append(ScoredRecord(task, r, gflops, s, g, gflops * g * s ** omega))
    out.sort(key=lambda x: (-x.metric, -x.match, x.result.config.key))
    return out


def rank_history(history: HistoryReader | None, space: Space, target: TargetInfo | None = None,
                 omega: float = DEFAULT_OMEGA) -> list[ScoredRecord]:
    """History of other tasks of the same operator, best filtering metric first."""
    if history is None:
        return []
    return score_records(history_results(history, space.task.op, target, exclude=space.task),
                         space, omega)


def best_match_score(history: HistoryReader | None, space: Space,
                     target: TargetInfo | None = None) -> float:
    """The highest match score of any history record of another task (0 without history)."""
    if history is None:
        return 0.0
    extents = split_extents(space)
    return max((match_score(r.config, extents)
                for _, r in history_results(history, space.task.op, target, exclude=space.task)),
               default=0.0)


def group_by_task(scored: Iterable[ScoredRecord]) -> dict[str, list[ScoredRecord]]:
    """``scored`` grouped by source task key, tasks and records in the order given."""
    groups: dict[str, list[ScoredRecord]] = {}
    for rec in scored:
        groups.setdefault(rec.task.key, []).append(rec)
    return groups


def interleave_tasks(scored: Sequence[ScoredRecord]) -> list[ScoredRecord]:
    """``scored`` (best metric first) reordered round-robin over the source tasks: the
    best record of every task, tasks in the order of their best record, then every
    task's second best, and so on. Candidates taken from the front then come from as
    many earlier tasks as there are slots, instead of all from the one whose records
    score highest."""
    queues = group_by_task(scored)
    out: list[ScoredRecord] = []
    depth = 0
    while len(out) < len(scored):
        out.extend(q[depth] for q in queues.values() if depth < len(q))
        depth += 1
    return out


def kin_first(scored: Sequence[ScoredRecord], task: Task) -> list[ScoredRecord]:
    """``scored`` with the records of tasks of ``task``'s structure (for a convolution: the
    same kernel size, stride and dilation; see ``Operator.structure``) first, each part
    in its order. The match score (eq. 1) only compares the split knobs' loop extents,
    which a 1x1 and a 3x3 convolution of the same channels and image share."""
    mine = task.structure
    kin: dict[str, bool] = {}

    def is_kin(rec: ScoredRecord) -> bool:
        if rec.task.key not in kin:
            kin[rec.task.key] = rec.task.structure == mine
        return kin[rec.task.key]

    return [r for r in scored if is_kin(r)] + [r for r in scored if not is_kin(r)]


def iter_candidates(scored: Iterable[ScoredRecord], space: Space,
                    skip: Iterable[str] = ()) -> Iterator[tuple[Config, ScoredRecord]]:
    """Distinct adapted configs valid in ``space``, lazily, in ``scored`` order (the
    records' own configs adapted), skipping the config keys in ``skip``."""
    seen = set(skip)
    tried: set[str] = set()
    for rec in scored:
        if rec.result.config.key in tried:
            continue
        tried.add(rec.result.config.key)
        cfg = adapt_config(rec.result.config, space)
        if cfg is not None and cfg.key not in seen:
            seen.add(cfg.key)
            yield cfg, rec


def task_leaders(scored: Iterable[ScoredRecord], space: Space, limit: int,
                 skip: Iterable[str] = (), read: int = 4096
                 ) -> list[tuple[Config, ScoredRecord]]:
    """The first candidate (:func:`iter_candidates`) of each of the first ``limit`` source
    tasks of ``scored``, in ``scored`` order, looking at no more than ``read`` records
    (a lazy ranking reads only as far as the last leader, or ``read``)."""
    out: list[tuple[Config, ScoredRecord]] = []
    tasks: set[str] = set()
    for cfg, rec in iter_candidates(itertools.islice(scored, read), space, skip):
        if rec.task.key in tasks:
            continue
        tasks.add(rec.task.key)
        out.append((cfg, rec))
        if len(out) >= limit:
            break
    return out


def with_kin_leader(leaders: list[tuple[Config, ScoredRecord]],
                    scored: Iterable[ScoredRecord], space: Space, task: Task,
                    skip: Iterable[str] = (), read: int = 4096
                    ) -> list[tuple[Config, ScoredRecord]]:
    """``leaders`` (:func:`task_leaders`) with the last one replaced by the first
    candidate of a task of ``task``'s structure (``kin_first``), unless a leader's task
    already has it or ``scored``'s first ``read`` records hold no such candidate."""
    mine = task.structure
    if not leaders or any(rec.task.structure == mine for _, rec in leaders):
        return leaders
    taken = {cfg.key for cfg, _ in leaders[:-1]}
    kin = (r for r in itertools.islice(scored, read) if r.task.structure == mine)
    for cfg, rec in iter_candidates(kin, space, [*skip, *taken]):
        return [*leaders[:-1], (cfg, rec)]
    return leaders


def candidate_configs(scored: Iterable[ScoredRecord], space: Space, limit: int,
                      skip: Iterable[str] = ()) -> list[tuple[Config, ScoredRecord]]:
    """The first ``limit`` of :func:`iter_candidates`."""
    return list(itertools.islice(iter_candidates(scored, space, skip), limit))
