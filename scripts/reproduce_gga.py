"""Leave-one-out reproduction of history-driven tuning (GGA and TL, Mu et al.) on the
ResNet-18 convolutions of the built-in suite (group ``resnet18_conv``).

1. Every layer involved is tuned once with ``xgb`` (AutoTVM's XGBoost tuner, no
   history) into the base history database ``--db``. These runs are both the history
   and the ``xgb`` reference: "95%" below means 95% of the best GFLOPS xgb found with
   its whole budget.
2. Each evaluated layer X is then tuned with ``gga``, ``tl``, ``tl`` without filter,
   ``ga`` and ``fallback``, each in its own database seeded with the base history of the
   OTHER layers (so no searcher sees X's measurements by xgb or by another searcher).
3. A "pruned" X' (odd channel counts near C-3 and K-3 that share no factor with the
   powers of two of the suite, see :func:`pruned`) is tuned the same way with the whole
   base history, and with ``xgb`` as reference.
4. ``--shapes FILE`` adds shapes of your own (a suite file of conv2d workloads, as
   ``orchestrator tune --suite`` reads): each is tuned as a pruned variant is, with the
   whole base history and ``xgb`` as reference. With ``--shapes`` and no ``--layers``, no
   ResNet-18 layer is left out: only the shapes are tuned.

Reported per layer: best GFLOPS, trials and wall seconds to reach the 95% mark, the
area under the best-so-far curve (mean of best-so-far / xgb best over the budget), the
match score the ``auto`` dispatcher would see, and a PNG of best-so-far vs trials. Over all
layers: gga's speed-ups over xgb and ga averaged as the paper averages them
(``speedup_mean.py``).

``--variant NAME=SEARCHER:KEY=VALUE,...`` adds a searcher with other options (in its own
databases, reported beside the others). ``--remeasure ROUNDS`` measures every searcher's
final best config of a layer again, side by side, into ``WORK/<layer>/remeasure.db``:
the xgb reference may be days older than the other runs, and a shared machine is not
equally fast on every day.

Every measurement stays in the databases: rerunning the same command measures nothing
again (runs resume; a larger ``--trials`` continues them), so the full experiment can be
spread over several invocations. Wall seconds are taken from the measurements' commit
times relative to the run's start, so an interrupted and resumed run includes the gap.

    python scripts/reproduce_gga.py --smoke                      # minutes: CI smoke test
    python scripts/reproduce_gga.py --layers r18_l2,r18_l3 --trials 48 --db runs/gga/base.db
    python scripts/reproduce_gga.py --trials 500 --db runs/gga/base.db   # many hours
    python scripts/reproduce_gga.py --history-only --trials 500 --db runs/gga/base.db  # step 1
    python scripts/reproduce_gga.py --layers r18_l2 --db runs/gga/base.db \
        --variant gga-tasks=gga:seeding=tasks --remeasure 5
    python scripts/reproduce_gga.py --shapes my-convs.json --no-pruned --db runs/gga/base.db
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shlex
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))
from script_main import exit_status  # noqa: E402

from sqlmodel import Session, select  # noqa: E402

from history.models import MeasurementRow, RunRow, TaskRow  # noqa: E402
from history.similarity import best_match_score  # noqa: E402
from speedup_mean import MARK, MEANS_INTRO, means_lines  # noqa: E402
from variant_spec import parse_options, split_variant  # noqa: E402
from history.store import HistoryStore, Record  # noqa: E402
from orchestrator.jsonkey import canonical_json  # noqa: E402
from orchestrator.loop import TuneOptions, build_space, tune  # noqa: E402
from orchestrator.manager import Plugins  # noqa: E402
from orchestrator import confirm  # noqa: E402
from orchestrator.result import MeasureResult, MeasureStatus  # noqa: E402
from orchestrator.runoff import measure_interleaved  # noqa: E402
from orchestrator.space import Config, divisors  # noqa: E402
from orchestrator.suite import read_suite, select as select_tasks  # noqa: E402
from orchestrator.target import TargetInfo  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from plugins.history_search.auto import DEFAULT_THRESHOLD, chosen_flow  # noqa: E402

GROUP = "resnet18_conv"
REFERENCE = "xgb"
FINAL_TARGET = 0.98  # gga's final best over xgb's, the third target


@dataclass(frozen=True)
class Variant:
    """One searcher setting compared on a layer."""

    name: str
    searcher: str
    options: dict[str, Any] = field(default_factory=dict)
    uses_history: bool = True
    # a base database of its own to seed the history from (gga_turns.py --history-db);
    # None: the experiment's --db
    history_db: Path | None = None


VARIANTS: tuple[Variant, ...] = (
    Variant("gga", "gga"),
    Variant("tl", "tl"),
    Variant("tl-nofilter", "tl", {"filter": False}),
    Variant("ga", "ga", uses_history=False),
    Variant("fallback", "fallback"),
)
XGB = Variant(REFERENCE, "xgb", uses_history=False)
# Smaller plans and populations so that a few dozen trials still show every mechanism.
SMOKE_OPTIONS: dict[str, dict[str, Any]] = {
    "xgb": {"plan_size": 8, "sa_iters": 100, "sa_chains": 64},
    "tl": {"plan_size": 8, "sa_iters": 100, "sa_chains": 64},
    "gga": {"population": 8, "elite": 4},
    "ga": {"population": 8, "elite": 2},
}


@dataclass(frozen=True)
class Experiment:
    """What to run and where; ``budgets`` maps variant names to trial counts."""

    layers: tuple[Task, ...]
    history_layers: tuple[Task, ...]
    trials: int
    budgets: dict[str, int]
    db: Path
    work: Path
    out: Path
    target: TargetInfo
    plugins: Plugins
    measurer: str = "local"
    space_generator: str | None = None
    space_options: dict[str, Any] = field(default_factory=dict)  # --space-opt
    measurer_options: dict[str, Any] = field(default_factory=dict)
    searcher_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 0
    batch_size: int = 8
    pruned: bool = True
    extra: tuple[Variant, ...] = ()  # compared beside VARIANTS, e.g. gga with other options
    shapes: tuple[Task, ...] = ()  # --shapes: tuned with the whole history, as pruned variants
    remeasure: int = 0  # rounds of measuring every searcher's best again side by side
    confirm: int = 0  # TuneOptions.confirm of every run (0: a run's best is its fastest timing)
    deployed: int = 0  # gga_turns.py --deployed: rounds of timing every reported config again
    # gga_turns.py --deployed-view and --deployed-rounds: how reports read those timings
    deployed_view: str = "median"
    deployed_rounds: int = 0  # read the timings of exactly this many rounds (0: the newest)
    keep_workers: bool = False  # gga_turns.py --keep-workers: one warmed measurer per variant
    runoff: int = 0  # TuneOptions.runoff of every run (gga_turns.py: after the turns)
    runoff_rounds: int = 5  # TuneOptions.runoff_rounds
    # variant name -> a measurer its runs share, kept from layer to layer (made with
    # keep_workers); a variant without one gets a new measurer per run
    measurers: dict[str, Any] = field(default_factory=dict, compare=False)
    log: Callable[[str], None] = print

    @property
    def variants(self) -> tuple[Variant, ...]:
        return (*VARIANTS, *self.extra)

    @property
    def space_tune_options(self) -> TuneOptions:
        """The options that pick the space: ``--space`` and its ``--space-opt``."""
        return TuneOptions(space_generator=self.space_generator,
                           space_options=dict(self.space_options))

    @property
    def space_option_text(self) -> str:
        """``--space-opt`` as reports name it: ``key=value, ...`` ('' when none is given)."""
        return ", ".join(f"{k}={v}" for k, v in self.space_options.items())

    def budget(self, variant: str) -> int:
        return 1 if variant == "fallback" else self.budgets.get(variant, self.trials)

    def options(self, v: Variant) -> TuneOptions:
        opts = {**self.searcher_options.get(v.searcher, {}), **v.options}
        return TuneOptions(searcher=v.searcher, measurer=self.measurer,
                           space_generator=self.space_generator,
                           space_options=dict(self.space_options), trials=self.budget(v.name),
                           seed=self.seed, batch_size=self.batch_size, confirm=self.confirm,
                           runoff=self.runoff, runoff_rounds=self.runoff_rounds,
                           searcher_options=opts,
                           measurer_options=dict(self.measurer_options))


@dataclass(frozen=True)
class Curve:
    """Best-so-far GFLOPS and elapsed wall seconds after each trial of one run."""

    best: tuple[float, ...]
    seconds: tuple[float, ...]
    period: tuple[str, str] | None = None  # first and last measurement (UTC, ISO)
    best_config: Config | None = None
    retimed: int = 0  # re-timings (``TuneOptions.confirm``) of the trials read
    fastest_first: float = 0.0  # GFLOPS of the fastest first timing of the trials read
    # (trial index, config) each time the run's best config changed: the config the run
    # would report, and a user deploy, from that trial on
    reported: tuple[tuple[int, Config], ...] = ()
    # each trial's first timing, in the order the run measured them (re-timings left out)
    firsts: tuple[MeasureResult, ...] = ()

    def reported_at(self) -> tuple[Config | None, ...]:
        """The config the run reported as its best after each trial (None before any)."""
        out: list[Config | None] = []
        changes = list(self.reported)
        current: Config | None = None
        for i in range(len(self.best)):
            while changes and changes[0][0] <= i:
                current = changes.pop(0)[1]
            out.append(current)
        return tuple(out)

    @property
    def final(self) -> float:
        return self.best[-1] if self.best else 0.0

    def reach(self, level: float) -> tuple[int | None, float | None]:
        """(trials, seconds) when best-so-far first reached ``level`` (None if never)."""
        for i, b in enumerate(self.best):
            if b >= level and level > 0:
                return i + 1, self.seconds[i]
        return None, None

    def area(self, reference: float, trials: int) -> float:
        """Mean of best-so-far / reference over ``trials`` (the last value held)."""
        if not self.best or reference <= 0 or trials <= 0:
            return 0.0
        vals = [self.best[min(i, len(self.best) - 1)] / reference for i in range(trials)]
        return sum(vals) / trials


# -- tasks ------------------------------------------------------------------------------

def resnet_layers() -> list[Task]:
    """The ``resnet18_conv`` group of the built-in suite, in suite order."""
    data = json.loads(resources.files("orchestrator").joinpath("suites/default.json").read_text())
    return select_tasks(read_suite(), [e["name"] for e in data[GROUP]])


def odd_channels(n: int) -> int:
    """The largest odd composite number <= n - 3 (n itself when n <= 3). Composite, because
    a prime channel count leaves its split knob one useful factor (512 - 3 = 509 and
    64 - 3 = 61 are prime: 509 gave a space of 60 valid configs that every searcher
    measured whole)."""
    if n <= 3:
        return n
    m = n - 3 if (n - 3) % 2 else n - 4
    while m > 9 and len(divisors(m)) == 2:
        m -= 2
    return m


def pruned(task: Task) -> Task:
    """``task`` with odd channel counts near C-3 and K-3 (:func:`odd_channels`)."""
    p = dict(task.params)
    p["C"] = odd_channels(p["C"])
    p["K"] = odd_channels(p["K"])
    return Task.create(task.op, p, name=f"{task.name}_pruned")


# -- running ----------------------------------------------------------------------------

def _run_db(exp: Experiment, task: Task, variant: Variant) -> Path:
    return exp.work / (task.name or task.key_hash) / f"{variant.name}.db"


def seed_history(base: HistoryStore, path: Path, tasks: Sequence[Task], target: TargetInfo) -> None:
    """Create ``path`` holding the base history of ``tasks`` on ``target`` (once: a
    database that exists is complete, as it is written to a temporary name first)."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".seeding")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        leftover.unlink(missing_ok=True)
    dest = HistoryStore.open(tmp)
    try:
        src_target = base.find_target(target)
        dst_target = dest.ensure_target(target)
        for task in tasks:
            src_task = base.find_task(task)
            if src_task is None or src_target is None:
                continue
            by_template: dict[str, list[MeasureResult]] = {}
            for rec in base.records(where=[MeasurementRow.task_id == src_task,
                                           MeasurementRow.target_id == src_target]):
                by_template.setdefault(rec.template, []).append(rec.result)
            dst_task = dest.ensure_task(task)
            for template, results in by_template.items():
                dest.record(run_id=None, task_id=dst_task, target_id=dst_target,
                            results=results, template=template)
    finally:
        dest.close()
    tmp.rename(path)


def run(exp: Experiment, task: Task, variant: Variant, db: HistoryStore | Path) -> None:
    """Tune ``task`` with ``variant`` (resumes; measures nothing twice)."""
    exp.log(f"  {task.name}: {variant.name} ({exp.budget(variant.name)} trials)")
    store = db if isinstance(db, HistoryStore) else HistoryStore.open(db)
    try:
        tune(task, target=exp.target, options=exp.options(variant), db=store, plugins=exp.plugins,
             shared_measurer=exp.measurers.get(variant.name))
    finally:
        if store is not db:
            store.close()


@dataclass(frozen=True)
class LeftOut:
    """A layer tuned with the history of ``history``; ``unseen``: a task with no xgb run
    in the base history (a pruned variant, a ``--shapes`` shape), tuned with every
    layer's history and given an xgb run of its own."""

    task: Task
    history: tuple[Task, ...]
    unseen: bool


def left_out(exp: Experiment) -> list[LeftOut]:
    """Each layer of ``exp`` with the other history layers, then (with ``exp.pruned``)
    its pruned variant with all of them; then each of ``exp.shapes`` with all of them."""
    out = []
    for task in exp.layers:
        out.append(LeftOut(task, tuple(t for t in exp.history_layers if t.key != task.key),
                           False))
        if exp.pruned:
            out.append(LeftOut(pruned(task), tuple(exp.history_layers), True))
    out += [LeftOut(task, tuple(exp.history_layers), True) for task in exp.shapes]
    return out


def run_all(exp: Experiment, history_only: bool = False) -> None:
    """Steps 1 to 3 of the module docstring (step 1 alone with ``history_only``)."""
    exp.db.parent.mkdir(parents=True, exist_ok=True)
    base = HistoryStore.open(exp.db)
    try:
        exp.log(f"xgb history and reference runs -> {exp.db}")
        for task in dict.fromkeys([*exp.history_layers, *exp.layers]):
            run(exp, task, XGB, base)
        if history_only:
            return
        for job in left_out(exp):
            task = job.task
            if job.unseen:  # no xgb history of its own: xgb runs here as well
                exp.log(f"{'shape' if task in exp.shapes else 'pruned'} {task.name} "
                        f"({task.label()})")
                variants = (*exp.variants, XGB)
            else:
                exp.log(f"leave-one-out {task.name}: history of {len(job.history)} other layers")
                variants = exp.variants
            for v in variants:
                path = _run_db(exp, task, v)
                seed_history(base, path, job.history if v.uses_history else [], exp.target)
                run(exp, task, v, path)
            remeasure(exp, task, job.unseen)
    finally:
        base.close()


def _remeasure_db(exp: Experiment, task: Task) -> Path:
    return exp.work / (task.name or task.key_hash) / "remeasure.db"


def _remeasure_key(exp: Experiment, task: Task, configs: Sequence[Config]) -> str:
    return canonical_json({"script": "reproduce_gga-remeasure", "task": task.key,
                           "target": exp.target.key, "configs": sorted(c.key for c in configs)})


def _finished_remeasure(store: HistoryStore, key: str, trials: int = 0,
                        exact: bool = False) -> int | None:
    """The newest finished remeasure run of ``key`` that timed at least ``trials`` (with
    ``exact``, exactly ``trials``)."""
    runs = [r for r in store.runs(where=[RunRow.resume_key == key])
            if r.status == "finished"
            and (r.max_trials == trials if exact else r.max_trials >= trials)]
    return runs[0].id if runs else None


def bests_of(res: LayerResult) -> dict[str, Config]:
    """The best config of every searcher's run within its budget (xgb first)."""
    order = [REFERENCE, *(n for n in res.curves if n != REFERENCE)]
    return {n: c for n in order if (c := res.curves[n].best_config) is not None}


def final_bests(exp: Experiment, task: Task, unseen: bool) -> dict[str, Config]:
    """:func:`bests_of` the layer's runs as the databases hold them now."""
    return bests_of(layer_result(exp, task, unseen))


def remeasure(exp: Experiment, task: Task, unseen: bool) -> None:
    """Measure the final best config of every searcher again, ``exp.remeasure`` rounds
    interleaved, into ``WORK/<layer>/remeasure.db`` (once per set of configs: a rerun
    measures nothing again). The runs of one layer span hours, and a shared machine
    is not equally fast all that time; measured side by side, the bests compare fairly."""
    if exp.remeasure <= 0:
        return
    remeasure_bests(exp, task, final_bests(exp, task, unseen), _remeasure_db(exp, task))


def remeasure_bests(exp: Experiment, task: Task, bests: dict[str, Config], path: Path,
                    what: str = "final bests") -> None:
    """Measure the configs of ``bests`` again, ``exp.remeasure`` rounds interleaved, into
    the database at ``path`` as one finished ``remeasure`` run (nothing again when such a
    run of the same configs, with as many rounds or more, is there, or without xgb's best
    to compare with); the log line names them as ``what``."""
    if REFERENCE not in bests:
        return
    configs = list(bests.values())
    timings = len({c.key for c in configs}) * exp.remeasure  # searchers may share a best
    path.parent.mkdir(parents=True, exist_ok=True)
    store = HistoryStore.open(path)
    try:
        key = _remeasure_key(exp, task, configs)
        if _finished_remeasure(store, key, timings) is not None:
            return
        exp.log(f"  {task.name}: the {timings // exp.remeasure} {what} measured "
                f"again, {exp.remeasure} rounds side by side")
        _, space = build_space(exp.plugins, task, exp.target,
                               exp.space_tune_options)
        measurer = exp.plugins.create("measurer", exp.measurer, **exp.measurer_options)
        try:
            got = measure_interleaved(measurer, space, exp.target, configs, exp.remeasure)
        finally:
            measurer.close()
        store.record_finished_run(
            task_id=store.ensure_task(task), target_id=store.ensure_target(exp.target),
            resume_key=key, searcher="remeasure", measurer=exp.measurer,
            space_generator=space.generator, pruners=(), seed=exp.seed,
            max_trials=timings, space_size=space.size,
            stop_reason="trials", results=[r for rs in got.values() for r in rs],
            template=space.template)
    finally:
        store.close()


def _remeasure_records(exp: Experiment, task: Task, bests: dict[str, Config], path: Path,
                       rounds: int = 0) -> list[Record] | None:
    """The records of the newest finished remeasure run of exactly these configs (or,
    without one, of the newest that timed them among others), oldest first; None if
    there is none. ``rounds`` > 0: only a run of that many rounds counts (the configs
    timed again with more rounds later, a report can still read the first run)."""
    if not path.exists() or not bests:
        return None
    configs = list(bests.values())
    store = HistoryStore.open(path, create=False)
    try:
        run_id = _finished_remeasure(store, _remeasure_key(exp, task, configs),
                                     len({c.key for c in configs}) * rounds, exact=rounds > 0)
        if run_id is None:
            run_id = _covering_remeasure(store, exp, task, configs, rounds)
        if run_id is None:
            return None
        return store.records(where=[MeasurementRow.run_id == run_id])
    finally:
        store.close()


def _covering_remeasure(store: HistoryStore, exp: Experiment, task: Task,
                        configs: Sequence[Config], rounds: int = 0) -> int | None:
    """The newest finished remeasure run of the task that timed these configs among
    others, side by side all the same (a report reading fewer searchers than were
    measured, e.g. some layers' variants left out to average over more layers); of
    ``rounds`` rounds when that is > 0."""
    want = json.loads(_remeasure_key(exp, task, configs))
    wanted = set(want.pop("configs"))
    with Session(store.engine) as s:
        rows = s.exec(select(RunRow.id, RunRow.resume_key, RunRow.max_trials)
                      .where(RunRow.searcher == "remeasure", RunRow.status == "finished")
                      .order_by(RunRow.id.desc()))  # type: ignore[union-attr]
        for run_id, resume_key, trials in rows:
            key = json.loads(resume_key)
            timed = set(key.pop("configs", ()))
            if (wanted <= timed and key == want
                    and (rounds <= 0 or trials == len(timed) * rounds)):
                return int(run_id)
    return None


@dataclass(frozen=True)
class RemeasureTimings:
    """One remeasure run's timings of a set of named configs, read once: each name's
    latencies in round order (None where a round failed) and when the run ended."""

    latencies: dict[str, tuple[float | None, ...]]
    measured_at: str

    def gflops(self, flops: float) -> dict[str, float]:
        """Each name's median GFLOPS over its successful rounds (names with none left out)."""
        out: dict[str, float] = {}
        for name, lat in self.latencies.items():
            ok = [x for x in lat if x is not None]
            if ok:
                out[name] = flops / statistics.median(ok) / 1e9
        return out


def remeasure_timings(exp: Experiment, task: Task, bests: dict[str, Config], path: Path,
                      rounds: int = 0) -> RemeasureTimings | None:
    """The timings of ``bests`` in the remeasure run that :func:`_remeasure_records` reads
    (of ``rounds`` rounds when > 0); None if there is none. The runs record each config's
    results in round order (:func:`remeasure_bests`)."""
    records = _remeasure_records(exp, task, bests, path, rounds)
    if records is None:
        return None
    by_key: dict[str, list[float | None]] = {}
    for rec in records:
        by_key.setdefault(rec.result.config.key, []).append(
            rec.result.latency if rec.result.ok else None)
    return RemeasureTimings({name: tuple(by_key.get(c.key, ())) for name, c in bests.items()},
                            records[-1].created_at[:16] if records else "")


def remeasured(exp: Experiment, task: Task, bests: dict[str, Config], path: Path | None = None,
               rounds: int = 0) -> tuple[dict[str, float], str] | None:
    """Median GFLOPS of each searcher's best in the remeasure run of these configs that
    :func:`_remeasure_records` reads (of ``rounds`` rounds when > 0), and when it was
    measured; None if there is none."""
    found = remeasure_timings(exp, task, bests,
                              _remeasure_db(exp, task) if path is None else path, rounds)
    return None if found is None else (found.gflops(task.flops), found.measured_at)


def remeasured_rounds(exp: Experiment, task: Task, bests: dict[str, Config], path: Path,
                      rounds: int = 0) -> dict[str, list[float | None]] | None:
    """Each searcher's latencies, round by round (None where a round failed), in the
    remeasure run of these configs that :func:`_remeasure_records` reads (of ``rounds``
    rounds when > 0); None if there is none."""
    found = remeasure_timings(exp, task, bests, path, rounds)
    return None if found is None else {n: list(lat) for n, lat in found.latencies.items()}


# -- measuring the runs -----------------------------------------------------------------

def curve(db: Path, task: Task, searcher: str, trials: int, confirmed: bool = False) -> Curve:
    """The first ``trials`` trials of the newest ``searcher`` run of ``task`` in ``db``.

    ``confirmed``: the run timed each new best again (``TuneOptions.confirm``); a config
    then counts towards best-so-far only by its re-timings, at the trial it was picked,
    and only once they are all in: by the median of all the run's re-timings of it
    (:func:`orchestrator.confirm.split_retimings`), as the run's own confirmed best is,
    never of their first one or two.
    """
    if not db.exists():
        return Curve((), ())
    store = HistoryStore.open(db, create=False)
    try:
        with Session(store.engine) as s:
            row = s.exec(select(RunRow).join(TaskRow, TaskRow.id == RunRow.task_id)
                         .where(TaskRow.key_hash == task.key_hash, RunRow.searcher == searcher)
                         .order_by(RunRow.id.desc())).first()  # type: ignore[union-attr]
            if row is None:
                return Curve((), ())
            run_id, started = row.id, row.started_at
        records = store.records(where=[MeasurementRow.run_id == run_id])
    finally:
        store.close()
    best: list[float] = []
    seconds: list[float] = []
    top, top_config, last = 0.0, None, None
    fastest_first, retimed = 0.0, 0
    firsts: list[MeasureResult] = []
    read_again: dict[str, int] = {}  # per trial read, how many of its re-timings are read
    reported: list[tuple[int, Config]] = []

    def report(config: Config) -> None:
        if reported and reported[-1][0] == len(best) - 1:
            reported.pop()
        reported.append((len(best) - 1, config))

    again = confirm.split_retimings(rec.result for rec in records)[1]
    for rec in records:
        r, elapsed = rec.result, _elapsed(rec.created_at, started)
        if r.config.key in read_again:  # a re-timing of a trial already read
            read_again[r.config.key] += 1
            retimed += 1
            last = rec.created_at
            if read_again[r.config.key] < len(again[r.config.key]):
                continue  # more re-timings of this config follow
            c = confirm.confirmed(again[r.config.key])
            if confirmed and c is not None and c.gflops(task.flops) > top:
                top, top_config = c.gflops(task.flops), c.config
                best[-1], seconds[-1] = top, elapsed
                report(c.config)
            continue
        if len(best) >= trials:
            break
        read_again[r.config.key] = 0
        firsts.append(r)
        if r.status is MeasureStatus.OK:
            fastest_first = max(fastest_first, r.gflops(task.flops))
        improved = not confirmed and r.status is MeasureStatus.OK and r.gflops(task.flops) > top
        if improved:
            top, top_config = r.gflops(task.flops), r.config
        best.append(top)
        seconds.append(elapsed)
        if improved:
            report(r.config)
        last = rec.created_at
    period = (records[0].created_at[:19], last[:19]) if last is not None else None
    return Curve(tuple(best), tuple(seconds), period, top_config, retimed, fastest_first,
                 tuple(reported), tuple(firsts))


def _elapsed(created_at: str, started: datetime.datetime) -> float:
    created = datetime.datetime.fromisoformat(created_at)
    return max((_naive(created) - _naive(started)).total_seconds(), 0.0)


def _naive(t: datetime.datetime) -> datetime.datetime:
    return t.replace(tzinfo=None) if t.tzinfo else t


@dataclass(frozen=True)
class LayerResult:
    task: Task
    reference: float
    match: float
    curves: dict[str, Curve]


def layer_result(exp: Experiment, task: Task, unseen: bool) -> LayerResult:
    curves: dict[str, Curve] = {}
    for v in (*exp.variants, XGB):
        db = _run_db(exp, task, v) if (v is not XGB or unseen) else exp.db
        curves[v.name] = curve(db, task, v.searcher, exp.budget(v.name))
    ref = curves[REFERENCE].final
    return LayerResult(task, ref, match_score(exp, task, _run_db(exp, task, VARIANTS[0])), curves)


def match_score(exp: Experiment, task: Task, db: Path) -> float:
    """The best match score of ``task`` against the history seeded into ``db`` (0 if
    ``db`` does not exist yet)."""
    if not db.exists():
        return 0.0
    store = HistoryStore.open(db, create=False)
    try:
        _, space = build_space(exp.plugins, task, exp.target,
                               exp.space_tune_options)
        return best_match_score(store.reader(), space, exp.target)
    finally:
        store.close()


# -- reporting --------------------------------------------------------------------------

def _fmt(x: float | int | None, spec: str = ".1f") -> str:
    return "-" if x is None else format(x, spec)


def _ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None or b <= 0 else f"{a / b:.1f}x"


def report_rows(res: LayerResult, exp: Experiment) -> list[str]:
    rows = []
    mark = MARK * res.reference
    for name, c in res.curves.items():
        t95, s95 = c.reach(mark)
        area = c.area(res.reference, exp.budget(name) if name != "fallback" else exp.trials)
        rows.append(f"| {res.task.name} | {name} | {len(c.best)} | {_fmt(c.final)} | "
                    f"{_fmt(t95, 'd')} | {_fmt(s95)} | {area:.3f} |")
    return rows


def verdicts(res: LayerResult, exp: Experiment) -> list[str]:
    """The paper's claims, checked on one layer."""
    mark = MARK * res.reference
    _, gga_s = res.curves["gga"].reach(mark)
    _, xgb_s = res.curves["xgb"].reach(mark)
    _, ga_s = res.curves["ga"].reach(mark)
    out = [f"match score {res.match:.3f} (auto would run {chosen_flow(res.match)})"]
    out.append(f"gga time to {MARK:.0%} of xgb best: {_fmt(gga_s)} s; xgb {_fmt(xgb_s)} s "
               f"(speed-up {_ratio(xgb_s, gga_s)}, target >= 5x); ga {_fmt(ga_s)} s "
               f"(speed-up {_ratio(ga_s, gga_s)}, target >= 3x)")
    if res.reference > 0:
        out.append(f"gga final best / xgb final best: {res.curves['gga'].final / res.reference:.3f} "
                   "(target >= 0.98)")
    for v in exp.extra:
        _, v_s = res.curves[v.name].reach(mark)
        final = res.curves[v.name].final / res.reference if res.reference > 0 else 0.0
        out.append(f"{v.name} ({v.searcher} {json.dumps(v.options)}): {_fmt(v_s)} s to the mark "
                   f"(speed-up over xgb {_ratio(xgb_s, v_s)}), final best / xgb {final:.3f}")
    a_tl = res.curves["tl"].area(res.reference, exp.budget("tl"))
    a_nf = res.curves["tl-nofilter"].area(res.reference, exp.budget("tl-nofilter"))
    if round(a_tl, 3) == round(a_nf, 3):
        verdict = "the same to 3 decimals with and without the filter"
    else:
        verdict = f"{'faster' if a_tl > a_nf else 'not faster'} with the filter"
    out.append(f"tl area {a_tl:.3f} vs tl without filter {a_nf:.3f} ({verdict})")
    return out


# Relative difference of seconds to the mark under which gga and tl count as equally fast
# (both often cross it at trial 1, a few tenths of a second apart)
TIE = 0.1


@dataclass(frozen=True)
class AutoOutcome:
    """Which of the two flows ``auto`` chooses between did better on one layer."""

    name: str
    match: float
    faster: str | None  # "gga", "tl", or None when they cannot be told apart
    why: str


def auto_outcome(res: LayerResult) -> AutoOutcome:
    """gga against tl (with filter, as ``auto`` runs it): the one that reached the mark
    in fewer wall seconds (a tie within ``TIE``); if neither did, the higher best after
    as many trials as the shorter run has."""
    gga, tl = res.curves["gga"], res.curves["tl"]
    mark = MARK * res.reference
    (_, g_s), (_, t_s) = gga.reach(mark), tl.reach(mark)
    if g_s is not None or t_s is not None:
        if g_s is not None and t_s is not None and abs(g_s - t_s) <= TIE * max(g_s, t_s):
            faster = None
        else:
            faster = "gga" if t_s is None or (g_s is not None and g_s < t_s) else "tl"
        return AutoOutcome(res.task.name, res.match, faster,
                           f"seconds to the mark: gga {_fmt(g_s)}, tl {_fmt(t_s)}")
    n = min(len(gga.best), len(tl.best))
    if n == 0:
        return AutoOutcome(res.task.name, res.match, None, "not measured")
    g, t = gga.best[n - 1], tl.best[n - 1]
    faster = "gga" if g > t else "tl" if t > g else None
    return AutoOutcome(res.task.name, res.match, faster,
                       f"neither reached the mark; best after {n} trials: gga {g:.1f}, tl {t:.1f}")


def picked_right(outcomes: Sequence[AutoOutcome], threshold: float) -> int:
    """On how many of ``outcomes`` ``auto`` with ``threshold`` runs the faster flow."""
    return sum(chosen_flow(o.match, threshold) == o.faster for o in outcomes)


def threshold_fit(outcomes: Sequence[AutoOutcome]) -> tuple[int, list[tuple[float, float]]]:
    """The most layers on which ``auto`` (gga iff match >= threshold) picks the faster
    flow, and the threshold intervals (low, high] that achieve it (``low`` = -inf below
    every match score, ``high`` = inf above: never gga)."""
    decided = [o for o in outcomes if o.faster]
    if not decided:
        return 0, []
    cuts = sorted({o.match for o in decided})
    lows = [float("-inf"), *cuts]
    highs = [*cuts, float("inf")]
    scores = [picked_right(decided, high) for high in highs]
    best = max(scores)
    return best, [(lo, hi) for lo, hi, sc in zip(lows, highs, scores) if sc == best]


def auto_section(outcomes: Sequence[AutoOutcome]) -> list[str]:
    """The report's check of the ``auto`` threshold against measured outcomes."""
    lines = ["", f"Auto dispatcher against these outcomes (default threshold {DEFAULT_THRESHOLD}; "
             "gga when the best match score reaches it, else tl):", "",
             "| layer | match | faster | auto picks | right | |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        pick = chosen_flow(o.match)
        right = "-" if o.faster is None else "yes" if pick == o.faster else "no"
        lines.append(f"| {o.name} | {o.match:.3f} | {o.faster or 'tie'} | {pick} | {right} | {o.why} |")
    decided = [o for o in outcomes if o.faster]
    if decided:
        at_default = picked_right(decided, DEFAULT_THRESHOLD)
        best, spans = threshold_fit(outcomes)

        def span(lo: float, hi: float) -> str:
            return ("above every match score (always tl)" if hi == float("inf") else
                    f"<= {hi:.3f} (always gga)" if lo == float("-inf") else
                    f"in ({lo:.3f}, {hi:.3f}]")

        lines += ["", f"The default picks the faster flow on {at_default} of {len(decided)} "
                  f"layers; the best any threshold does here is {best} of {len(decided)}, "
                  f"with a threshold {' or '.join(span(lo, hi) for lo, hi in spans)}."]
    return lines


def layer_again(exp: Experiment, res: LayerResult) -> tuple[dict[str, float], str] | None:
    """The layer's final bests measured again (``--remeasure``): GFLOPS per searcher and
    when; None unless every best, xgb's included, was measured again in one run."""
    found = remeasured(exp, res.task, bests_of(res))
    return found if found is not None and REFERENCE in found[0] else None


def drift_factors(again: dict[str, float], res: LayerResult) -> dict[str, float]:
    """Per searcher, its best's GFLOPS measured again over its GFLOPS in the run: how
    much faster (> 1) or slower the machine is now than during that run."""
    return {n: g / res.curves[n].final for n, g in again.items() if res.curves[n].final > 0}


def remeasure_section(results: Sequence[tuple[LayerResult, tuple[dict[str, float], str] | None]]
                      ) -> list[str]:
    """The final bests measured again side by side (``--remeasure``; each layer with what
    :func:`layer_again` found), and each run's curve scaled by its drift factor, checked
    against 95% of xgb's best measured again."""
    rows = []
    for res, found in results:
        if found is None:
            continue
        again, when = found
        mark = MARK * again[REFERENCE]
        for name, factor in drift_factors(again, res).items():
            c = res.curves[name]
            t95, s95 = Curve(tuple(b * factor for b in c.best), c.seconds).reach(mark)
            rows.append(f"| {res.task.name} | {name} | {_fmt(c.final)} | {again[name]:.1f} | "
                        f"{again[name] / again[REFERENCE]:.3f} | {_fmt(t95, 'd')} | "
                        f"{_fmt(s95)} | {when} |")
    if not rows:
        return []
    return ["", "Final bests measured again side by side (`--remeasure`: every searcher's best "
            "config of the layer, one after the other, the order reversed every other round; "
            "median of the rounds). The runs of one layer span hours, the reference may come "
            "from another day, and a shared machine is not equally fast all that time. The "
            "last columns scale each run's curve by its best's speed now against in the run "
            "(one factor per run: the machine's speed is taken as constant within a run), "
            "and count trials and seconds to 95% of xgb's best measured now:", "",
            "| layer | searcher | best in its run | again (median) | / xgb again | "
            "trials to 95% (scaled) | seconds to 95% (scaled) | measured again (UTC) |",
            "|---|---|---|---|---|---|---|---|", *rows]


def plot(res: LayerResult, path: Path, factors: dict[str, float] | None = None) -> None:
    """Best-so-far vs trials of every searcher; with ``factors`` a second panel with each
    curve scaled to the speed its best was measured at again."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("best GFLOPS so far", {n: 1.0 for n in res.curves}, res.reference)]
    if factors:
        panels.append(("scaled to the bests measured again", factors,
                       res.reference * factors.get(REFERENCE, 1.0)))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.0), squeeze=False)
    for ax, (ylabel, scale, reference) in zip(axes[0], panels):
        for name, c in res.curves.items():
            if c.best and name in scale:
                xs = range(1, len(c.best) + 1)
                ax.plot(xs, [b * scale[name] for b in c.best], label=name,
                        marker="o" if len(c.best) == 1 else None)
        if reference > 0:
            ax.axhline(MARK * reference, color="grey", linestyle="--", linewidth=0.8,
                       label=f"{MARK:.0%} of xgb best")
        ax.set_xlabel("trials")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
    axes[0][0].set_title(f"{res.task.name}: {res.task.label().split('(', 1)[-1].rstrip(')')}",
                         fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(exp: Experiment, header: str, command: str) -> Path:
    """Write ``gga-report.md`` and one PNG per layer into ``exp.out``; returns the report."""
    exp.out.mkdir(parents=True, exist_ok=True)
    lines = ["# GGA / TL leave-one-out reproduction", "", header, "",
             f"Command: `{command}`", "",
             f"Budget per searcher: {exp.trials} trials (fallback: 1)"
             + (f", overrides {exp.budgets}" if exp.budgets else "") + f"; seed {exp.seed}; "
             f"searcher options {json.dumps(exp.searcher_options) if exp.searcher_options else 'defaults'}.",
             "", "| layer | searcher | trials | best GFLOPS | trials to 95% | seconds to 95% | area |",
             "|---|---|---|---|---|---|---|"]
    notes = []
    layer_results = []
    agains = []
    jobs = sorted(left_out(exp), key=lambda j: j.unseen)  # the layers, then the rest
    for job in jobs:
        task = job.task
        res = layer_result(exp, task, job.unseen)
        layer_results.append(res)
        lines += report_rows(res, exp)
        png = exp.out / f"gga-{task.name}.png"
        again = layer_again(exp, res)
        agains.append(again)
        plot(res, png, drift_factors(again[0], res) if again else None)
        notes.append(f"- **{task.name}** ({task.label()}): " + "; ".join(verdicts(res, exp))
                     + f" ![{task.name}]({png.name})")
    periods = [c.period for r in layer_results for c in r.curves.values() if c.period]
    if periods:
        lines[4:4] = [f"Measured from {min(p[0] for p in periods)} to "
                      f"{max(p[1] for p in periods)} UTC.", ""]
    lines += ["", MEANS_INTRO, "", *means_lines(layer_results)]
    lines += remeasure_section(list(zip(layer_results, agains)))
    lines += auto_section([auto_outcome(r) for r in layer_results])
    lines += ["", "Per layer:", "", *notes, ""]
    path = exp.out / "gga-report.md"
    path.write_text("\n".join(lines))
    return path


# -- command line -----------------------------------------------------------------------

def parse_variant(text: str) -> Variant:
    """``NAME=SEARCHER[:KEY=VALUE,...]`` as a :class:`Variant` that uses history."""
    return Variant(*split_variant(text))


def parse_variants(ap: argparse.ArgumentParser, items: Sequence[str],
                   taken: set[str]) -> list[Variant]:
    """Every ``--variant`` as a :class:`Variant`; a malformed one, or a name in ``taken``
    or given twice, is a usage error."""
    found: list[Variant] = []
    names = set(taken)
    for item in items:
        try:
            variant = parse_variant(item)
        except ValueError as exc:
            ap.error(str(exc))
        if variant.name in names:
            ap.error(f"--variant name {variant.name!r} is taken; choose another")
        names.add(variant.name)
        found.append(variant)
    return found


def add_run_arguments(ap: argparse.ArgumentParser) -> None:
    """The options this script and ``gga_turns.py`` share: layers, databases, report."""
    ap.add_argument("--layers", help="comma-separated layers to leave out [all resnet18_conv]")
    ap.add_argument("--history-layers", help="layers whose xgb runs form the history [all]")
    ap.add_argument("--db", default="runs/gga/base.db", help="base history database [%(default)s]")
    ap.add_argument("--work", help="directory of the per-run databases [next to --db]")
    ap.add_argument("--out", help="report and PNG directory [docs/results; smoke: WORK/report]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", default="host",
                    help="host (this machine's CPU), cuda (its GPU) or cuda:<gpu> [host]")
    ap.add_argument("--space", help="space generator [the first that supports conv2d on the "
                                    "target: cpu; on cuda, give cuda]")
    ap.add_argument("--space-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="option of the space generator --space names, e.g. --space cpu "
                         "--space-opt check=relaxed (repeatable)")
    ap.add_argument("--measurer", default="local", help="measurer [local; on a GPU: cuda]")
    ap.add_argument("--no-pruned", action="store_true", help="skip the pruned variants")
    ap.add_argument("--shapes", metavar="FILE",
                    help="a suite file of conv2d shapes of your own, each tuned as a pruned "
                         "variant is: with every layer's history, xgb as reference (alone: "
                         "no layer is left out unless --layers names some)")
    ap.add_argument("--report-only", action="store_true", help="report what the databases hold")
    ap.add_argument("--batch-size", type=batch_size_arg, default=8, metavar="N",
                    help="configs each run measures per batch, every searcher alike "
                         "(AutoTVM's tuners measure as many as the builder runs at once, the "
                         "core count) [8]")


def checked_target(ap: argparse.ArgumentParser, args: argparse.Namespace,
                   plugins: Plugins) -> TargetInfo:
    """``--target``'s machine, once it and the ``--space`` and ``--measurer`` named are
    known (exits with the reason otherwise)."""
    from orchestrator.errors import OrchestratorError
    from orchestrator.loop import check_components
    from orchestrator.target import resolve_target

    try:
        space_options = parse_options(args.space_opt)
        check_components(plugins, TuneOptions(measurer=args.measurer,
                                              space_generator=args.space,
                                              space_options=space_options))
        if args.space:  # its constructor checks the values, too
            plugins.create("space_generator", args.space, **space_options)
        return resolve_target(args.target)
    except OrchestratorError as exc:
        ap.error(str(exc))


def batch_size_arg(text: str) -> int:
    """``--batch-size``'s value: a whole number of configs >= 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"--batch-size takes a number of configs >= 1, "
                                         f"got {text}")
    return n


def chosen_layers(ap: argparse.ArgumentParser,
                  args: argparse.Namespace) -> tuple[tuple[Task, ...], tuple[Task, ...]]:
    """The layers to leave out and the history layers that ``--layers`` and
    ``--history-layers`` name (all by default; ``--smoke``: r18_l4ds against r18_l3ds)."""
    all_layers = resnet_layers()
    by_name = {t.name: t for t in all_layers}

    def named(text: str | None, default: list[Task]) -> tuple[Task, ...]:
        if not text:
            return tuple(default)
        unknown = [n for n in text.split(",") if n not in by_name]
        if unknown:
            ap.error(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
        return tuple(by_name[n] for n in text.split(","))

    if args.smoke:
        return (named(args.layers, [] if args.shapes else [by_name["r18_l4ds"]]),
                named(args.history_layers, [by_name["r18_l3ds"], by_name["r18_l4ds"]]))
    return (named(args.layers, [] if args.shapes else all_layers),
            named(args.history_layers, all_layers))


def chosen_shapes(ap: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Task, ...]:
    """The conv2d workloads of the ``--shapes`` suite file (none without it); exits with
    the reason when the file cannot be read or holds something else."""
    from orchestrator.errors import OrchestratorError

    if not args.shapes:
        return ()
    try:
        shapes = read_suite(args.shapes)
    except OrchestratorError as exc:
        ap.error(f"--shapes: {exc}")
    others = [t.name for t in shapes if t.op != "conv2d"]
    if others:
        ap.error(f"--shapes: {', '.join(others)}: not conv2d; the history is of the ResNet-18 "
                 "convolutions, so give conv2d shapes only")
    taken = {name for t in resnet_layers() for name in (t.name, pruned(t).name)}
    seen: set[str] = set()
    for t in shapes:
        if t.name in taken or t.name in seen:
            why = "is a built-in layer's" if t.name in taken else "is given twice"
            ap.error(f"--shapes: the name {t.name!r} {why}; give each shape a name of its "
                     "own (its runs are kept under it)")
        seen.add(t.name)
    return tuple(shapes)


def run_paths(args: argparse.Namespace) -> tuple[Path, Path, Path]:
    """The base database, the directory of the per-run databases and the report's."""
    db = Path(args.db)
    work = Path(args.work) if args.work else db.parent / f"{db.stem}-runs"
    out = Path(args.out) if args.out else (work / "report" if args.smoke else Path("docs/results"))
    return db, work, out


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(ap)
    ap.add_argument("--trials", type=int, help="trial budget per searcher [500; smoke 8]")
    ap.add_argument("--budget", action="append", default=[], metavar="VARIANT=TRIALS",
                    help="budget of one variant (gga, tl, tl-nofilter, ga, xgb)")
    ap.add_argument("--searcher-opt", action="append", default=[], metavar="SEARCHER:KEY=VALUE",
                    help="option of one searcher, e.g. xgb:plan_size=16 (repeatable)")
    ap.add_argument("--measurer-opt", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="NAME=SEARCHER[:KEY=VALUE,...]",
                    help="also run and report a searcher with other options under its own "
                         "name, e.g. gga-tasks=gga:seeding=tasks (repeatable)")
    ap.add_argument("--remeasure", type=int, default=0, metavar="ROUNDS",
                    help="after each layer, measure every searcher's best config again, "
                         "ROUNDS rounds side by side, and report those ratios too [0: off]")
    ap.add_argument("--history-only", action="store_true",
                    help="only step 1: the xgb runs of every layer involved, no report "
                         "(to split a long experiment: history first, then layer by layer)")
    ap.add_argument("--smoke", action="store_true",
                    help="CI smoke test: layer r18_l4ds with r18_l3ds as history, 8 trials each")
    args = ap.parse_args(argv)

    layers, history = chosen_layers(ap, args)
    trials = args.trials or (8 if args.smoke else 500)
    searcher_options = {k: dict(v) for k, v in (SMOKE_OPTIONS if args.smoke else {}).items()}
    for item in args.searcher_opt:
        name, sep, rest = item.partition(":")
        if not sep or "=" not in rest:
            ap.error(f"--searcher-opt takes SEARCHER:KEY=VALUE, got {item!r}")
        searcher_options.setdefault(name, {}).update(parse_options([rest]))
    extra = parse_variants(ap, args.variant, taken={v.name for v in (*VARIANTS, XGB)})
    db, work, out = run_paths(args)
    plugins = load_plugins()
    exp = Experiment(
        layers=layers, history_layers=history, trials=trials,
        budgets={k: int(v) for k, v in parse_options(args.budget).items()}, db=db, work=work, out=out,
        target=checked_target(ap, args, plugins), plugins=plugins, measurer=args.measurer,
        space_generator=args.space, space_options=parse_options(args.space_opt),
        measurer_options=parse_options(args.measurer_opt),
        searcher_options=searcher_options, seed=args.seed,
        batch_size=args.batch_size, pruned=not args.no_pruned, extra=tuple(extra),
        remeasure=args.remeasure, shapes=chosen_shapes(ap, args))
    if args.remeasure < 0:
        ap.error(f"--remeasure takes a number of rounds >= 0, got {args.remeasure}")
    if args.remeasure and args.report_only:
        ap.error("--remeasure measures and --report-only does not: give one of them "
                 "(a report shows the remeasured bests that the databases hold)")
    if args.history_only:
        if args.report_only:
            ap.error("--history-only measures and --report-only does not: give one of them")
        run_all(exp, history_only=True)
        print(f"xgb history of {len(dict.fromkeys([*history, *layers]))} layer(s) in {db}")
        return 0
    if not args.report_only:
        run_all(exp)
    command = "python scripts/reproduce_gga.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    path = report(exp, machine_header(), command.strip())
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
