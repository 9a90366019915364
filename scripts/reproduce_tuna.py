"""Reproduce the Tuna static cost model's evaluation (paper section V-B) on this machine.

For each workload: draw a uniform sample of its space, measure it with the real
``local`` measurer into a history database (configs already there are reused, never
measured twice), analyze the same configs statically (cold feature cache, all cores),
and compare the static ranking with the measured one:

* top-k performance ratio (k = 10, 50): summed latency of the sample's true k fastest
  over that of the k the model ranks fastest (1 = perfect);
* Spearman correlation of predicted and measured latency;
* end to end: static tuning by search over the whole space (``--searcher``, default
  tuna-es, ``--static-trials`` configs, cold feature cache) plus measuring only its top 10,
  against the best config of the sample (throughput, both re-measured side by side in
  interleaved rounds) and the wall time measuring the sample took;
* static-analysis throughput in configs per second per core.

Coefficients: the shipped defaults, fitted on a separate calibration set of other
shapes (see docs/results/tuna.md), and leave-one-workload-out refits on this sample.

    python scripts/reproduce_tuna.py [--workloads r18_l2a,bert_qkv,...] [--sample 500]
        [--db tuna-reference.db] [--out docs/results/tuna.md] [--smoke]
    python scripts/reproduce_tuna.py --measure-only --workloads dense:M=256,K=512,N=512 ...
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlmodel import or_

os.environ.setdefault("TVM_NUM_THREADS", str(len(os.sched_getaffinity(0))))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import machine_header  # noqa: E402

from history.models import MeasurementRow  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.jsonkey import canonical_json  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.result import MeasureResult  # noqa: E402
from orchestrator.runoff import measure_interleaved  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.suite import read_suite, select  # noqa: E402
from orchestrator.target import TargetInfo, cpu_cores, resolve_target  # noqa: E402
from orchestrator.task import Task, parse_shape  # noqa: E402
from plugins.tuna.arch import family  # noqa: E402
from plugins.tuna.calibrate import NOT_MEASURED, Sample, evaluate, fit, samples_for  # noqa: E402
from plugins.tuna.coefficients import Coefficients, load, prior  # noqa: E402
from plugins.tuna.engine import FeatureEngine  # noqa: E402
from plugins.tuna.features import OPT_LEVELS, Features  # noqa: E402
from plugins.tuna.metrics import spearman, top_k_ratio  # noqa: E402

DEFAULT_WORKLOADS = ("r18_l2a", "r18_l2ds", "r18_l3", "r18_l4", "bert_qkv", "bert_ffn1",
                     "bert_scores", "bert_context", "mb_dw3", "mb_dw7")
# The cuda templates cover dense and conv2d only
GPU_WORKLOADS = ("r18_l1", "r18_l2a", "r18_l2ds", "r18_l2", "r18_l3a", "r18_l3", "r18_l4",
                 "bert_qkv", "bert_ffn1", "bert_ffn2")
SMOKE_WORKLOADS = ("bert_scores", "mb_dw13")
BATCH = 16
VERIFY_TOP = 10
SIDE_ROUNDS = 3  # rounds of the side-by-side re-measurement of found and sample best


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- workloads, spaces, samples -------------------------------------------------------------

def parse_workloads(spec: str) -> list[Task]:
    """Suite names (``bert_qkv``) or ``op:K=V,...`` shapes, comma-separated at the top
    level by ``;`` when shapes are given (``dense:M=64,K=64,N=64;bert_qkv``)."""
    suite = read_suite()
    out = []
    parts = spec.split(";") if ":" in spec else spec.split(",")
    for part in filter(None, (p.strip() for p in parts)):
        if ":" in part:
            op, _, shape = part.partition(":")
            params = parse_shape(shape)
            name = f"{op}_" + "_".join(f"{k}{v}" for k, v in params.items())
            out.append(Task.create(op, params, name=name))
        else:
            out.extend(select(suite, [part]))
    return out


def real_measurer(target: TargetInfo) -> str:
    """The measurer that times kernels on ``target``: ``cuda`` for GPUs, else ``local``."""
    return "cuda" if target.kind == "cuda" else "local"


def make_space(plugins: Any, task: Task, target: TargetInfo) -> tuple[str, Space]:
    """The space of the first generator that supports ``task`` (the CPU templates)."""
    from orchestrator.errors import UnknownComponentError
    from orchestrator.loop import choose_space_generator

    try:
        name, gen = choose_space_generator(plugins, task, target, None)
    except UnknownComponentError:  # templates not registered: use the module directly
        from plugins.templates.cpu import GENERATOR, CpuTemplates

        name, gen = GENERATOR, CpuTemplates()
    return name, gen.generate(task, target)


def draw_sample(space: Space, n: int, seed: int) -> list[Config]:
    """``n`` distinct valid configs drawn uniformly (all of them if there are fewer)."""
    if space.size <= 4 * n:
        every = list(space)
        if len(every) <= n:
            return every
        return random.Random(f"{seed}:{space.task.key}").sample(every, n)
    rng = random.Random(f"{seed}:{space.task.key}")
    seen: dict[str, Config] = {}
    tries = 0
    while len(seen) < n and tries < 50 * n:
        tries += 1
        cfg = space.sample(rng)
        if cfg is None:
            break
        seen.setdefault(cfg.key, cfg)
    return list(seen.values())


# -- reference measurements ----------------------------------------------------------------

@dataclass
class Timing:
    """Wall time spent measuring each task for real, kept next to the database."""

    path: Path
    data: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def open(cls, db: Path) -> Timing:
        path = db.with_name(db.name + ".tuna-timing.json")
        try:
            return cls(path, json.loads(path.read_text()))
        except (OSError, ValueError):
            return cls(path)

    def add(self, task: Task, configs: int, seconds: float) -> None:
        entry = self.data.setdefault(task.key, {"configs": 0, "seconds": 0.0})
        entry["configs"] += configs
        entry["seconds"] += seconds
        self.path.write_text(json.dumps(self.data, indent=1, sort_keys=True))

    def per_config(self, task: Task) -> float | None:
        entry = self.data.get(task.key)
        return entry["seconds"] / entry["configs"] if entry and entry["configs"] else None


def reference_run_key(task: Task, target: TargetInfo) -> str:
    """The run holding the e2e's side-by-side re-measurements (search's best and the
    sample's best configs)."""
    return canonical_json({"script": "reproduce_tuna-e2e-reference", "task": task.key,
                           "target": target.key})


def measured_results(store: HistoryStore, task: Task, target: TargetInfo,
                     templates: Sequence[str] | None = None) -> dict[str, MeasureResult]:
    """Real measurements of ``task`` (failures too: a failed config is not measured again),
    only those built by one of ``templates`` if given."""
    task_id, target_id = store.find_task(task), store.find_target(target)
    if task_id is None or target_id is None:
        return {}
    where = [MeasurementRow.task_id == task_id, MeasurementRow.target_id == target_id]
    if templates is not None:
        where.append(MeasurementRow.template.in_(list(templates)))  # type: ignore[attr-defined]
    again_id = store.find_run(reference_run_key(task, target))
    if again_id is not None:  # the e2e's side-by-side re-measurements do not change the sample
        where.append(or_(MeasurementRow.run_id.is_(None),  # type: ignore[union-attr]
                         MeasurementRow.run_id != again_id))
    best: dict[str, MeasureResult] = {}
    for r in (rec.result for rec in store.records(where=where)):
        if r.measurer in NOT_MEASURED:
            continue
        old = best.get(r.config.key)
        if old is None or r.latency < old.latency:
            best[r.config.key] = r
    return best


def measure_sample(store: HistoryStore, plugins: Any, task: Task, target: TargetInfo,
                   gen_name: str, space: Space, configs: Sequence[Config],
                   timing: Timing, seed: int, rounds: int = 1) -> dict[str, MeasureResult]:
    """Measure the configs of the sample not yet in history; return every real result
    (the best of each config). With ``rounds`` > 1 (calibration data on a busy machine)
    the sample is measured that many times, each round in a new random order, so that
    the best of the rounds is less disturbed by other processes."""
    known = measured_results(store, task, target, space.reusable_templates)
    for round_ in range(rounds):
        key = canonical_json({"script": "reproduce_tuna", "task": task.key,
                              "target": target.key, "seed": seed,
                              **({"round": round_} if round_ else {})})
        task_id, target_id = store.ensure_task(task), store.ensure_target(target)
        run_id = store.find_run(key)
        if round_ == 0:
            todo = [c for c in configs if c.key not in known]
        else:
            done = {r.config.key for r in store.results(task_id, target_id, run_id=run_id)} \
                if run_id is not None else set()
            todo = [c for c in configs if c.key not in done]
            random.Random(f"{seed}:{round_}").shuffle(todo)
        if not todo:
            continue
        log(f"  measuring {len(todo)} configs, round {round_ + 1}/{rounds} "
            f"({len(configs) - len(todo)} already in history)")
        if run_id is None:
            run_id = store.start_run(
                task_id=task_id, target_id=target_id, resume_key=key,
                searcher="uniform-sample", measurer=real_measurer(target),
                space_generator=gen_name,
                pruners=(), cost_model=None, seed=seed, max_trials=len(configs),
                max_seconds=None, space_size=space.size)
        measurer = plugins.create("measurer", real_measurer(target))
        start = time.monotonic()
        try:
            for i in range(0, len(todo), BATCH):
                batch = todo[i:i + BATCH]
                t0 = time.monotonic()
                results = measurer.measure(space, target, batch)
                store.record(run_id=run_id, task_id=task_id, target_id=target_id,
                             results=results, template=space.template)
                if round_ == 0:
                    timing.add(task, len(batch), time.monotonic() - t0)
                for r in results:
                    old = known.get(r.config.key)
                    if old is None or r.latency < old.latency:
                        known[r.config.key] = r
                log(f"    {min(i + BATCH, len(todo))}/{len(todo)} "
                    f"({time.monotonic() - start:.0f} s)")
        finally:
            measurer.close()
            store.update_run(run_id, status="finished", stop_reason="trials")
    return {c.key: known[c.key] for c in configs if c.key in known}


def measuring_seconds(timing: Timing, task: Task, results: Sequence[MeasureResult],
                      build_workers: int) -> float:
    """Wall seconds per config of the real measurement: as timed by this script, else
    estimated from the recorded build and run times."""
    per = timing.per_config(task)
    if per is not None:
        return per
    build = sum(r.build_seconds for r in results) / max(1, build_workers)
    run = sum(r.run_seconds for r in results)
    return (build + run) / max(1, len(results))


# -- static analysis and evaluation --------------------------------------------------------

@dataclass
class Workload:
    task: Task
    space_size: int
    sample: list[Config]
    real: dict[str, MeasureResult]
    features: dict[str, Features]
    static_seconds: float
    analyzed: int
    measure_per_config: float
    search: SearchE2E | None = None

    def samples(self) -> list[Sample]:
        return [Sample(self.task.key, tuple(self.features[k].vector()), r.latency)
                for k, r in self.real.items() if r.ok and k in self.features]


@dataclass(frozen=True)
class SearchE2E:
    """Static tuning by search (no hardware) followed by measuring its top configs."""

    searcher: str
    trials: int
    static_seconds: float       # wall time of the static tuning run (cold feature cache)
    verify_seconds: float       # wall time of measuring its top configs for real
    verified: tuple[MeasureResult, ...]
    in_sample: int              # verified configs that were also in the uniform sample
    # Side by side, after the verification: the search's best verified configs and the
    # sample's best configs, measured again interleaved over several rounds, so that
    # "best found / sample best" compares latencies taken at the same time.
    found_again: tuple[MeasureResult, ...] = ()
    reference: tuple[MeasureResult, ...] = ()

    @property
    def best_latency(self) -> float:
        """The search's best: the lowest median over the side-by-side rounds of its best
        verified configs (without those rounds, the verification's own best)."""
        if self.found_again:
            return best_median(self.found_again)
        ok = [r.latency for r in self.verified if r.ok]
        return min(ok) if ok else math.inf

    @property
    def reference_latency(self) -> float:
        """The sample's best: median over the side-by-side rounds of its best config."""
        return best_median(self.reference) if self.reference else math.nan


def best_median(results: Sequence[MeasureResult]) -> float:
    """The lowest per-config median latency of ``results`` (several per config)."""
    by_config: dict[str, list[float]] = {}
    for r in results:
        if r.ok:
            by_config.setdefault(r.config.key, []).append(r.latency)
    return min((statistics.median(v) for v in by_config.values()), default=math.inf)


def side_by_side(measurer: Any, space: Space, target: TargetInfo, found: Sequence[Config],
                 reference: Sequence[Config], rounds: int
                 ) -> tuple[list[MeasureResult], list[MeasureResult]]:
    """Measure ``found`` and ``reference`` configs interleaved (one of each in turn,
    the order reversed every other round) ``rounds`` times; the results of each side (a
    config on both sides is measured once per round and counts for both)."""
    found_keys = {c.key for c in found}
    others = [c for c in reference if c.key not in found_keys]
    pairs = [c for pair in itertools.zip_longest(found, others) for c in pair if c]
    got = measure_interleaved(measurer, space, target, pairs, rounds)

    def by_round(configs: Sequence[Config]) -> list[MeasureResult]:
        keys = list(dict.fromkeys(c.key for c in configs))
        return [got[k][i] for i in range(rounds) for k in keys if i < len(got[k])]

    return by_round(found), by_round(reference)


def static_search(store: HistoryStore, plugins: Any, task: Task, target: TargetInfo,
                  sample: Sequence[Config], args: argparse.Namespace,
                  reference: Sequence[Config] = ()) -> SearchE2E:
    """Tune ``task`` with the ``static`` measurer and ``args.searcher`` for
    ``args.static_trials`` configs in a throwaway database (so that a rerun is timed cold
    too), then measure its ``VERIFY_TOP`` best with ``local`` and record those
    measurements in the reference history; then measure its best verified configs and
    the ``reference`` configs (the sample's best) again side by side, ``SIDE_ROUNDS``
    rounds interleaved (also recorded, in a run of their own)."""
    from orchestrator.loop import tune
    from plugins.tuna.verify import verify_top

    tmp = Path(tempfile.mkdtemp(prefix="tuna-e2e-"))
    static_db = HistoryStore.open(tmp / "static.db")
    options: dict[str, Any] = {"cache_dir": str(tmp / "features")}
    if args.coefficients:
        options["coefficients"] = args.coefficients
    if args.opt_level is not None:
        options["opt_level"] = args.opt_level
    try:
        t0 = time.perf_counter()
        summary = tune(task, target=target, db=static_db, plugins=plugins, measurer="static",
                       searcher=args.searcher, trials=args.static_trials, seed=args.seed,
                       batch_size=BATCH, measurer_options=options)
        static_seconds = time.perf_counter() - t0
        results = static_db.results(static_db.ensure_task(task), static_db.ensure_target(target),
                                    run_id=summary.run.run_id)
        t1 = time.perf_counter()
        real = verify_top(summary.run.space, target, results, VERIFY_TOP,
                          real_measurer(target), plugins=plugins)
        verify_seconds = time.perf_counter() - t1
        again: list[MeasureResult] = []
        found: list[MeasureResult] = []
        if reference:
            best = sorted((r for r in real if r.ok), key=lambda r: r.latency)[:len(reference)]
            measurer = plugins.create("measurer", real_measurer(target))
            try:
                found, again = side_by_side(measurer, summary.run.space, target,
                                            [r.config for r in best], reference, SIDE_ROUNDS)
            finally:
                measurer.close()
    finally:
        static_db.close()
    key = canonical_json({"script": "reproduce_tuna-e2e", "task": task.key,
                          "target": target.key, "seed": args.seed, "searcher": args.searcher})
    task_id, target_id = store.ensure_task(task), store.ensure_target(target)
    run_id = store.find_run(key) or store.start_run(
        task_id=task_id, target_id=target_id, resume_key=key, searcher=args.searcher,
        measurer=real_measurer(target), space_generator=summary.run.space.generator, pruners=(),
        cost_model="tuna", seed=args.seed, max_trials=VERIFY_TOP, max_seconds=None,
        space_size=summary.run.space.size)
    store.record(run_id=run_id, task_id=task_id, target_id=target_id, results=real,
                 template=summary.run.space.template)
    store.update_run(run_id, status="finished", stop_reason="trials")
    if again:
        again_key = reference_run_key(task, target)
        again_id = store.find_run(again_key) or store.start_run(
            task_id=task_id, target_id=target_id, resume_key=again_key,
            searcher="remeasure", measurer=real_measurer(target),
            space_generator=summary.run.space.generator, pruners=(), cost_model=None,
            seed=args.seed, max_trials=len({r.config.key for r in found + again}),
            max_seconds=None, space_size=summary.run.space.size)
        # a config on both sides has one result per round, in both lists: record it once
        both = {id(r) for r in found}
        store.record(run_id=again_id, task_id=task_id, target_id=target_id,
                     results=found + [r for r in again if id(r) not in both],
                     template=summary.run.space.template)
        store.update_run(again_id, status="finished", stop_reason="trials")
    in_sample = len({r.config.key for r in real} & {c.key for c in sample})
    return SearchE2E(args.searcher, args.static_trials, static_seconds, verify_seconds,
                     tuple(real), in_sample, tuple(found), tuple(again))


def analyze_sample(space: Space, target: TargetInfo, configs: Sequence[Config],
                   workers: int, cache_dir: Path | None = None,
                   opt_level: int | None = None) -> tuple[dict[str, Features], float, int]:
    """Features of the sample and the wall seconds and number of configs analyzed.

    Without ``cache_dir`` every config is analyzed (cold, timed). With it, features
    already in that cache are reused and the new ones added: a rescoring with other
    coefficients then analyzes nothing again, and only the configs analyzed are timed.
    """
    engine = FeatureEngine(workers=workers, cache_dir=cache_dir, use_cache=cache_dir is not None,
                           opt_level=opt_level)
    try:
        entries = engine.features(space, target, configs)
    finally:
        engine.close()
    feats = {c.key: e for c, e in zip(configs, entries) if isinstance(e, Features)}
    return feats, engine.analysis_seconds, engine.analyzed


def rank_metrics(w: Workload, coefficients: Coefficients, clock: float) -> dict[str, float]:
    keys = [k for k, r in w.real.items() if r.ok]
    measured = [w.real[k].latency for k in keys]
    predicted = [coefficients.seconds(w.features[k], clock) if k in w.features else math.inf
                 for k in keys]
    out = {"configs": float(len(keys)), "spearman": spearman(predicted, measured),
           "top10": top_k_ratio(predicted, measured, 10),
           "top50": top_k_ratio(predicted, measured, 50)}
    # Ranking check: the static top 10 of the sample, measured, vs the sample best.
    order = sorted(range(len(keys)), key=lambda i: (predicted[i], i))[:VERIFY_TOP]
    best_sample = min(measured) if measured else math.nan
    best_verified = min(measured[i] for i in order) if order else math.nan
    out["sample_top10_best"] = best_sample / best_verified if order else math.nan
    sample_wall = w.measure_per_config * len(w.sample)
    out["sample_wall"] = sample_wall
    # End to end: static tuning by search + measuring its top 10, vs the sample.
    if w.search is not None and measured:
        e2e_wall = w.search.static_seconds + w.search.verify_seconds
        now = w.search.reference_latency  # the sample's best, measured beside the search's
        out["e2e_throughput"] = (now if math.isfinite(now) else best_sample) \
            / w.search.best_latency
        out["e2e_wall"] = e2e_wall
        out["e2e_time_share"] = e2e_wall / sample_wall if sample_wall else math.nan
    else:
        out["e2e_throughput"] = out["e2e_wall"] = out["e2e_time_share"] = math.nan
    out["best_gflops"] = w.task.flops / best_sample / 1e9 if measured else math.nan
    return out


def leave_one_out(workloads: Sequence[Workload], start: Coefficients,
                  clock: float) -> dict[str, Coefficients]:
    """For each workload, coefficients fitted on all the others."""
    out = {}
    for w in workloads:
        others = [s for o in workloads if o is not w for s in o.samples()]
        out[w.task.key] = fit(others, start, clock) if others else start
    return out


def write_fit(path: Path, samples: list[Sample], target: TargetInfo,
              args: argparse.Namespace) -> None:
    """Fit coefficients on calibration samples and write them with a note of their origin."""
    import datetime

    fam = family(target)
    fitted = fit(samples, prior(fam), target.clock_ghz)
    quality = evaluate(samples, fitted, target.clock_ghz)
    info = {
        "command": "python scripts/reproduce_tuna.py " + " ".join(sys.argv[1:]),
        "target": target.key, "arch": target.arch, "threads": target.cores,
        "rounds": args.rounds, "latency": "best of the rounds of the median of 5 repeats",
        "tasks": sorted({s.group for s in samples}), "configs": len(samples),
        "objective": "pairwise logistic on log score (calibrate.fit)",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "in_sample": {json.loads(g)["op"]: {k: round(v, 4) for k, v in q.items()}
                      for g, q in quality.items()},
    }
    result = Coefficients(fam, fitted.weights, "fit", json.dumps(info, sort_keys=True))
    result.save(path)
    log(f"wrote {fam} coefficients fitted on {len(samples)} configs to {path}")


# -- report ----------------------------------------------------------------------------------

def _f(x: float, digits: int = 3) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def report(args: argparse.Namespace, target: TargetInfo, coefficients: Coefficients,
           rows: list[tuple[Workload, dict[str, float], dict[str, float] | None]],
           workers: int) -> str:
    def mean(key: str, which: int = 1) -> float:
        vals = [r[which][key] for r in rows if r[which] is not None
                and math.isfinite(r[which][key])]
        return statistics.fmean(vals) if vals else math.nan

    def meeting(key: str, ok: Any) -> str:
        """How many workloads meet a target on their own, e.g. '8 of 10 workloads'."""
        vals = [r[1][key] for r in rows if math.isfinite(r[1][key])]
        return f"{sum(1 for v in vals if ok(v))} of {len(vals)} workloads"

    analyzed = sum(w.analyzed for w, _, _ in rows)
    static_wall = sum(w.static_seconds for w, _, _ in rows)
    throughput = analyzed / static_wall / workers if static_wall else math.nan
    fitted = json.loads(coefficients.fitted)
    lines = [
        "# Tuna static cost model: reproduction (section V-B)", "",
        machine_header(), "",
        f"Command: `python scripts/reproduce_tuna.py {' '.join(sys.argv[1:])}`", "",
        f"Target: {target.arch} ({family(target)}), {target.cores} cores, "
        f"L1d {target.l1d_bytes // 1024} KiB {target.l1d_ways or '?'}-way, "
        f"L2 {target.l2_bytes // 1024} KiB {target.l2_ways or '?'}-way. "
        f"Sample: up to {args.sample} uniformly drawn configs per workload (seed {args.seed}), "
        f"measured with the `{real_measurer(target)}` measurer; history database `{args.db}`."
        + ("" if args.opt_level is None else
           f" **Static analysis of code generated at LLVM opt-level {args.opt_level}** (TVM "
           "builds, and the measurements run, at its default 3)."), "",
        "## Coefficients", "",
        f"Default: the built-in prior of {coefficients.family} (nothing fitted for this "
        "family: no shipped or user calibration)." if coefficients.source == "prior" else
        f"Default: {coefficients.source} ({coefficients.family}); fitted on "
        f"{fitted.get('configs', '?')} configs of {len(fitted.get('tasks', []))} calibration "
        "task(s) whose shapes are not in this evaluation (disjoint workloads):", "",
    ]
    for t in fitted.get("tasks", []):
        lines.append(f"- `{t}`")
    lines += ["", "Weights (cycles per unit): " + ", ".join(
        f"{n} {v:.4g}" for n, v in coefficients.weights), "",
        "LOWO: refitted on the other evaluation workloads of this table "
        "(leave one workload out), starting from the default.", "",
        "How the shipped coefficients were fitted, and the calibration data: "
        "[tuna-calibration.md](tuna-calibration.md).", "",
        "## Results", "",
        "| workload | op | space | sample | ok | top-10 | top-50 | Spearman | LOWO top-10 | "
        "LOWO top-50 | LOWO Spearman | best GFLOPS | sample's static top 10: best | "
        "e2e: best found / sample best | e2e: static s + verify s | e2e time share |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for w, m, lo in rows:
        lines.append(
            f"| {w.task.name} | {w.task.op} | {w.space_size} | {len(w.sample)} | "
            f"{int(m['configs'])} | {_f(m['top10'])} | {_f(m['top50'])} | {_f(m['spearman'])} | "
            f"{_f(lo['top10']) if lo else '-'} | {_f(lo['top50']) if lo else '-'} | "
            f"{_f(lo['spearman']) if lo else '-'} | {_f(m['best_gflops'], 1)} | "
            f"{_f(100 * m['sample_top10_best'], 1)}% | {_f(100 * m['e2e_throughput'], 1)}% | "
            + (f"{w.search.static_seconds:.0f} + {w.search.verify_seconds:.0f} of "
               f"{m['sample_wall']:.0f}" if w.search else "-")
            + f" | {_f(100 * m['e2e_time_share'], 1)}% |")
    lines.append(
        f"| **mean** | | | | | **{_f(mean('top10'))}** | **{_f(mean('top50'))}** | "
        f"**{_f(mean('spearman'))}** | {_f(mean('top10', 2))} | {_f(mean('top50', 2))} | "
        f"{_f(mean('spearman', 2))} | | {_f(100 * mean('sample_top10_best'), 1)}% | "
        f"{_f(100 * mean('e2e_throughput'), 1)}% | | {_f(100 * mean('e2e_time_share'), 1)}% |")
    if any(len(w.sample) < 100 for w, _, _ in rows):
        lines += ["", "**Smoke run: samples of fewer than 100 configs; the figures only show "
                      "that the pipeline works.**"]
    sampled = sum(len(w.sample) for w, _, _ in rows)
    if not analyzed:
        analysis = (f"Static analysis: not timed; all {sampled} configs' features came from "
                    f"the feature cache.")
    else:
        cached = (f"; the other {sampled - analyzed} came from the feature cache"
                  if analyzed < sampled else " (cold cache)")
        analysis = (f"Static analysis: {analyzed} configs in {static_wall:.1f} s wall with "
                    f"{workers} worker(s): **{_f(throughput, 2)} configs/s/core**{cached}.")
    lines += [
        "", analysis, "",
        "Definitions: top-k = sum of the k best measured latencies of the sample / sum of the "
        "measured latencies of the k configs the model ranks best (paper's top-k performance "
        "ratio against the sample's true ranking). Sample's static top 10: best = best sample "
        "latency / best measured latency among the 10 sample configs the model ranks first. "
        "e2e (end to end, as a user runs it): `orchestrator tune --measurer static --searcher "
        f"{args.searcher} --trials {args.static_trials} --verify-top {VERIFY_TOP}` on a cold "
        "feature cache, i.e. static tuning by search over the whole space, then the top 10 "
        "measured for real; best found / sample best = sample best latency / found best "
        "latency, both taken side by side after the top 10 is measured: the 3 best verified "
        f"configs and the sample's 3 best are measured again interleaved, {SIDE_ROUNDS} rounds "
        "(order reversed every other round), and each side's latency is the lowest per-config "
        "median (above 100% when the search finds a config faster than every sampled one); "
        "e2e time share = (static tuning wall time + wall time of measuring the top 10, "
        "worker start-up included) / wall time of measuring the whole sample (as timed by "
        "this script when it measured, else estimated from the recorded build and run "
        "times).", "",
        f"Targets: mean top-k ratio >= 0.87 ({'met' if min(mean('top10'), mean('top50')) >= 0.87 else 'NOT met'}); "
        f"e2e >= 90% of the sample best (mean {'met' if mean('e2e_throughput') >= 0.9 else 'NOT met'}; "
        f"{meeting('e2e_throughput', lambda v: v >= 0.9)}) in <= 25% of its wall time (mean "
        f"{'met' if mean('e2e_time_share') <= 0.25 else 'NOT met'}; "
        f"{meeting('e2e_time_share', lambda v: v <= 0.25)}).",
    ]
    return "\n".join(lines) + "\n"


# -- main ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", help="comma-separated suite names, or ';'-separated "
                                       "op:K=V,... shapes [default: 10 suite workloads]")
    p.add_argument("--sample", type=int, default=500, help="configs per workload")
    p.add_argument("--db", default="tuna-reference.db", help="history database (SQLite path)")
    p.add_argument("--out", help="markdown report [default: docs/results/tuna.md; "
                                 "a temporary file with --smoke]")
    p.add_argument("--smoke", action="store_true", help="tiny run for CI: 2 small workloads, "
                                                        "20 configs each")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default="host",
                   help="host (this CPU) or cuda (this machine's GPU; the sample is measured "
                        "with the cuda measurer, so a GPU is needed) [default: host]")
    p.add_argument("--searcher", default="tuna-es",
                   help="searcher of the end-to-end static tuning run [default: tuna-es]")
    p.add_argument("--static-trials", type=int, default=200,
                   help="configs the end-to-end static tuning scores [default: 200; "
                        "24 with --smoke]")
    p.add_argument("--no-e2e", action="store_true",
                   help="skip the end-to-end static tuning run")
    p.add_argument("--workers", type=int, default=None, help="static-analysis processes")
    p.add_argument("--coefficients", help="coefficients JSON [default: shipped/user]")
    p.add_argument("--opt-level", type=int, choices=OPT_LEVELS, default=None,
                   help="LLVM optimization level of the code the static analysis reads "
                        "[TVM's, 3]; 2 is a little faster and less accurate (the measurer option "
                        "opt_level)")
    p.add_argument("--no-lowo", action="store_true", help="skip leave-one-workload-out fits")
    p.add_argument("--feature-cache", metavar="DIR",
                   help="keep the sample's features in DIR and reuse those found there (for "
                        "rescoring with other --coefficients); the throughput then counts only "
                        "the configs analyzed [default: every config analyzed cold]")
    p.add_argument("--measure-only", action="store_true",
                   help="only measure the samples into the database (calibration data)")
    p.add_argument("--rounds", type=int, default=1,
                   help="measure each sample this many times (best kept; for calibration "
                        "data on a busy machine)")
    p.add_argument("--cores", type=int, default=None,
                   help="threads the kernels run on [default: every core]")
    p.add_argument("--fit-out", help="with --measure-only: fit coefficients on the measured "
                                     "samples and write them to this JSON file")
    args = p.parse_args(argv)
    if args.smoke:
        args.workloads = args.workloads or ",".join(SMOKE_WORKLOADS)
        args.sample = min(args.sample, 20)
        args.static_trials = min(args.static_trials, 24)
    target = resolve_target(args.target)
    tasks = parse_workloads(args.workloads or ",".join(
        GPU_WORKLOADS if target.kind == "cuda" else DEFAULT_WORKLOADS))
    out = Path(args.out) if args.out else (
        Path(tempfile.gettempdir()) / "tuna-smoke.md" if args.smoke
        else Path(__file__).resolve().parent.parent / "docs" / "results" / "tuna.md")
    workers = args.workers or cpu_cores()
    if args.cores and target.kind != "cuda":
        target = target.with_cores(args.cores)
    plugins = load_plugins()
    db = Path(args.db)
    store = HistoryStore.open(db)
    timing = Timing.open(db)
    coefficients = load(family(target), args.coefficients)
    cache_dir = Path(args.feature_cache) if args.feature_cache else None
    workloads: list[Workload] = []
    calibration: list[Sample] = []
    try:
        for task in tasks:
            log(f"{task.label()}")
            gen_name, space = make_space(plugins, task, target)
            sample = draw_sample(space, args.sample, args.seed)
            real = measure_sample(store, plugins, task, target, gen_name, space, sample,
                                  timing, args.seed, max(1, args.rounds))
            if args.measure_only:
                if args.fit_out:
                    engine = FeatureEngine(workers=workers, opt_level=args.opt_level)
                    try:
                        got = samples_for(space, target, list(real.values()), engine)
                    finally:
                        engine.close()
                    log(f"  {len(got)} calibration samples")
                    calibration.extend(got)
                continue
            feats, seconds, analyzed = analyze_sample(space, target, sample, workers, cache_dir,
                                                      args.opt_level)
            log(f"  static analysis: {analyzed} configs in {seconds:.1f} s")
            per = measuring_seconds(timing, task, list(real.values()), cpu_cores())
            search = None
            if not args.no_e2e:
                best3 = sorted((r for r in real.values() if r.ok), key=lambda r: r.latency)[:3]
                search = static_search(store, plugins, task, target, sample, args,
                                       [r.config for r in best3])
                log(f"  static tuning ({search.searcher}, {search.trials} configs): "
                    f"{search.static_seconds:.1f} s, measuring its top {VERIFY_TOP}: "
                    f"{search.verify_seconds:.1f} s")
            workloads.append(Workload(task, space.size, sample, real, feats, seconds, analyzed,
                                      per, search))
    finally:
        store.close()
    if args.measure_only:
        log(f"measured samples are in {db}")
        if args.fit_out:
            write_fit(Path(args.fit_out), calibration, target, args)
        return 0
    lowo = {} if args.no_lowo or len(workloads) < 2 else leave_one_out(
        workloads, coefficients if coefficients.source != "prior" else prior(family(target)),
        target.clock_ghz)
    rows = []
    for w in workloads:
        m = rank_metrics(w, coefficients, target.clock_ghz)
        lo = rank_metrics(w, lowo[w.task.key], target.clock_ghz) if w.task.key in lowo else None
        rows.append((w, m, lo))
        log(f"{w.task.name}: top-10 {_f(m['top10'])} top-50 {_f(m['top50'])} "
            f"spearman {_f(m['spearman'])} e2e {_f(m['e2e_throughput'])} "
            f"time share {_f(m['e2e_time_share'])}")
    text = report(args, target, coefficients, rows, workers)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
