"""Helpers shared by the CPU templates: knob construction, loop annotations, errors."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from orchestrator.errors import InvalidConfigError
from orchestrator.space import SplitKnob, divisors, factorizations
from orchestrator.target import TargetInfo

# Unroll depths offered to every template (MetaSchedule's CPU defaults, without 512,
# which never won on these kernels and slows builds down).
UNROLL_STEPS: tuple[int, ...] = (0, 16, 64)


def vector_registers(target: TargetInfo) -> int:
    """Architectural SIMD registers: 32 with AVX-512 (and on NEON), 16 otherwise."""
    return 32 if target.simd_bits >= 512 or target.arch.startswith(("aarch64", "arm")) else 16


def max_accumulators(target: TargetInfo) -> int:
    """Vector accumulators a register tile may hold, leaving room for operands."""
    return vector_registers(target) - 8


def round_up(value: int, multiple: int) -> int:
    """``value`` rounded up to a multiple of ``multiple``."""
    return -(-value // multiple) * multiple


def vectors(width: int, lanes: int) -> int:
    """SIMD registers needed to hold ``width`` fp32 values."""
    return -(-width // lanes)


def vector_efficiency(width: int, lanes: int) -> float:
    """Share of the lanes doing useful work when ``width`` values are vectorized."""
    return width / (vectors(width, lanes) * lanes)


def vector_widths(extent: int, lanes: int, max_vectors: int) -> list[int]:
    """Innermost factors of ``extent`` worth vectorizing, best first.

    Whole registers (1, 2, 4 ... of them; 3 made LLVM emit very slow code) when
    ``extent`` allows; otherwise the divisors that fill at least half of their
    registers; otherwise the largest small divisor (no good choice).
    """
    limit = lanes * max_vectors
    divs = divisors(extent)
    exact = [d for d in divs if d % lanes == 0 and d <= limit and _pow2(d // lanes)]
    if exact:
        return exact
    # Partial registers only below one register: wider odd vectors (e.g. 28 lanes)
    # made LLVM emit very slow code.
    decent = [d for d in divs if lanes // 2 <= d <= lanes]
    if decent:
        return sorted(decent, key=lambda d: -vector_efficiency(d, lanes))
    return [max(d for d in divs if d <= lanes)]


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def pad_for_vectors(extent: int, lanes: int) -> int:
    """The extent to compute for a vectorized axis: rounded up to whole registers when
    the axis has no multiple of ``lanes`` among its divisors and rounding wastes little."""
    if extent % lanes == 0 or extent < 2 * lanes:
        return extent
    return round_up(extent, lanes)


def pad_for_tiles(extent: int, smallest_tile: int = 4, step: int = 8) -> int:
    """Rounded up to a multiple of ``step`` when ``extent`` (> 16) has no divisor between
    ``smallest_tile`` and 16, so that a register tile can be formed; else unchanged."""
    if extent <= 16 or any(smallest_tile <= d <= 16 for d in divisors(extent)):
        return extent
    return round_up(extent, step)


def split_knob(name: str, extent: int, parts: int, *, inner: Sequence[int] | None = None,
               keep: Callable[[tuple[int, ...]], bool] | None = None) -> SplitKnob:
    """A perfect split of ``extent`` whose innermost factor is one of ``inner`` (if given)
    and that passes ``keep``; falls back to the unfiltered factorizations if none does."""
    allowed = set(inner) if inner is not None else None
    cands = [c for c in factorizations(extent, parts)
             if (allowed is None or c[-1] in allowed) and (keep is None or keep(c))]
    if not cands:
        cands = [c for c in factorizations(extent, parts) if allowed is None or c[-1] in allowed]
    if not cands:
        cands = factorizations(extent, parts)
    return SplitKnob(name, extent, parts, tuple(cands))


def product(values: Sequence[int]) -> int:
    return math.prod(values)


def factors_of(config: Any, name: str, extent: int, parts: int) -> tuple[int, ...]:
    """The split factors of knob ``name`` in ``config``, checked to tile ``extent`` exactly."""
    try:
        value = tuple(int(v) for v in config[name])
    except (KeyError, TypeError, ValueError):
        raise InvalidConfigError(f"config has no valid split for {name}") from None
    if len(value) != parts or product(value) != extent or min(value) < 1:
        raise InvalidConfigError(
            f"split {name}={list(value)} does not tile extent {extent} in {parts} parts")
    return value


def choice(config: Any, name: str, allowed: Sequence[Any]) -> Any:
    """The value of choice knob ``name``, checked against ``allowed``."""
    try:
        value = config[name]
    except KeyError:
        raise InvalidConfigError(f"config has no value for knob {name}") from None
    if value not in allowed:
        raise InvalidConfigError(f"knob {name}={value!r} is not one of {list(allowed)}")
    return value


def annotate_unroll(sch: Any, loop: Any, steps: int) -> None:
    """Ask the lowering to unroll loops below ``loop`` up to ``steps`` iterations."""
    if steps > 0:
        sch.annotate(loop, "pragma_auto_unroll_max_step", steps)
        sch.annotate(loop, "pragma_unroll_explicit", 1)


def vectorize_at_most(sch: Any, loop: Any, width: int) -> None:
    """Vectorize ``loop`` at most ``width`` lanes at a time.

    A longer loop is split by its largest divisor up to ``width`` and only the inner
    part vectorized; with no divisor of 2 or more the loop stays scalar (LLVM may still
    vectorize it). A copy vectorized across a whole row (a 3072-lane vector for a dense
    accumulator's write-back) made LLVM spend up to 30 s generating code for one config.
    """
    extent = int(sch.get(loop).extent)
    if extent <= width:
        sch.vectorize(loop)
        return
    inner = max(d for d in divisors(extent) if d <= width)
    if inner >= 2:
        sch.vectorize(sch.split(loop, [None, inner])[1])


def find_block(sch: Any, name: str) -> Any | None:
    """The block called ``name``, or None if the PrimFunc has none."""
    try:
        return sch.get_sblock(name)
    except Exception:  # ScheduleError: no block with that name
        return None


def first_line(text: str) -> str:
    """The most telling line of a TVM error (its 'Error message:' line if present)."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("Error message:"):
            return ln[len("Error message:"):].strip()
    return lines[-1] if lines else type(text).__name__


@contextmanager
def schedule_errors(what: str) -> Iterator[None]:
    """Turn TVM schedule errors raised inside the block into InvalidConfigError."""
    try:
        yield
    except InvalidConfigError:
        raise
    except Exception as exc:  # ScheduleError, TVMError, ValueError from the schedule API
        raise InvalidConfigError(f"{what}: {type(exc).__name__}: {first_line(str(exc))}") from None


# Share of uniform draws that must pass a space's check: ``Space.sample`` gives up after
# 1000 rejected draws, and searchers sample large spaces that way.
MIN_ACCEPTANCE = 0.02


def samplable(space: Any, draws: int) -> bool:
    """True if configs of ``space`` pass its check often enough to be sampled: for a
    small space, which searchers enumerate, one valid config is enough; otherwise at
    least MIN_ACCEPTANCE of ``draws`` seeded uniform draws. The draws stop as soon as
    the answer is known (enough passed, or too few left to get there): it is the same
    answer as after all of them, and a space where one config in ten passes is judged
    after about 600 of 3000 draws (every task's start waits for this)."""
    import math
    import random

    if space.check is None:
        return True
    if space.size <= 20000:
        return next(iter(space), None) is not None
    rng = random.Random(0)
    need = math.ceil(MIN_ACCEPTANCE * draws)
    passed = 0
    for drawn in range(draws):
        if passed >= need or passed + (draws - drawn) < need:
            break
        passed += space.check(space.config_at([rng.randrange(n) for n in space.knob_sizes])) is None
    return passed >= need


def schedule_module(fam: Any, task: Any, config: Any, target: Any) -> Any:
    """The scheduled ``tvm.IRModule`` of ``task`` under ``config``: template module
    ``fam`` applies its schedule; InvalidConfigError (one line) when it does not fit."""
    from tvm.s_tir import Schedule

    with schedule_errors(f"{task.op} config {config.key}"):
        sch = Schedule(task.operator.prim_func(task.params), error_render_level="none")
        fam.apply(sch, task, config, target)
        return sch.mod
