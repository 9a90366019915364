"""Fit the coefficients of equation 2 to measured history (a ranking objective).

Only the order of configs within a task matters to a tuner, so the fit maximizes
agreement of orders: for every pair of configs of the same task where one measured
clearly faster, a logistic loss on the difference of their log scores. Pairs whose
faster config is among the task's best tenth weigh more (the top of the ranking is what
a tuner keeps). Coefficients stay positive (fitted as logarithms) and are pulled
firmly towards the prior (``prior_strength``: fits on a few calibration tasks ranked
held-out workloads no better than the prior alone), then scaled as a whole so that
predicted seconds match measured seconds in the median (ranking is unchanged by the
scale).

``calibrate_command`` is ``orchestrator calibrate --cost-model tuna``: it reads every
real (not static) ok measurement of the target from the history database, analyzes
those configs (cached, in parallel) and writes the fitted coefficients.
"""

from __future__ import annotations

import datetime
import json
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.errors import OrchestratorError
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.tuna.arch import family
from plugins.tuna.coefficients import Coefficients, load, prior, user_path
from plugins.tuna.engine import FeatureEngine
from plugins.tuna.features import Features, feature_names
from plugins.tuna.metrics import spearman, top_k_ratio

# Results from these measurers are not real timings.
NOT_MEASURED = ("static", "replay", "synthetic", "space")
MIN_CONFIGS = 8


@dataclass(frozen=True)
class Sample:
    """One measured config: its task (the ranking group), features and latency."""

    group: str
    features: tuple[float, ...]
    latency: float


@dataclass(frozen=True)
class FitOptions:
    steps: int = 600
    learning_rate: float = 0.05
    temperature: float = 0.1
    prior_strength: float = 0.1
    top_share: float = 0.1
    top_weight: float = 4.0
    margin: float = 0.03
    max_pairs: int = 20000
    seed: int = 0


def _pairs(latency: np.ndarray, opts: FitOptions,
           rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(faster, slower, weight) index arrays of the clearly ordered pairs of one group."""
    n = len(latency)
    order = np.argsort(latency, kind="stable")
    top = np.zeros(n, bool)
    top[order[:max(1, math.ceil(opts.top_share * n))]] = True
    faster, slower = np.nonzero(latency[:, None] < latency[None, :] * (1.0 - opts.margin))
    if len(faster) > opts.max_pairs:
        keep = np.array(sorted(rng.sample(range(len(faster)), opts.max_pairs)), int)
        faster, slower = faster[keep], slower[keep]
    weight = 1.0 + opts.top_weight * top[faster]
    return faster, slower, weight


def fit(samples: Sequence[Sample], start: Coefficients, clock_ghz: float,
        options: FitOptions | None = None) -> Coefficients:
    """Coefficients ranking ``samples`` (grouped by task) like their measured latencies."""
    opts = options or FitOptions()
    rng = random.Random(opts.seed)
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        if s.latency > 0 and math.isfinite(s.latency):
            groups.setdefault(s.group, []).append(s)
    data = []
    for members in groups.values():
        if len(members) < 3:
            continue
        feats = np.array([m.features for m in members], float)
        lat = np.array([m.latency for m in members], float)
        f, s, w = _pairs(lat, opts, rng)
        if len(f):
            data.append((feats, f, s, w / w.sum()))
    if not data:
        raise OrchestratorError("calibration needs at least one task with 3 or more "
                                "measured configs of different speed")
    names = tuple(n for n, _ in start.weights)  # sample features are in this order
    w0 = np.array([max(w, 1e-9) for _, w in start.weights])
    theta0 = np.log(w0)
    theta = theta0.copy()
    m_t = np.zeros_like(theta)
    v_t = np.zeros_like(theta)
    for step in range(1, opts.steps + 1):
        weights = np.exp(theta)
        grad = 2 * opts.prior_strength * (theta - theta0)
        for feats, f, s, w in data:
            score = feats @ weights + 1e-30
            share = feats * weights / score[:, None]  # d log score / d theta
            margin = np.log(score[s]) - np.log(score[f])
            g = -w * _sigmoid(-margin / opts.temperature) / opts.temperature
            grad += (g[:, None] * (share[s] - share[f])).sum(axis=0) / len(data)
        m_t = 0.9 * m_t + 0.1 * grad
        v_t = 0.999 * v_t + 0.001 * grad * grad
        theta -= opts.learning_rate * (m_t / (1 - 0.9 ** step)) / (
            np.sqrt(v_t / (1 - 0.999 ** step)) + 1e-8)
    weights = np.exp(theta)
    # One overall scale: predicted seconds match measured seconds in the median.
    logs = [math.log(m.latency) - math.log(float(np.dot(m.features, weights))
                                           / (clock_ghz * 1e9))
            for members in groups.values() for m in members if np.dot(m.features, weights) > 0]
    scale = math.exp(float(np.median(logs))) if logs else 1.0
    weights = weights * scale
    return Coefficients(start.family, tuple((n, float(w)) for n, w in zip(names, weights)),
                        "fit")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def evaluate(samples: Sequence[Sample], coefficients: Coefficients,
             clock_ghz: float) -> dict[str, dict[str, float]]:
    """Per group: Spearman correlation and top-1/10 ratios of the coefficients' ranking."""
    groups: dict[str, list[Sample]] = {}
    for s in samples:
        groups.setdefault(s.group, []).append(s)
    out = {}
    for g, members in groups.items():
        names = feature_names(coefficients.family)
        pred = [coefficients.seconds(_features(m.features, names), clock_ghz) for m in members]
        lat = [m.latency for m in members]
        out[g] = {"configs": len(members), "spearman": spearman(pred, lat),
                  "top1": top_k_ratio(pred, lat, 1), "top10": top_k_ratio(pred, lat, 10)}
    return out


def _features(values: Sequence[float], names: tuple[str, ...]) -> Features:
    return Features(tuple(zip(names, (float(v) for v in values))))


# -- history -> samples ------------------------------------------------------------------

def real_results(results: Sequence[MeasureResult]) -> dict[str, MeasureResult]:
    """The best real (not static, not replayed) ok result of each config."""
    best: dict[str, MeasureResult] = {}
    for r in results:
        if r.ok and r.measurer not in NOT_MEASURED:
            if r.config.key not in best or r.latency < best[r.config.key].latency:
                best[r.config.key] = r
    return best


def samples_for(space: Space, target: TargetInfo, results: Sequence[MeasureResult],
                engine: FeatureEngine) -> list[Sample]:
    """Samples of one task: its real measurements joined with their features."""
    best = real_results(results)
    configs: list[Config] = [r.config for r in best.values() if space.validate(r.config) is None]
    entries = engine.features(space, target, configs)
    from plugins.tuna.arch import family

    names = feature_names(family(target))
    return [Sample(space.task.key, tuple(e.vector(names)), best[c.key].latency)
            for c, e in zip(configs, entries) if isinstance(e, Features)]


def space_for(task: Task, target: TargetInfo, plugins: Any, generator: str | None) -> Space:
    from orchestrator.loop import choose_space_generator

    try:
        _, gen = choose_space_generator(plugins, task, target, generator)
    except OrchestratorError:
        _, gen = choose_space_generator(plugins, task, target, None)
    return gen.generate(task, target)


def history_samples(store: Any, target: TargetInfo, engine: FeatureEngine,
                    plugins: Any, *, exclude: Sequence[str] = (),
                    log: Any = None) -> list[Sample]:
    """Samples of every task with enough real measurements of ``target`` in ``store``."""
    from history.models import RunRow

    target_id = store.find_target(target)
    if target_id is None:
        return []
    out: list[Sample] = []
    for task_id, task in store.tasks():
        if task.key in exclude or task.name in exclude:
            continue
        results = store.results(task_id, target_id, ok_only=True)
        if len(real_results(results)) < MIN_CONFIGS:
            continue
        # the newest run that names a space generator (an import's names none)
        runs = store.runs(where=[RunRow.task_id == task_id, RunRow.space_generator != ""],
                          limit=1)
        generator = runs[0].space_generator if runs else None
        space = space_for(task, target, plugins, generator)
        got = samples_for(space, target, results, engine)
        if log:
            log(f"  {task.label()}: {len(got)} configs")
        out.extend(got)
    return out


def calibrate_command(cost_model: str, db: str | None, target: str, out: Path | None) -> int:
    """``orchestrator calibrate --cost-model tuna``: fit and store coefficients.

    Reads the history database ``db`` (default as for ``tune``), fits the coefficients
    for ``target``'s architecture family from its real measurements and writes them to
    ``out`` (default: the user config dir, where the ``tuna`` cost model and the
    ``static`` measurer look first). Returns the exit code.
    """
    if cost_model != "tuna":
        raise OrchestratorError(f"cannot calibrate cost model {cost_model!r}; only 'tuna' "
                                "has coefficients to fit")
    from history.store import HistoryStore
    from orchestrator.manager import load_plugins
    from orchestrator.target import resolve_target

    tgt = resolve_target(target)
    fam = family(tgt)
    store = HistoryStore.open(db, create=False)
    engine = FeatureEngine()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr)

    try:
        log(f"reading real measurements on {tgt.arch} ({fam}) from {store.url}")
        samples = history_samples(store, tgt, engine, load_plugins(), log=log)
    finally:
        engine.close()
        store.close()
    groups = {s.group for s in samples}
    if not groups:
        raise OrchestratorError(
            f"no task has {MIN_CONFIGS} or more real measurements on this target in the "
            "history; tune some workloads with the local measurer first")
    start = load(fam)
    fitted = fit(samples, start if start.source != "prior" else prior(fam), tgt.clock_ghz)
    before = evaluate(samples, start, tgt.clock_ghz)
    after = evaluate(samples, fitted, tgt.clock_ghz)
    info = {"target": tgt.key, "arch": tgt.arch, "tasks": sorted(groups),
            "configs": len(samples), "objective": "pairwise logistic on log score",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "spearman_mean": _mean(v["spearman"] for v in after.values()),
            "top10_mean": _mean(v["top10"] for v in after.values())}
    result = Coefficients(fam, fitted.weights, "fit", json.dumps(info, sort_keys=True))
    path = result.save(out or user_path(fam))
    for g in sorted(groups):
        log(f"  {json.loads(g)['op']} {json.loads(g)['shape']}: spearman "
            f"{before[g]['spearman']:.3f} -> {after[g]['spearman']:.3f}, top-10 ratio "
            f"{before[g]['top10']:.3f} -> {after[g]['top10']:.3f}")
    print(f"wrote {fam} coefficients fitted on {len(samples)} configs of {len(groups)} "
          f"task(s) to {path}")
    return 0


def _mean(values: Any) -> float:
    vals = [v for v in values if isinstance(v, float) and math.isfinite(v)]
    return sum(vals) / len(vals) if vals else math.nan
