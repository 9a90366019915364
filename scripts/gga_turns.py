"""Leave-one-out with the searchers taking turns on the machine: issue 4's time targets,
timed fairly on a machine whose speed drifts.

For each layer X: ``xgb`` (no history), ``gga`` (the xgb history of the other layers from
the base database) and ``ga`` (no history) tune X at the same time, taking turns batch
by batch (``scripts/turns.py``), each timed by its own clock: the seconds it held the
machine. A slow spell then costs each searcher about one batch, where runs made one after
the other may be a quarter apart in speed. The pruned variant of X likewise, with the
history of every layer, and each shape of a ``--shapes`` suite file (conv2d shapes of your
own, such as ``scripts/unseen_convs.json``). The base database must hold the xgb history
runs first (``reproduce_gga.py --history-only``).

Reported per layer: each searcher's best, the trials and own seconds it took to reach 95%
of xgb's best here, and the targets: gga >= 5x sooner than xgb and >= 3x sooner than ga,
gga's final best >= 0.98x of xgb's. Also whether each time target could be met on the
layer at all (not where xgb or ga reached the mark within 5x or 3x of the earliest first
result of any run), the same bound averaged over the layers (the ceiling: what a
searcher at the mark with each layer's first result would show; ``gga_ceiling.py`` reads
it from reports already written), and the speed-ups at 90% and 98% of xgb's best. Runs
resume (each searcher's database and clock file in ``WORK/<layer>/turns/``); a resumed
layer is no longer timed side by side for the part that ran before. ``--remeasure
ROUNDS`` then measures every searcher's final best config of the layer again, side by
side (``WORK/<layer>/turns/remeasure.db``); the report gives each final's median per-round
ratio to xgb's with a confidence interval (``scripts/paired.py``) and calls the final-best
target met, not met or undecided by it (more rounds than a finished remeasure measure
again). A run's best is the highest of hundreds of noisy
timings and so sits above what that config runs at; timed again side by side, the
bests compare fairly. ``--deployed ROUNDS`` goes further: it times again, side by side,
every config each run reported as its best at some trial (``WORK/<layer>/turns/deployed.db``)
and reports the targets on the curves of those configs' speeds, with xgb's final config as
the reference: what a user stopping each run at each trial would have deployed, free of
the winner's curse of the fastest timing. A report reads those timings as each config's
median over the rounds, or with ``--deployed-view paired`` as xgb's final config's median
times the median of the config's per-round speed over it (a spell of the machine that a
round's configs share drops out); ``--deployed-rounds N`` reads the timings of N rounds
where the configs were timed again more than once. Both also run after finished turns: the
same command again with the option measures only what is missing. ``--runoff K`` (with
``--remeasure``) has every finished run time its K fastest configs again side by side
(``tune --runoff``, after the turns, one run at a time), then times every run's best and
its run-off winner together (``WORK/<layer>/turns/runoff.db``): does the run-off lift what
a run reports, and gga's final over xgb's? ``--keep-workers`` gives each
searcher one measurer, warmed on a tiny task, for all its runs, as ``orchestrator tune``
keeps one for every workload of a command but the first: no run's clock then pays the
workers' TVM import (searchers whose runs are all finished get none). ``--batch-size N``
(8 by default, every searcher alike) sets the configs per turn: AutoTVM's tuners measure
as many configs at a time as the builder runs in parallel, by default the core count, so
``--batch-size 2`` on a 2-core machine is how AutoTVM's xgb would batch there; with 8, a
run that finds the mark in its first configs is timed at the end of their batch of 8.

    python scripts/gga_turns.py --smoke                         # CI: a small real run
    python scripts/gga_turns.py --layers r18_c1,r18_l1 --db /work/gga/base.db --work /work/gga/runs-full
    python scripts/gga_turns.py --shapes scripts/unseen_convs.json --no-pruned --db /work/gga/base.db \
        --work /work/gga/unseen --batch-size 2 --confirm 1 --keep-workers
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)
from paired import PairedRatio, paired_ratio  # noqa: E402
from speedup_mean import (  # noqa: E402
    MEANS_INTRO, TIME_TARGETS, LayerSpeedup, ceiling_line, layer_speedups, mean_speedup,
    means_lines)
from turns import Tick, read_clock, take_turns  # noqa: E402

from history.models import RunRow  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator import runoff as runoffs  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.space import Config  # noqa: E402
from orchestrator.task import Task  # noqa: E402

SEARCHERS = (rg.XGB, rg.Variant("gga", "gga"), rg.Variant("ga", "ga", uses_history=False))
DEFAULT_BUDGETS = {"xgb": 500, "gga": 300, "ga": 300}
TIMES = dict(TIME_TARGETS)  # how many times sooner than xgb and ga gga should reach the mark


def searchers(exp: rg.Experiment) -> tuple[rg.Variant, ...]:
    """xgb, gga and ga, then the ``--variant`` runs (each taking its turn after them)."""
    return (*SEARCHERS, *exp.extra)


def turns_dir(exp: rg.Experiment, task: Task) -> Path:
    return exp.work / (task.name or task.key_hash) / "turns"


def run_layer(exp: rg.Experiment, task: Task, history: Sequence[Task]) -> None:
    """The searchers of :func:`searchers` on ``task`` at once, taking turns (resumes)."""
    work = turns_dir(exp, task)
    for v in searchers(exp):
        db = v.history_db or exp.db
        base = HistoryStore.open(db, create=False)
        try:
            missing = [t.name for t in history if base.find_task(t) is None]
            if missing and v.uses_history:
                fix = (f"give --history-db {v.name} a database that holds every history layer"
                       if v.history_db else
                       "run reproduce_gga.py --history-only with the same --db first")
                raise SystemExit(f"error: {db} has no history of {', '.join(missing)}; {fix}")
            rg.seed_history(base, work / f"{v.name}.db", history if v.uses_history else [],
                            exp.target)
        finally:
            base.close()
    exp.log(f"{task.name}: {', '.join(f'{v.name} ({exp.budget(v.name)})' for v in searchers(exp))}, "
            "taking turns")

    def job(v: rg.Variant):  # the run-offs come after the turns, one at a time
        return lambda: rg.run(replace(exp, runoff=0), task, v, work / f"{v.name}.db")

    take_turns(exp.plugins, [(v.name, job(v), work / f"{v.name}.clock.jsonl")
                             for v in searchers(exp)])
    if exp.runoff > 0:
        for v in searchers(exp):  # each run is finished: the same run again holds its run-off
            rg.run(exp, task, v, work / f"{v.name}.db")
    if exp.remeasure <= 0 and exp.deployed <= 0:
        return
    res = layer_turns(exp, task)
    if exp.remeasure > 0:
        rg.remeasure_bests(exp, task, bests(res), work / "remeasure.db")
    if exp.remeasure > 0 and exp.runoff > 0:
        rg.remeasure_bests(exp, task, with_runoff_winners(exp, res), work / "runoff.db",
                           what="bests and run-off winners")
    if exp.deployed > 0:
        rg.remeasure_bests(replace(exp, remeasure=exp.deployed), task, reported_configs(res),
                           work / "deployed.db", what="configs the runs reported")


# -- reading the runs -----------------------------------------------------------------------

def own_seconds(ticks: Sequence[Tick], trials: int) -> tuple[float, ...]:
    """Seconds of a run's own clock after each of its first ``trials`` trials (the
    clock at the end of the turn that measured it)."""
    out, i = [], 0
    for n in range(1, trials + 1):
        while i < len(ticks) and ticks[i].trials < n:
            i += 1
        out.append(ticks[i].seconds if i < len(ticks) else float("nan"))
    return tuple(out)


@dataclass(frozen=True)
class TurnsResult:
    task: Task
    match: float
    curves: dict[str, rg.Curve]

    @property
    def reference(self) -> float:
        return self.curves[rg.REFERENCE].final if rg.REFERENCE in self.curves else 0.0

    def reach(self, name: str, mark: float = rg.MARK) -> tuple[int | None, float | None]:
        """(trials, own seconds) when ``name`` first reached ``mark`` x xgb's best."""
        c = self.curves.get(name)
        return c.reach(mark * self.reference) if c else (None, None)


def layer_turns(exp: rg.Experiment, task: Task) -> TurnsResult:
    work = turns_dir(exp, task)
    curves = {}
    for v in searchers(exp):
        c = rg.curve(work / f"{v.name}.db", task, v.searcher, exp.budget(v.name),
                     confirmed=exp.confirm > 0)
        curves[v.name] = replace(c, seconds=own_seconds(read_clock(work / f"{v.name}.clock.jsonl"),
                                                        len(c.best)))
    return TurnsResult(task, rg.match_score(exp, task, work / "gga.db"), curves)


def bests(res: TurnsResult) -> dict[str, Config]:
    """Every run's best config on the layer (xgb first)."""
    return {n: c.best_config for n, c in res.curves.items() if c.best_config is not None}


def again(exp: rg.Experiment, res: TurnsResult) -> tuple[dict[str, float], str] | None:
    """The layer's bests measured again (median GFLOPS per searcher) and when; None unless
    every best, xgb's included, was measured again in one run."""
    found = rg.remeasured(exp, res.task, bests(res), turns_dir(exp, res.task) / "remeasure.db")
    return found if found is not None and rg.REFERENCE in found[0] else None


def runoff_winners(exp: rg.Experiment, task: Task) -> dict[str, Config]:
    """Each run's run-off winner on the layer (``--runoff``): the config with the lowest
    median in the newest finished run-off of the task in the searcher's database."""
    out: dict[str, Config] = {}
    for v in searchers(exp):
        path = turns_dir(exp, task) / f"{v.name}.db"
        if not path.exists():
            continue
        store = HistoryStore.open(path, create=False)
        try:
            task_id = store.find_task(task)
            found = [] if task_id is None else store.runs(
                where=[RunRow.task_id == task_id, RunRow.searcher == runoffs.SEARCHER,
                       RunRow.status == "finished"], limit=1)
            if not found:
                continue
            won = runoffs.winner(runoffs.by_config(
                store.results(task_id, None, run_id=found[0].id)))
            if won is not None:
                out[v.name] = won
        finally:
            store.close()
    return out


RUNOFF = "+runoff"  # a run-off winner's name beside its run's best, e.g. gga+runoff


def with_runoff_winners(exp: rg.Experiment, res: TurnsResult) -> dict[str, Config]:
    """Every run's best (xgb first) and its run-off winner, as NAME+runoff."""
    return {**bests(res), **{f"{n}{RUNOFF}": c for n, c in runoff_winners(exp, res.task).items()}}


def reported_configs(res: TurnsResult) -> dict[str, Config]:
    """Every config a run of the layer reported as its best at some trial, by
    ``NAME@TRIAL``; ``xgb`` names xgb's final best (the reference)."""
    out = {f"{n}@{i + 1}": cfg for n, c in res.curves.items() for i, cfg in c.reported}
    final = res.curves[rg.REFERENCE].best_config if rg.REFERENCE in res.curves else None
    return {rg.REFERENCE: final, **out} if final is not None else out


# How a report reads the --deployed timings, said once for the help and the reports.
DEPLOYED_VIEWS = {
    "median": "a config's speed is the median of its rounds",
    "paired": ("a config's speed is xgb's final config's median speed times the median, "
               "over the rounds, of the config's speed over that config's in the same "
               "round, so a spell of the machine that every config of a round shares "
               "drops out"),
}


def deployed(exp: rg.Experiment, res: TurnsResult) -> TurnsResult | None:
    """The layer's turns as a user would have deployed them: each run's best-so-far
    after each trial is the speed, timed again side by side (``--deployed``), of the config
    the run reported then; xgb's best is its final config's. The curves need not rise: a
    run may switch to a config whose lucky timing hid a slower speed. None unless every
    reported config was timed again in one run.

    ``exp.deployed_view`` says how a config's speed is read from its rounds
    (:data:`DEPLOYED_VIEWS`; ``paired`` through ``paired.py``). ``exp.deployed_rounds`` > 0
    reads the timings of that many rounds where the configs were timed again more than
    once."""
    configs = reported_configs(res)
    path = turns_dir(exp, res.task) / "deployed.db"
    found = rg.remeasure_timings(exp, res.task, configs, path, exp.deployed_rounds)
    if found is None:
        return None
    speeds = found.gflops(res.task.flops)
    if set(speeds) != set(configs):
        return None
    by_key = {configs[name].key: g for name, g in speeds.items()}
    if exp.deployed_view == "paired":
        ref, ref_speed = found.latencies[rg.REFERENCE], speeds[rg.REFERENCE]
        by_key = {configs[name].key: ref_speed * p.median if (p := paired_ratio(lat, ref))
                  else 0.0 for name, lat in found.latencies.items()}
    curves = {n: replace(c, best=tuple(by_key[cfg.key] if cfg is not None else 0.0
                                       for cfg in c.reported_at()))
              for n, c in res.curves.items()}
    return TurnsResult(res.task, res.match, curves)


# -- the report -------------------------------------------------------------------------------

def first_result(res: TurnsResult) -> float | None:
    """The own seconds of the earliest first result of any run on the layer: set-up and
    one round of builds and timing. No searcher can reach the mark sooner."""
    firsts = [c.seconds[0] for c in res.curves.values() if c.seconds]
    return min(firsts) if firsts else None


def reachable(res: TurnsResult) -> dict[str, bool | None]:
    """Whether each time target could be met on the layer at all: even a searcher whose
    very first config reached the mark, at :func:`first_result`, needs xgb (or ga) to
    take 5x (3x) that long. None where it cannot be told."""
    floor = first_result(res)
    _, x = res.reach("xgb")
    _, a = res.reach("ga")
    return {
        "5x xgb": None if x is None or floor is None else x >= TIMES["xgb"] * floor,
        "3x ga": None if floor is None else (a is None or a >= TIMES["ga"] * floor),
    }


def ceiling_speedups(results: Sequence[TurnsResult], other: str) -> list[LayerSpeedup]:
    """Per layer, the :func:`first_result` against ``other``'s seconds to the mark (its
    seconds in all where it never reached it): the speed-up of a searcher at the mark
    with the layer's first result, the most any searcher could show there."""
    out = []
    for r in results:
        floor, c = first_result(r), r.curves.get(other)
        if floor is None or r.reference <= 0 or c is None or not c.seconds:
            continue
        _, o = r.reach(other)
        out.append(LayerSpeedup(r.task.name, floor, o if o is not None else c.seconds[-1],
                                other_never=o is None))
    return out


def ceiling_lines(results: Sequence[TurnsResult], name: str = "gga") -> list[str]:
    """Markdown list items: the ceilings over xgb and ga beside ``name``'s means."""
    return [ceiling_line(ceiling_speedups(results, other), other, target,
                         mean_speedup(layer_speedups(results, other, name)), name)
            for other, target in TIME_TARGETS]


OTHER_MARKS = (0.90, 0.98)


def speedup(res: TurnsResult, other: str, mark: float, name: str = "gga") -> str:
    """How many times sooner ``name`` reached ``mark`` x xgb's best than ``other`` did
    ("never" where only ``name`` reached it, "-" where it did not)."""
    _, g = res.reach(name, mark)
    _, o = res.reach(other, mark)
    if g is not None and o is None:
        return f"{other} never"
    return rg._ratio(o, g)


def verdict(res: TurnsResult, name: str = "gga") -> dict[str, bool | None]:
    """The three targets on one layer for ``name`` (gga, or a variant in its place;
    None where it cannot be told)."""
    _, g = res.reach(name)
    _, x = res.reach("xgb")
    _, a = res.reach("ga")
    final = res.curves[name].final if name in res.curves else 0.0
    return {
        "5x xgb": None if x is None else (g is not None and x >= TIMES["xgb"] * g),
        "3x ga": None if g is None and a is None
        else (g is not None and (a is None or a >= TIMES["ga"] * g)),
        "0.98 final": None if res.reference <= 0 else final >= rg.FINAL_TARGET * res.reference,
    }


def plot(res: TurnsResult, path: Path) -> None:
    """Best-so-far GFLOPS against each searcher's own seconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, c in res.curves.items():
        if c.best:
            ax.step(c.seconds, c.best, where="post", label=name)
    if res.reference > 0:
        ax.axhline(rg.MARK * res.reference, color="grey", linestyle="--", linewidth=0.8,
                   label=f"{rg.MARK:.0%} of xgb best")
    ax.set_xscale("log")
    ax.set_xlabel("own seconds (log scale)")
    ax.set_ylabel("best GFLOPS so far")
    ax.set_title(f"{res.task.name}, taking turns", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def side_of(p: PairedRatio) -> str:
    """``higher`` or ``lower`` where the interval lies wholly above or below 1, else
    ``undecided``."""
    return "higher" if p.low > 1.0 else "lower" if p.high < 1.0 else "undecided"


def paired_finals(exp: rg.Experiment, res: TurnsResult) -> dict[str, PairedRatio]:
    """Each run's final best over xgb's, round by round in the ``--remeasure`` run: the
    median of the per-round ratios and its confidence interval (empty without one)."""
    rounds = rg.remeasured_rounds(exp, res.task, bests(res),
                                  turns_dir(exp, res.task) / "remeasure.db")
    if not rounds or rg.REFERENCE not in rounds:
        return {}
    ref = rounds[rg.REFERENCE]
    return {n: p for n, lat in rounds.items()
            if n != rg.REFERENCE and (p := paired_ratio(lat, ref)) is not None}


def again_section(exp: rg.Experiment, results: Sequence[TurnsResult]) -> list[str]:
    """The final bests measured again (``--remeasure``), each over xgb's, with the
    interval the rounds give and the final-best verdict it decides (or leaves open)."""
    rows: list[str] = []
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    levels: list[float] = []
    for r in results:
        found = again(exp, r)
        if found is None:
            continue
        gflops, when = found
        ref = gflops[rg.REFERENCE]
        paired = paired_finals(exp, r)
        cells = []
        for n in gflops:
            if n == rg.REFERENCE:
                continue
            p = paired.get(n)
            if p is None:
                cells.append(f"{n} {gflops[n] / ref:.3f}")
                continue
            v = p.verdict(rg.FINAL_TARGET)
            verdicts[n][v] += 1
            levels.append(p.level)
            cells.append(f"{n} {p.text()} {v}")
        rows.append(f"| {r.task.name} | {r.reference:.1f} | {ref:.1f} | {'; '.join(cells)} "
                    f"| {when} |")
    if not rows:
        return []
    counts = [f"{n}: " + ", ".join(f"{k} on {c}" for k, c in sorted(v.items()))
              + f" of {sum(v.values())}" for n, v in verdicts.items()]
    return ["Final bests measured again side by side (`--remeasure`: every run's best config "
            "of the layer, one after the other, the order reversed every other round). A "
            "run's best is the highest of its noisy timings, and the machine may run faster "
            "or slower now than in the turns, so \"again\" can differ from the run. Each "
            "ratio is the median over the rounds of the run's config's speed over xgb's "
            "config's in the same round, with the interval that holds the true median with "
            f"probability {min(levels, default=0.0):.1%} or more (order statistics of the "
            "rounds' ratios); the "
            f"final-best target (>= {rg.FINAL_TARGET}) is met or not met when the whole "
            "interval is on one side of it, undecided when the interval straddles it:", "",
            "| layer | xgb best in its run | xgb again (median GFLOPS) | again, over xgb's | "
            "measured again (UTC) |", "|---|---|---|---|---|", *rows, "",
            "Measured again, the final-best target: " + "; ".join(counts) + ".", ""]


def runoff_section(exp: rg.Experiment, results: Sequence[TurnsResult]) -> list[str]:
    """The run-offs (``--runoff``): each run's winner over its own best, and gga's final
    over xgb's without and with the run-off, all from one remeasure of the layer's bests
    and winners side by side (layers without one left out)."""
    rows: list[str] = []
    verdicts: dict[str, Counter[str]] = {"bests": Counter(), "winners": Counter()}
    sides: dict[str, Counter[str]] = defaultdict(Counter)
    gains: dict[str, list[float]] = defaultdict(list)
    changed: Counter[str] = Counter()
    for r in results:
        named = with_runoff_winners(exp, r)
        ref_ro = f"{rg.REFERENCE}{RUNOFF}"
        if ref_ro not in named or f"gga{RUNOFF}" not in named:
            continue
        rounds = rg.remeasured_rounds(exp, r.task, named, turns_dir(exp, r.task) / "runoff.db")
        if not rounds:
            continue
        own = []
        for n in bests(r):
            p = paired_ratio(rounds.get(f"{n}{RUNOFF}", []), rounds[n])
            if p is None:
                continue
            if named[f"{n}{RUNOFF}"].key == named[n].key:
                own.append(f"{n} the same config")
                continue
            changed[n] += 1
            side = side_of(p)
            sides[n][side] += 1
            gains[n].append(p.median)
            own.append(f"{n} {p.text()} {side}")
        cells = []
        for kind, (gga, xgb) in (("bests", ("gga", rg.REFERENCE)),
                                 ("winners", (f"gga{RUNOFF}", ref_ro))):
            p = paired_ratio(rounds[gga], rounds[xgb])
            if p is None:
                cells.append("-")
                continue
            v = p.verdict(rg.FINAL_TARGET)
            verdicts[kind][v] += 1
            cells.append(f"{p.text()} {v}")
        rows.append(f"| {r.task.name} | {'; '.join(own)} | {cells[0]} | {cells[1]} |")
    if not rows:
        return []

    def counted(c: Counter[str]) -> str:
        return ", ".join(f"{k} on {n}" for k, n in sorted(c.items())) + f" of {sum(c.values())}"

    moved = "; ".join(
        f"{n}: another config won on {changed[n]} of {len(rows)} layers ({counted(sides[n])}"
        + (f"; geometric mean {statistics.geometric_mean(gains[n]):.3f}" if gains[n] else "")
        + ")" for n in changed) or "every run's best won its run-off"
    return ["## The run-offs (`--runoff`)", "",
            "After the turns each run timed its "
            + (f"{exp.runoff} fastest configs again side by side ({exp.runoff_rounds} rounds; "
               if exp.runoff else "fastest configs again side by side (as many and in as many "
               "rounds as the measuring command said; ")
            + "`tune --runoff`) and reports the one with the lowest median there. Then every run's best and its run-off winner were timed "
            "again together (`--remeasure` rounds, `runoff.db`). Each ratio is the median of "
            "the per-round speed ratios with its interval; the winner over the run's own best "
            "is higher or lower where the interval excludes 1:", "",
            "| layer | run-off winner over the run's best | gga / xgb, the runs' bests | "
            "gga / xgb, the run-off winners |", "|---|---|---|---|", *rows, "",
            f"Picks the run-off changed: {moved}.", "",
            f"The final-best target (>= {rg.FINAL_TARGET}) in these rounds: the runs' bests "
            f"{counted(verdicts['bests'])}; the run-off winners {counted(verdicts['winners'])}.",
            ""]


def variants_again(exp: rg.Experiment, results: Sequence[TurnsResult]) -> list[str]:
    """Each variant's final best over gga's, from the ``--remeasure`` rounds that timed
    both side by side: the median of the per-round ratios with its interval."""
    rows: list[str] = []
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    levels: list[float] = []
    for r in results:
        rounds = rg.remeasured_rounds(exp, r.task, bests(r), turns_dir(exp, r.task) / "remeasure.db")
        if not rounds or "gga" not in rounds:
            continue
        for v in exp.extra:
            p = paired_ratio(rounds[v.name], rounds["gga"]) if v.name in rounds else None
            if p is None:
                continue
            side = side_of(p)
            counts[v.name][side] += 1
            levels.append(p.level)
            rows.append(f"| {r.task.name} | {v.name} | {p.text()} | {side} |")
    if not rows:
        return []
    summary = "; ".join(f"{n}: " + ", ".join(f"{k} on {c}" for k, c in sorted(v.items()))
                        + f" of {sum(v.values())}" for n, v in counts.items())
    return ["Each variant's final best over gga's, timed side by side in the `--remeasure` "
            "rounds (median of the per-round ratios [interval, at "
            f"{min(levels):.1%} or more]; higher or lower where the whole interval is on "
            "one side of 1):", "", "| layer | variant | final again / gga's | |",
            "|---|---|---|---|", *rows, "", f"Variants over gga, timed again: {summary}.", ""]


def deployed_section(found: Sequence[tuple[TurnsResult, TurnsResult]], view: str = "median",
                     rounds: int = 0) -> list[str]:
    """The targets on the configs the runs reported, timed again (``--deployed``): each
    layer's turns with :func:`deployed`'s view of them (layers without it left out), read
    as ``view`` from the timings of ``rounds`` rounds (0: the newest)."""
    if not found:
        return []
    counts = ", ".join(f"{r.task.name} {len({c.key for c in reported_configs(r).values()})}"
                       for r, _ in found)
    return ["## The configs the runs reported, timed again (`--deployed`)", "",
            "A run's best-so-far above is a timing, the one that picked its config (or its "
            "confirming re-timing), and the fastest of many noisy timings sits above what "
            "its config runs at; xgb's best, the mark's reference, is the fastest of the "
            "most. Here every config a run reported as its best at some trial was timed "
            "again, all of a layer's side by side in rounds (the order reversed every other "
            "round), and each run's curve is the speed of the config "
            "it reported after each trial: what a user stopping the run then would deploy. "
            "The reference is xgb's final config, timed the same way. Curves may fall where "
            "a run switched to a config whose lucky timing hid a slower speed. Configs timed "
            f"again: {counts}.", "", deployed_view_line(view, rounds), "",
            *targets_table([d for _, d in found]),
            "| layer | searcher | final config again, over xgb's | own seconds to 95% |",
            "|---|---|---|---|",
            *[f"| {d.task.name} | {n} | "
              f"{f'{c.final / d.reference:.3f}' if d.reference > 0 else '-'} | "
              f"{rg._fmt(d.reach(n)[1])} |" for _, d in found for n, c in d.curves.items()],
            ""]


def deployed_view_line(view: str, rounds: int = 0) -> str:
    """A sentence saying how a report read the ``--deployed`` timings."""
    which = (f"the timings of the {rounds}-round run" if rounds > 0
             else "the newest run of timings")
    return f"{view.capitalize()} view (`--deployed-view {view}`, {which}): {DEPLOYED_VIEWS[view]}."


def measured_period(results: Sequence[TurnsResult]) -> tuple[str, str] | None:
    """The first and last measurement of any run of ``results`` (UTC, ISO); None if none."""
    periods = [c.period for r in results for c in r.curves.values() if c.period]
    if not periods:
        return None
    return min(p[0] for p in periods), max(p[1] for p in periods)


def apart_lines(results: Sequence[TurnsResult]) -> list[str]:
    """A paragraph naming the runs measured wholly before or after their layer's xgb run
    (a run added to finished turns later): they did not take turns with it."""
    apart = []
    for r in results:
        ref = r.curves.get(rg.REFERENCE)
        if ref is None or not ref.period:
            continue
        for name, c in r.curves.items():
            if name != rg.REFERENCE and c.period and (c.period[0] > ref.period[1]
                                                      or c.period[1] < ref.period[0]):
                apart.append(f"{r.task.name} {name} ({_hm(c.period)}; xgb {_hm(ref.period)})")
    if not apart:
        return []
    return ["Not in turns: these runs were measured wholly before or after their layer's xgb "
            "run (added to finished turns later), so their own seconds and xgb's come from "
            "different spells of a machine whose speed drifts, and their speed-ups below are "
            "not side by side. The timings side by side (`--remeasure`, `--deployed`) compare "
            "them in one spell: " + "; ".join(apart) + ".", ""]


def _hm(period: tuple[str, str]) -> str:
    """``2026-11-27 05:03–05:08 UTC`` from two ISO times."""
    a, b = (t.replace("T", " ")[:16] for t in period)
    return f"{a}–{b[11:] if a[:10] == b[:10] else b} UTC"


def confirm_section(exp: rg.Experiment, results: Sequence[TurnsResult]) -> list[str]:
    """With ``--confirm``: each run's re-timings, and how far its fastest first timing sits
    above its confirmed best (the winner's curse that confirming removes)."""
    if not exp.confirm:
        return []
    rows: list[str] = []
    gaps: dict[str, list[float]] = {}
    for r in results:
        for name, c in r.curves.items():
            if not c.best:
                continue
            gap = c.fastest_first / c.final if c.final > 0 else None
            if gap is not None:
                gaps.setdefault(name, []).append(gap)
            rows.append(f"| {r.task.name} | {name} | {len(c.best)} | {c.retimed} | "
                        f"{rg._fmt(c.fastest_first)} | {rg._fmt(c.final)} | "
                        f"{rg._fmt(gap, '.3f')} |")
    if not rows:
        return []
    medians = "; ".join(f"{n} {statistics.median(g):.3f} (over {len(g)} layers)"
                        for n, g in gaps.items())
    return ["Re-timings and first timings (`--confirm`): \"re-timings\" counts the extra "
            "timings of each run (not trials); \"fastest first timing\" is the best GFLOPS "
            "a run would report without confirming, and \"first / confirmed\" how far it "
            "sits above the confirmed best:", "",
            "| layer | searcher | trials | re-timings | fastest first timing | confirmed best "
            "| first / confirmed |", "|---|---|---|---|---|---|---|", *rows, "",
            f"Median first / confirmed: {medians}.", ""]


def met_counts(results: Sequence[TurnsResult], name: str = "gga",
               reachable_only: bool = False) -> dict[str, tuple[int, int]]:
    """For each target, on how many layers ``name`` met it and on how many it could be
    told (:func:`verdict`); ``reachable_only``: the time targets, on the layers where
    they could be met at all (:func:`reachable`)."""
    keys = ("5x xgb", "3x ga") if reachable_only else ("5x xgb", "3x ga", "0.98 final")
    met = {k: (0, 0) for k in keys}
    for r in results:
        can = reachable(r)
        for k, ok in verdict(r, name).items():
            if ok is None or (reachable_only and not can.get(k)):
                continue
            got, n = met[k]
            met[k] = (got + int(ok), n + 1)
    return met


def counts_line(results: Sequence[TurnsResult], names: Sequence[str]) -> str:
    """The targets each of ``names`` met, in gga's terms, one after the other."""
    return "; ".join(f"{name}: " + ", ".join(f"{k} {ok} of {n}" for k, (ok, n)
                                              in met_counts(results, name).items())
                     for name in names) + "."


def targets_table(results: Sequence[TurnsResult]) -> list[str]:
    """Markdown: each layer's speed-ups and final over xgb, then how many targets
    were met, in all and where they could be."""
    lines = ["| layer | gga / xgb seconds to 95% | speed-up (>= 5x) | ga seconds | "
             "speed-up over ga (>= 3x) | gga final / xgb (>= 0.98) | first result (s) | "
             "reachable: 5x xgb, 3x ga |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        _, g = r.reach("gga")
        _, x = r.reach("xgb")
        _, a = r.reach("ga")
        can = reachable(r)
        final = f"{r.curves['gga'].final / r.reference:.3f}" if r.reference > 0 else "-"
        png = f"turns-{r.task.name}.png"
        over_ga = "ga never reached it" if a is None and g is not None else rg._ratio(a, g)
        yes_no = ", ".join("-" if can[k] is None else ("yes" if can[k] else "no")
                           for k in ("5x xgb", "3x ga"))
        lines.append(f"| [{r.task.name}]({png}) | {rg._fmt(g)} / {rg._fmt(x)} | {rg._ratio(x, g)} | "
                     f"{rg._fmt(a)} | {over_ga} | {final} | {rg._fmt(first_result(r))} | "
                     f"{yes_no} |")
    lines += ["", "Targets met: " + "; ".join(
        f"{k}: {ok} of {n}" for k, (ok, n) in met_counts(results).items()) + " (a layer where xgb never "
        "reached its own mark, or neither gga nor ga did, is not counted; ga that never "
        "reached it counts as beaten).", "",
        "Where they could be met: " + "; ".join(
            f"{k}: {ok} of {n}" for k, (ok, n) in met_counts(results, reachable_only=True).items())
        + ". \"first result\" "
        "is the earliest own second at which any run on the layer had a result (its set-up "
        "and one round of builds and timing); a time target is out of reach on a layer "
        "where xgb (ga) reached the mark sooner than 5x (3x) that, since no searcher can "
        "reach the mark before its first result. These layers are counted above and "
        "not here.", "",
        MEANS_INTRO, "", *means_lines(results), *ceiling_lines(results), ""]
    return lines


def history_counts(db: Path, exp: rg.Experiment) -> dict[str, int]:
    """Successful measurements of each history layer on this target in ``db``."""
    if not db.exists():
        return {}
    base = HistoryStore.open(db, create=False)
    try:
        target_id = base.find_target(exp.target)
        counts: dict[str, int] = {}
        for t in exp.history_layers:
            task_id = base.find_task(t)
            if task_id is not None and target_id is not None:
                counts[t.name or t.key_hash] = len(base.results(task_id, target_id, ok_only=True))
    finally:
        base.close()
    return counts


def history_lines(exp: rg.Experiment) -> list[str]:
    """What the base database holds of the history layers on this target: the history gga
    is seeded from (a layer left out sees the others'); the same for each variant with a
    base database of its own (``--history-db``)."""
    lines: list[str] = []
    for db, who in [(exp.db, f"History (`--db {exp.db}`)"),
                    *((v.history_db, f"{v.name}'s history (`--history-db {v.name}={v.history_db}`)")
                      for v in exp.extra if v.history_db)]:
        counts = history_counts(db, exp)
        if not counts:
            continue
        low, high = min(counts.values()), max(counts.values())
        each = f"{low}" if low == high else f"{low}–{high}"
        lines += [f"{who}: {sum(counts.values())} successful measurements of "
                  f"{len(counts)} layers on this target, {each} per layer; each layer left out "
                  "is seeded with the other layers' measurements"
                  + (", its pruned variant with every layer's" if exp.pruned else "")
                  + (", each shape of `--shapes` with every layer's" if exp.shapes else "")
                  + ".", ""]
    return lines


def report(exp: rg.Experiment, results: Sequence[TurnsResult], header: str, command: str) -> Path:
    lines = ["# GGA leave-one-out, searchers taking turns on the machine", "", header, "",
             f"Command: `{command}`", "",
             "xgb, gga and ga tune each layer at the same time, taking turns batch by batch; "
             "seconds are each searcher's own clock (the time it held the machine: setup, "
             "search, builds, timing, recording). The 95% mark is of xgb's best in the same "
             f"turns. Budgets: {', '.join(f'{v.name} {exp.budget(v.name)}' for v in searchers(exp))} "
             f"trials; seed {exp.seed}; batches of {exp.batch_size}"
             + (f"; measurer {exp.measurer} with "
                f"{', '.join(f'{k}={v}' for k, v in exp.measurer_options.items())}"
                if exp.measurer_options else "") + ".", ""]
    if exp.keep_workers:
        lines += ["Workers kept (`--keep-workers`): each searcher had one measurer for all its "
                  "runs, its build and run workers started and warmed on a tiny dense task "
                  "before the first layer, off every clock, as `orchestrator tune` keeps them "
                  "for every workload of a command but the first. No run's seconds include "
                  "the workers' TVM import or the runner's sentinel build.", ""]
    if exp.confirm:
        lines += [f"Confirmed bests (`--confirm {exp.confirm}`): every run timed each config "
                  f"whose first timing beat its confirmed best {exp.confirm} more time(s), on its "
                  "own clock, and a config counts towards best-so-far only by the median of "
                  "those later timings, not by the timing that picked it. Re-timings are not "
                  "trials; their seconds are in the clocks.", ""]
    lines += history_lines(exp)
    when = measured_period(results)
    if when:
        lines += [f"Measured from {when[0]} to {when[1]} UTC.", ""]
    lines += apart_lines(results)
    lines += ["| layer | match | searcher | trials | best GFLOPS | / xgb | trials to 95% | "
              "own seconds to 95% | own seconds in all |", "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for name, c in r.curves.items():
            t, s = r.reach(name)
            total = c.seconds[-1] if c.seconds else None
            rel = f"{c.final / r.reference:.3f}" if r.reference > 0 else "-"
            lines.append(f"| {r.task.name} | {r.match:.3f} | {name} | {len(c.best)} | "
                         f"{rg._fmt(c.final)} | {rel} | {rg._fmt(t, 'd')} | {rg._fmt(s)} | "
                         f"{rg._fmt(total)} |")
    lines += ["", *targets_table(results),
              "The same speed-ups at other marks (a layer's ratio at 95% can turn on one "
              "measurement a percent either side of the mark):", "",
              "| layer | " + " | ".join(f"vs {o} at {m:.0%}" for m in OTHER_MARKS
                                       for o in ("xgb", "ga"))
              + " |", "|---|" + "---|" * (2 * len(OTHER_MARKS))]
    for r in results:
        lines.append(f"| {r.task.name} | " + " | ".join(
            speedup(r, o, m) for m in OTHER_MARKS for o in ("xgb", "ga")) + " |")
    lines.append("")
    lines += confirm_section(exp, results)
    lines += again_section(exp, results)
    found = [(r, d) for r in results if (d := deployed(exp, r)) is not None]
    lines += deployed_section(found, exp.deployed_view, exp.deployed_rounds)
    lines += runoff_section(exp, results)
    if exp.extra:
        lines += ["Variants, taking their turns beside the three above unless named under "
                  "\"Not in turns\" (seconds to 95% of xgb's best; speed-ups as for gga):", "",
                  "| layer | variant | trials | own seconds to 95% | vs xgb | vs ga | vs gga | "
                  "final / xgb | final / gga |", "|---|---|---|---|---|---|---|---|---|"]
        for r in results:
            for v in exp.extra:
                c = r.curves.get(v.name)
                if c is None or not c.best:
                    continue
                _, sec = r.reach(v.name)
                ratios = [speedup(r, o, rg.MARK, v.name) for o in ("xgb", "ga", "gga")]
                gga_final = r.curves["gga"].final  # gga is one of SEARCHERS, always run
                lines.append(
                    f"| {r.task.name} | {v.name} | {len(c.best)} | {rg._fmt(sec)} | "
                    f"{' | '.join(ratios)} | "
                    f"{f'{c.final / r.reference:.3f}' if r.reference > 0 else '-'} | "
                    f"{f'{c.final / gga_final:.3f}' if gga_final > 0 else '-'} |")
        names = ["gga", *(v.name for v in exp.extra)]
        lines += ["", "The targets each met in the runs, the variants in gga's place: "
                  + counts_line(results, names), "",
                  "Their speed-ups averaged over the layers, in the runs:", "",
                  *[line for n in names for line in means_lines(results, n)]]
        if found:
            deployed_results = [d for _, d in found]
            lines += ["", "The same on the configs the runs reported, timed again "
                      f"(`--deployed`, {len(found)} layers): "
                      + counts_line(deployed_results, names), "",
                      *[line for n in names for line in means_lines(deployed_results, n)]]
        lines.append("")
        lines += variants_again(exp, results)
    exp.out.mkdir(parents=True, exist_ok=True)
    for r in results:
        plot(r, exp.out / f"turns-{r.task.name}.png")
    path = exp.out / "gga-turns.md"
    path.write_text("\n".join(lines))
    return path


# -- command line -----------------------------------------------------------------------------

def add_turns_arguments(ap: argparse.ArgumentParser) -> None:
    """This script's options (``gga_seeds.py`` reads turns made with them)."""
    rg.add_run_arguments(ap)
    ap.add_argument("--budget", action="append", default=[], metavar="SEARCHER=TRIALS",
                    help="trials of xgb, gga, ga or a variant [xgb=500, gga=300, ga=300, "
                         "a variant as gga; smoke 16 each]")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="NAME=SEARCHER[:KEY=VALUE,...]",
                    help="also run a searcher with other options in the same turns, with "
                         "the history, e.g. gga-refresh=gga:refresh=3 (repeatable)")
    ap.add_argument("--history-db", action="append", default=[], metavar="VARIANT=DB",
                    help="seed the variant VARIANT's history from the database DB rather "
                         "than --db, e.g. one that also holds other searchers' runs of the "
                         "history layers (repeatable)")
    ap.add_argument("--remeasure", type=int, default=0, metavar="ROUNDS",
                    help="after each layer's turns, measure every run's best config again, "
                         "ROUNDS rounds side by side [0: off]")
    ap.add_argument("--deployed", type=int, default=0, metavar="ROUNDS",
                    help="after each layer's turns, measure every config each run reported "
                         "as its best at some trial again, ROUNDS rounds side by side, and "
                         "report the targets on those timings [0: off]")
    ap.add_argument("--deployed-view", choices=tuple(DEPLOYED_VIEWS), default="median",
                    help="how a report reads the --deployed timings: "
                         + "; ".join(f"{v}: {m}" for v, m in DEPLOYED_VIEWS.items())
                         + " [%(default)s]")
    ap.add_argument("--deployed-rounds", type=int, default=0, metavar="ROUNDS",
                    help="read the --deployed timings of exactly ROUNDS rounds, where the "
                         "configs were timed again more than once [0: the newest]")
    ap.add_argument("--runoff", type=int, default=0, metavar="K",
                    help="after each layer's turns, every run times its K fastest configs "
                         "again side by side (tune --runoff), and with --remeasure the runs' "
                         "bests and run-off winners are timed together [0: off]")
    ap.add_argument("--runoff-rounds", type=int, default=5, metavar="ROUNDS",
                    help="rounds of each run-off (tune --runoff-rounds) [5]")
    ap.add_argument("--confirm", type=int, default=0, metavar="N",
                    help="every run times each new best N times more and counts only those "
                         "timings (tune --confirm) [0: off]")
    ap.add_argument("--measurer-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of every run's local measurer, e.g. guard=0.25 "
                         "(repeatable)")
    ap.add_argument("--keep-workers", action="store_true",
                    help="give each searcher one measurer for all its runs, its workers warmed "
                         "on a tiny task first, as orchestrator tune keeps them for every "
                         "workload of a command but the first [off: a new measurer per run]")
    ap.add_argument("--smoke", action="store_true",
                    help="CI smoke test: r18_l4ds against r18_l3ds's history, 16 trials each")


def experiment(ap: argparse.ArgumentParser, args: argparse.Namespace) -> rg.Experiment:
    """The turns the options of :func:`add_turns_arguments` describe (exits on bad ones)."""
    from orchestrator.manager import load_plugins

    if args.confirm < 0:
        ap.error(f"--confirm takes a number of re-timings >= 0, got {args.confirm}")
    for flag, rounds in (("--remeasure", args.remeasure), ("--deployed", args.deployed)):
        if rounds < 0:
            ap.error(f"{flag} takes a number of rounds >= 0, got {rounds}")
        if rounds and args.report_only:
            ap.error(f"{flag} measures and --report-only does not: give one of them "
                     "(a report shows what the databases hold)")

    if args.deployed_rounds < 0:
        ap.error(f"--deployed-rounds takes a number of rounds >= 0, got {args.deployed_rounds}")
    if args.deployed_rounds and args.deployed and args.deployed_rounds != args.deployed:
        ap.error(f"--deployed {args.deployed} times the configs in {args.deployed} rounds, "
                 f"and --deployed-rounds {args.deployed_rounds} reads other timings: give "
                 "one of them")
    if args.runoff < 0 or args.runoff_rounds <= 0:
        ap.error(f"--runoff takes K >= 0 and --runoff-rounds ROUNDS > 0, got {args.runoff} "
                 f"and {args.runoff_rounds}")
    if args.runoff and (args.report_only or not args.remeasure):
        ap.error("--runoff measures, and compares its winners in the --remeasure rounds: "
                 "give it with --remeasure ROUNDS and without --report-only")

    extra = rg.parse_variants(ap, args.variant, taken={v.name for v in SEARCHERS})
    for item in args.history_db:
        name, sep, path = item.partition("=")
        found = [i for i, v in enumerate(extra) if v.name == name]
        if not sep or not path:
            ap.error(f"--history-db takes VARIANT=DB, got {item!r}")
        if found and extra[found[0]].history_db is not None:
            ap.error(f"--history-db names {name!r} twice; give each variant one database")
        if not found:
            ap.error(f"--history-db names {name!r}, which no --variant defines; define it "
                     "with --variant first")
        if not Path(path).is_file():
            ap.error(f"--history-db {name}: {path} does not exist; give a history database "
                     "file")
        extra[found[0]] = replace(extra[found[0]], history_db=Path(path))
    budgets = {v.name: (16 if args.smoke else DEFAULT_BUDGETS.get(v.name, DEFAULT_BUDGETS["gga"]))
               for v in (*SEARCHERS, *extra)}
    for k, val in rg.parse_options(args.budget).items():
        if k not in budgets or not isinstance(val, int) or val <= 0:
            ap.error(f"--budget takes SEARCHER=TRIALS with SEARCHER one of "
                     f"{', '.join(budgets)} and TRIALS > 0, got {k}={val}")
        budgets[k] = val
    layers, history = rg.chosen_layers(ap, args)
    db, work, out = rg.run_paths(args)
    plugins = load_plugins()
    target = rg.checked_target(ap, args, plugins)
    measurer_options = rg.parse_options(args.measurer_opt)
    try:  # a bad option is an error now, not in every run's thread later
        plugins.create("measurer", args.measurer, **measurer_options).close()
    except OrchestratorError as exc:
        ap.error(f"--measurer-opt (measurer {args.measurer}): {exc}")
    return rg.Experiment(
        layers=layers, history_layers=history, trials=max(budgets.values()), budgets=budgets,
        db=db, work=work, out=out, target=target, plugins=plugins,
        measurer=args.measurer, space_generator=args.space,
        space_options=rg.parse_options(args.space_opt),
        searcher_options={k: dict(v) for k, v in (rg.SMOKE_OPTIONS if args.smoke else {}).items()},
        seed=args.seed, pruned=not args.no_pruned, shapes=rg.chosen_shapes(ap, args),
        extra=tuple(extra), remeasure=args.remeasure,
        deployed=args.deployed, deployed_view=args.deployed_view,
        deployed_rounds=args.deployed_rounds, keep_workers=args.keep_workers, runoff=args.runoff,
        runoff_rounds=args.runoff_rounds, confirm=args.confirm, measurer_options=measurer_options,
        batch_size=args.batch_size)


def runs_left(exp: rg.Experiment, jobs: Sequence[rg.LeftOut]) -> set[str]:
    """The searchers with trials left to measure on some layer of ``jobs``: a finished run
    measures nothing when the command runs again (to time its configs again, say)."""
    return {v.name for job in jobs for v in searchers(exp)
            if len(rg.curve(turns_dir(exp, job.task) / f"{v.name}.db", job.task, v.searcher,
                            exp.budget(v.name)).best) < exp.budget(v.name)}


@contextmanager
def kept_workers(exp: rg.Experiment, only: set[str] | None = None) -> Iterator[rg.Experiment]:
    """``exp`` with one warmed measurer per searcher (``--keep-workers``; of the searchers
    in ``only`` when given), closed on the way out; ``exp`` itself without the option."""
    if not exp.keep_workers:
        yield exp
        return
    from warm import warm_measurer

    measurers: dict[str, Any] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="gga-turns-warm-") as d:
            for v in searchers(exp):
                if only is not None and v.name not in only:
                    continue
                exp.log(f"warming {v.name}'s measurer")
                measurers[v.name] = warm_measurer(Path(d), options=exp.options(v),
                                                  plugins=exp.plugins, target=exp.target,
                                                  name=f"warm_{v.name}")
        yield replace(exp, measurers=measurers)
    finally:
        for m in measurers.values():
            m.close()


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_turns_arguments(ap)
    args = ap.parse_args(argv)
    exp = experiment(ap, args)
    db, budgets = exp.db, exp.budgets
    jobs = rg.left_out(exp)
    if not args.report_only:
        if not args.smoke and not db.exists():
            ap.error(f"{db} does not exist: run reproduce_gga.py --history-only --db {db} first")
        if args.smoke:  # the smoke run measures its own small history
            rg.run_all(replace(exp, trials=budgets["xgb"], budgets={"xgb": budgets["xgb"]},
                               confirm=0), history_only=True)
        with kept_workers(exp, runs_left(exp, jobs) if exp.keep_workers else None) as exp:
            for job in jobs:
                run_layer(exp, job.task, job.history)
    results = [layer_turns(exp, job.task) for job in jobs]
    command = "python scripts/gga_turns.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    path = report(exp, results, machine_header(), command.strip())
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
