"""Whether two configs' speed ratio depends on the state the machine was in, read from the
reported configs timed again side by side (``gga_turns.py --deployed``) in turns already
run. It measures nothing.

A paired ratio (``paired.py``, ``gga_turns.py --deployed-view paired``) takes out a spell
of the machine that slows every config of a round alike. It cannot take out a spell that
slows one config more than another. Here each round of a layer gets a state: the median,
over the layer's reported configs other than the two compared, of the config's speed in
that round over its own median speed; above 1, the round ran fast for the others. The
rounds are split at the median state (the middle one left out when their count is odd),
and the report gives the per-round ratio of each searcher's final config over xgb's final
config, median in the slow half and in the fast half. Where the machine's state changed
the ratio, the halves differ by more than a relabelling of the rounds at random gives (the
exact permutation p-value per layer; over all pairs, the summed absolute log ratio of the
halves against 20,000 random relabellings). A second pooled test uses every round, none
left out: the summed absolute Spearman correlation between a round's state and the pair's
ratio, against the same kind of relabellings; a split at the median throws away where in
its half a round's state lies, the ranks keep it. Each pair also gets its own rank test
(``p (rho)``), against 20,000 relabellings of its rounds.

    python scripts/deployed_states.py --shapes scripts/unseen_convs4.json --no-pruned \\
        --db /work/gga/base500.db --confirm 1 --keep-workers --batch-size 2 \\
        --turns 0=/work/gga/unseen4-s0 --deployed-rounds 9 --out docs/results/states
"""

from __future__ import annotations

import itertools
import math
import random
import shlex
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import gga_turns as gt  # noqa: E402
import reproduce_gga as rg  # noqa: E402
from gga_seeds import check_turns_dirs, turns_parser  # noqa: E402
from paired import round_states  # noqa: E402

from plugins.tuna.metrics import ranks, spearman  # noqa: E402

SEARCHERS = ("gga", "ga")
MIN_ROUNDS = 6
PERMUTATIONS = 20_000


@dataclass(frozen=True)
class Halves:
    """A pair's per-round ratios split by the rounds' state: the median ratio in the slow
    and the fast half, the p-value of their difference under random relabelling, and the
    rounds used."""

    slow: float
    fast: float
    p: float
    rounds: int


def _gap(ratios: Sequence[float], slow: Sequence[int], fast: Sequence[int]) -> float:
    return abs(math.log(statistics.median(ratios[i] for i in fast)
                        / statistics.median(ratios[i] for i in slow)))


def told_rounds(states: Sequence[float | None], *series: Sequence[float | None]
                ) -> list[int] | None:
    """The rounds with a state and a value in every series, in round order; None with
    fewer than :data:`MIN_ROUNDS`."""
    kept = [i for i, st in enumerate(states) if st and all(x[i] for x in series)]
    return kept if len(kept) >= MIN_ROUNDS else None


def split_rounds(states: Sequence[float | None], *series: Sequence[float | None]
                 ) -> list[int] | None:
    """The rounds to split, slowest state first: the :func:`told_rounds`, less the middle
    one when their count is odd; None with fewer than :data:`MIN_ROUNDS`."""
    kept = told_rounds(states, *series)
    if kept is None:
        return None
    kept.sort(key=lambda i: states[i] or 0.0)
    if len(kept) % 2:
        kept.pop(len(kept) // 2)
    return kept


def halves(ratios: Sequence[float | None], rounds: Sequence[int]) -> Halves:
    """The ratios of ``rounds`` (slowest state first, an even count) split in two, with the
    exact permutation p-value of the halves' log gap."""
    vals = _values(ratios, rounds)
    n = len(vals) // 2
    slow, fast = range(n), range(n, 2 * n)
    seen = _gap(vals, slow, fast)
    splits = [(a, [i for i in range(2 * n) if i not in a])
              for a in itertools.combinations(range(2 * n), n)]
    p = sum(_gap(vals, a, b) >= seen - 1e-12 for a, b in splits) / len(splits)
    return Halves(statistics.median(vals[i] for i in slow),
                  statistics.median(vals[i] for i in fast), p, 2 * n)


def _values(series: Sequence[float | None], rounds: Sequence[int]) -> list[float]:
    """``series`` at ``rounds``, which :func:`split_rounds` kept only where it has values."""
    return [v for i in rounds if (v := series[i]) is not None]


@dataclass(frozen=True)
class LayerRounds:
    """One layer's rounds: their states, and each searcher's final config over xgb's
    final config, round by round (a searcher whose final is another's is left out)."""

    seed: int
    layer: str
    states: tuple[float | None, ...]
    ratios: dict[str, tuple[float | None, ...]]

    @cached_property
    def rounds(self) -> list[int] | None:
        """The rounds to split (:func:`split_rounds`), computed once; callers must not
        change the list."""
        return split_rounds(self.states, *self.ratios.values())


def relabelled_p(rounds: Sequence[Sequence[int]],
                 total: Callable[[Sequence[Sequence[int]]], float],
                 seed: int = 0) -> tuple[float, float]:
    """(observed, p): ``total`` of each layer's rounds as measured, and the share of
    :data:`PERMUTATIONS` random relabellings (each layer's rounds shuffled, one shuffle per
    layer, shared by its pairs) whose ``total`` reaches it."""
    rng = random.Random(seed)
    observed = total(rounds)
    hits = 0
    for _ in range(PERMUTATIONS):
        orders = []
        for kept in rounds:
            order = list(kept)
            rng.shuffle(order)
            orders.append(order)
        hits += total(orders) >= observed - 1e-12
    return observed, hits / PERMUTATIONS


def pooled_p(layers: Sequence[LayerRounds], seed: int = 0) -> tuple[float, float]:
    """(observed, p): the summed log gap of every pair's halves, and the share of random
    relabellings of the rounds (one per layer, shared by its pairs, the same count per
    half) whose sum reaches it."""
    told = [(lr, rounds) for lr in layers if (rounds := lr.rounds) is not None and lr.ratios]
    if not told:
        return 0.0, 1.0

    def total(orders: Sequence[Sequence[int]]) -> float:
        out = 0.0
        for (lr, _), order in zip(told, orders, strict=True):
            n = len(order) // 2
            for ratios in lr.ratios.values():
                out += _gap(_values(ratios, order), range(n), range(n, 2 * n))
        return out

    return relabelled_p([rounds for _, rounds in told], total, seed)


def rho(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation of two series, 0 where it is undefined (a constant
    series)."""
    r = spearman(xs, ys)
    return 0.0 if math.isnan(r) else r


def rank_p(states: Sequence[float], ratios: Sequence[float], seed: int = 0) -> float:
    """One pair's own rank test: the share of :data:`PERMUTATIONS` random relabellings of
    ``ratios`` whose |rho| with ``states`` reaches the measured one (1 where rho is 0, as
    for a constant series). The ranks are taken once: a relabelled series' ranks are its
    ranks relabelled, so each draw is a Pearson correlation of two rank lists."""
    observed = abs(rho(states, ratios))
    if observed == 0.0:
        return 1.0
    ra, rb = ranks(states), ranks(ratios)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    da, db = [a - ma for a in ra], [b - mb for b in rb]
    scale = math.sqrt(sum(a * a for a in da) * sum(b * b for b in db))
    rng = random.Random(seed)
    hits = 0
    for _ in range(PERMUTATIONS):
        rng.shuffle(db)
        hits += abs(sum(a * b for a, b in zip(da, db))) / scale >= observed - 1e-12
    return hits / PERMUTATIONS


def rank_rounds(lr: LayerRounds) -> list[int] | None:
    """Every round of ``lr`` with a state and a value in every ratio series, in round
    order, none left out (:func:`told_rounds`); None with fewer than :data:`MIN_ROUNDS`."""
    return told_rounds(lr.states, *lr.ratios.values())


def pooled_rank_p(layers: Sequence[LayerRounds], seed: int = 0) -> tuple[float, float]:
    """(observed, p): the summed absolute Spearman correlation, over every pair, between
    the rounds' states and the pair's ratios (:func:`rank_rounds`), and the share of random
    relabellings (the ratios' rounds shuffled, one shuffle per layer shared by its pairs)
    whose sum reaches it."""
    told = [(lr, rounds, _values(lr.states, rounds)) for lr in layers
            if lr.ratios and (rounds := rank_rounds(lr))]
    if not told:
        return 0.0, 1.0

    def total(orders: Sequence[Sequence[int]]) -> float:
        out = 0.0
        for (lr, _, states), order in zip(told, orders, strict=True):
            for ratios in lr.ratios.values():
                out += abs(rho(states, _values(ratios, order)))
        return out

    return relabelled_p([rounds for _, rounds, _ in told], total, seed)


def layer_rounds(exp: rg.Experiment, seed: int, res: gt.TurnsResult) -> LayerRounds | None:
    """The searchers' finals over xgb's in one layer's ``--deployed`` timings of
    ``exp.deployed_rounds`` rounds (the newest when 0); None without those timings. The
    states come from the reported configs other than xgb's and the searchers' finals."""
    configs = gt.reported_configs(res)
    rounds = rg.remeasured_rounds(exp, res.task, configs,
                                  gt.turns_dir(exp, res.task) / "deployed.db",
                                  exp.deployed_rounds)
    if rounds is None or rg.REFERENCE not in rounds:
        return None
    by_key = {configs[n].key: lat for n, lat in rounds.items()}
    ref = configs[rg.REFERENCE]
    finals = {}
    for name in SEARCHERS:
        curve = res.curves.get(name)
        final = curve.reported_at()[-1] if curve is not None and curve.reported else None
        if final is not None and final.key not in {ref.key, *(f.key for f in finals.values())}:
            finals[name] = final
    compared = {ref.key, *(f.key for f in finals.values())}
    states = round_states([[1 / v if v else None for v in lat]
                           for k, lat in by_key.items() if k not in compared])
    ratios = {name: tuple(r / v if r and v else None
                          for r, v in zip(by_key[ref.key], by_key[f.key], strict=False))
              for name, f in finals.items()}
    return LayerRounds(seed, res.task.name, tuple(states), ratios)


def report(layers: Sequence[LayerRounds], header: str, command: str, rounds: int) -> str:
    rows, pairs, apart, rank_apart = [], 0, 0, 0
    for lr in layers:
        kept, every = lr.rounds, rank_rounds(lr)  # the same rounds, less an odd middle one
        if kept is None or every is None:
            continue
        states, xs = [lr.states[i] for i in kept], _values(lr.states, every)
        for name, ratios in lr.ratios.items():
            h = halves(ratios, kept)
            pairs += 1
            apart += h.p <= 0.05
            ys = _values(ratios, every)
            r, rp = rho(xs, ys), rank_p(xs, ys)
            rank_apart += rp <= 0.05
            rows.append(f"| {lr.layer} | {lr.seed} | {name} | {h.rounds} | "
                        f"{min(states):.3f}-{max(states):.3f} | {h.slow:.3f} | "
                        f"{h.fast:.3f} | {h.fast / h.slow:.3f} | {h.p:.3f} | {r:+.2f} | "
                        f"{rp:.3f} |")
    observed, p = pooled_p(layers)
    rank_observed, rank_pooled = pooled_rank_p(layers)
    which = f"the {rounds}-round timings" if rounds else "the newest timings"
    return "\n".join([
        "# Does the machine's state change two configs' speed ratio?", "", header, "",
        f"Command: `{command}`", "",
        f"Read from {which} of the configs the runs reported (`gga_turns.py --deployed`). "
        "A round's state is the median, over the layer's reported configs other than xgb's "
        "final and the searchers' finals, of the config's speed in that round over its own "
        "median; the rounds are split at the median state (the middle one left out when "
        "odd) and each half gives the median of the per-round speed of the searcher's "
        "final config over xgb's final config (ga left out where its final is gga's). p: "
        "the share of the equal splits of the same rounds whose halves differ at least as "
        "much (exact). rho: Spearman's rank correlation between the state and the ratio "
        "over every round with both (the middle one kept); p (rho): the share of "
        f"{PERMUTATIONS} random relabellings of those rounds' ratios whose |rho| reaches "
        "it.", "",
        "| layer | seed | searcher | rounds | states | ratio, slow half | ratio, fast half | "
        "fast / slow | p | rho | p (rho) |", "|---|---|---|---|---|---|---|---|---|---|---|",
        *rows, "",
        f"Pairs told: {pairs}; with p <= 0.05: {apart} by halves, {rank_apart} by ranks "
        f"(about {0.05 * pairs:.1f} expected by chance where the state changes no ratio).",
        f"Over all pairs, the summed absolute log of fast / slow is {observed:.3f}; random "
        "relabellings of each layer's rounds (one relabelling shared by the layer's pairs) "
        f"reach it in a share p = {p:.4f} of {PERMUTATIONS} draws.",
        f"By ranks over every round, the summed |rho| is {rank_observed:.3f}; random "
        "relabellings of each layer's rounds (one shared by its pairs) reach it in a share "
        f"p = {rank_pooled:.4f} of {PERMUTATIONS} draws.", ""])


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    ap = turns_parser(__doc__, "the --seed and --work of one set of turns (repeatable)")
    args = ap.parse_args(argv)
    if not args.turns:
        ap.error("give one or more --turns SEED=DIR: turns run with gga_turns.py --deployed")
    check_turns_dirs(ap, args.turns)
    args.report_only = True
    exp = gt.experiment(ap, args)
    layers = []
    for seed, work in args.turns:
        e = replace(exp, seed=seed, work=work)
        for job in rg.left_out(e):
            if (lr := layer_rounds(e, seed, gt.layer_turns(e, job.task))) is not None:
                layers.append(lr)
    if not any(lr.rounds for lr in layers):
        ap.error(f"no layer has --deployed timings of {MIN_ROUNDS} rounds or more there: "
                 "time the reported configs again with gga_turns.py --deployed 9")
    command = "python scripts/deployed_states.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    exp.out.mkdir(parents=True, exist_ok=True)
    path = exp.out / "deployed-states.md"
    path.write_text(report(layers, machine_header(), command, exp.deployed_rounds))
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
