"""Which Tuna features rank configs best: the study behind the shipped feature set.

Reads measured configs from two history databases (the reference sample written by
``reproduce_tuna.py`` and the calibration data, other shapes), computes the raw counts
the features are made of for each config (``plugins.tuna.features.raw_counts``: every
instruction class, scheduled cycles, both data movements), and ranks the reference
workloads with several feature sets, each

* with its prior alone (no fit),
* fitted on the calibration data (``calibrate.fit``, strong and weak pull towards the
  prior) and ranking the reference workloads, as the shipped coefficients are made, and
* leave one workload out (LOWO): fitted on the other reference workloads, ranking the
  one left out, which shows whether per-feature weights transfer between workloads.

Writes a markdown table of mean top-10 / top-50 ratios and Spearman correlations (as
``reproduce_tuna.py`` defines them) and the per-workload figures of the shipped set.
The raw counts are kept in a JSON-lines file (``--counts``) and reused while the Tuna
sources and the TVM version are unchanged.

    python scripts/tuna_feature_study.py --reference-db tuna-reference.db \\
        --calibration-db calib1.db [--per-workload 300] [--out docs/results/tuna-features.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

os.environ.setdefault("TVM_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from machine import machine_header  # noqa: E402

import reproduce_tuna as rt  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.target import TargetInfo, cpu_cores, resolve_target  # noqa: E402
from plugins.tuna.calibrate import FitOptions, Sample, fit  # noqa: E402
from plugins.tuna.coefficients import PRIOR, Coefficients, shipped  # noqa: E402
from plugins.tuna.cache import template_fingerprint, tvm_version  # noqa: E402
from plugins.tuna.features import (FEATURES, feature_values, raw_count, raw_counts,  # noqa: E402
                                   scheduled_module)
from plugins.tuna.metrics import spearman, top_k_ratio  # noqa: E402

CALIBRATION_WORKLOADS = (
    "dense:M=256,K=512,N=512;batch_matmul:B=8,M=64,K=96,N=192;"
    "conv2d:N=1,C=32,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1;"
    "depthwise_conv2d:N=1,C=96,H=28,W=28,R=3,S=3,stride=1,pad=1")
# LOWO fits ten times; fewer steps and pairs keep it to a minute (as for the table of
# docs/results/tuna-calibration.md).
LOWO_OPTIONS = FitOptions(steps=200, learning_rate=0.1, max_pairs=5000)
WEAK_PULL = 1e-3


# -- feature sets ---------------------------------------------------------------------------

def _paper(raw: dict[str, float]) -> dict[str, float]:
    """Version 2 (the paper's classes): ``other`` = every instruction not counted in
    ``fma``, ``vload`` (not folded) or ``vstore``."""
    v = feature_values(raw)
    other = raw_count(raw, "instructions") - v["fma"] - v["vstore"] - raw_count(raw, "vload")
    return {**v, "other": max(0.0, other)}


@dataclass(frozen=True)
class FeatureSet:
    name: str
    values: Callable[[dict[str, float]], dict[str, float]]
    prior: dict[str, float]  # cycles per unit, as coefficients.PRIOR


_V3 = PRIOR["znver4"]
# Version 2 with the same prior as version 3: an instruction slot plus the class's extra.
_V2_PRIOR = {"fma": _V3["instructions"] + _V3["fma"], "vload": _V3["instructions"] + _V3["vload"],
             "vstore": _V3["instructions"] + _V3["vstore"], "other": _V3["instructions"],
             "ilp": _V3["ilp"], "l1": _V3["l1"], "l2": _V3["l2"]}
FEATURE_SETS = (
    FeatureSet("version 3 (shipped): " + ", ".join(FEATURES), feature_values, dict(_V3)),
    FeatureSet("version 2 (paper): fma, vload, vstore, other, ilp, l1, l2", _paper, _V2_PRIOR),
    FeatureSet("instructions alone", feature_values, {"instructions": _V3["instructions"]}),
)


# -- raw counts -----------------------------------------------------------------------------

def code_version() -> dict[str, str]:
    """What the raw counts depend on: the Tuna sources and TVM."""
    return {"tuna": template_fingerprint("plugins.tuna.features:raw_counts"),
            "tvm": tvm_version()}


_JOBS: dict[str, Any] = {}  # set before the worker processes fork


def _count_one(job: tuple[str, str, str, float]) -> dict[str, Any]:
    kind, group, key, latency = job
    space, configs, target = _JOBS[group]
    try:
        mod = scheduled_module(space.schedule_fn, space.task, configs[key], target)
        return {"set": kind, "group": group, "config": key, "latency": latency,
                "raw": raw_counts(mod, target)}
    except Exception as exc:  # a config the analysis cannot handle: reported, skipped
        return {"set": kind, "group": group, "config": key, "error": repr(exc)[:300]}


def collect_jobs(kind: str, db: str, workloads: str, target: TargetInfo, per_workload: int | None,
                 plugins: Any) -> list[tuple[str, str, str, float]]:
    if "://" not in db and not Path(db).exists():
        raise OrchestratorError(f"the {kind} database {db} does not exist; measure its "
                                f"workloads first: scripts/reproduce_tuna.py --measure-only "
                                f"--workloads ... --db {db}")
    store = HistoryStore.open(db, create=False)
    jobs = []
    try:
        for task in rt.parse_workloads(workloads):
            _, space = rt.make_space(plugins, task, target)
            results = [r for r in rt.measured_results(store, task, target).values() if r.ok]
            if len(results) < 3:
                raise OrchestratorError(
                    f"{db} has {len(results)} measured configs of {task.name} on "
                    f"{target.key}; measure them first (scripts/reproduce_tuna.py "
                    "--measure-only)")
            results.sort(key=lambda r: r.config.key)  # history order is not fixed
            random.Random(0).shuffle(results)
            results = results[:per_workload] if per_workload else results
            group = f"{kind}:{task.name}"
            _JOBS[group] = (space, {r.config.key: r.config for r in results}, target)
            jobs += [(kind, group, r.config.key, r.latency) for r in results]
    finally:
        store.close()
    return jobs


def load_counts(path: Path, version: dict[str, str]) -> list[dict[str, Any]] | None:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    if not lines or json.loads(lines[0]).get("header") != version:
        return None
    return [json.loads(line) for line in lines[1:]]


def compute_counts(jobs: list[tuple[str, str, str, float]], path: Path, workers: int,
                   version: dict[str, str]) -> list[dict[str, Any]]:
    records = []
    start = time.monotonic()
    with get_context("fork").Pool(workers) as pool, open(path, "w") as f:
        f.write(json.dumps({"header": version}) + "\n")
        for i, rec in enumerate(pool.imap_unordered(_count_one, jobs, chunksize=4), 1):
            f.write(json.dumps(rec) + "\n")
            records.append(rec)
            if i % 100 == 0 or i == len(jobs):
                rt.log(f"  analyzed {i}/{len(jobs)} configs ({time.monotonic() - start:.0f} s)")
    return records


# -- evaluation -----------------------------------------------------------------------------

def samples(records: Sequence[dict[str, Any]], kind: str, fs: FeatureSet) -> list[Sample]:
    names = tuple(fs.prior)
    out = []
    for r in records:
        if r["set"] == kind and "raw" in r:
            values = fs.values(r["raw"])
            out.append(Sample(r["group"], tuple(values[n] for n in names), r["latency"]))
    return out


def coefficients_of(fs: FeatureSet, weights: dict[str, float] | None = None) -> Coefficients:
    w = weights or fs.prior
    return Coefficients("znver4", tuple((n, float(w[n])) for n in fs.prior), "study")


def rank(group: Sequence[Sample], coefficients: Coefficients) -> tuple[float, float, float]:
    w = np.array([v for _, v in coefficients.weights])
    predicted = [float(np.dot(s.features, w)) for s in group]
    measured = [s.latency for s in group]
    return (top_k_ratio(predicted, measured, 10), top_k_ratio(predicted, measured, 50),
            spearman(predicted, measured))


def by_group(items: Sequence[Sample]) -> dict[str, list[Sample]]:
    out: dict[str, list[Sample]] = {}
    for s in items:
        out.setdefault(s.group, []).append(s)
    return out


@dataclass(frozen=True)
class Row:
    feature_set: str
    method: str
    per_workload: dict[str, tuple[float, float, float]]

    def mean(self) -> tuple[float, float, float]:
        vals = np.array(list(self.per_workload.values()), float)
        return tuple(float(x) for x in np.nanmean(vals, axis=0))  # type: ignore[return-value]


def evaluate_sets(records: Sequence[dict[str, Any]], clock: float) -> list[Row]:
    rows = []
    for fs in FEATURE_SETS:
        ref = by_group(samples(records, "reference", fs))
        cal = samples(records, "calibration", fs)
        start = coefficients_of(fs)
        rows.append(Row(fs.name, "prior alone",
                        {g: rank(m, start) for g, m in ref.items()}))
        if len(fs.prior) > 1:
            for label, strength in (("strong pull", FitOptions().prior_strength),
                                    ("weak pull", WEAK_PULL)):
                opts = dataclasses.replace(FitOptions(), prior_strength=strength)
                fitted = fit(cal, start, clock, opts)
                rows.append(Row(fs.name, f"fitted on calibration, {label}",
                                {g: rank(m, fitted) for g, m in ref.items()}))
            lowo = {}
            for g, members in ref.items():
                others = [s for h, ms in ref.items() if h != g for s in ms]
                lowo[g] = rank(members, fit(others, start, clock, LOWO_OPTIONS))
            rows.append(Row(fs.name, "LOWO on reference, strong pull", lowo))
        if fs.values is feature_values and len(fs.prior) == len(FEATURES):
            ship = shipped("znver4")
            if ship is not None:
                rows.append(Row(fs.name, "shipped coefficients (plugins/tuna/data)",
                                {g: rank(m, ship) for g, m in ref.items()}))
    return rows


def _f(x: float) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.3f}"


def report(rows: Sequence[Row], records: Sequence[dict[str, Any]], args: argparse.Namespace,
           seconds: float) -> str:
    ok = [r for r in records if "raw" in r]
    failed = [r for r in records if "raw" not in r]
    n_ref = sum(1 for r in ok if r["set"] == "reference")
    n_cal = len(ok) - n_ref
    lines = [
        "# Tuna features: which set ranks configs best",
        "",
        "Written by `scripts/tuna_feature_study.py` (the study behind the shipped feature",
        "set; the evaluation itself is [tuna.md](tuna.md), the fit",
        "[tuna-calibration.md](tuna-calibration.md)).",
        "",
        machine_header(),
        f"- Command: `python scripts/tuna_feature_study.py {' '.join(sys.argv[1:])}`",
        f"- Configs: {n_ref} of the reference sample ({args.reference_db}, up to "
        f"{args.per_workload} per workload, shuffled with seed 0) and {n_cal} calibration "
        f"configs ({args.calibration_db}, other shapes); {len(failed)} could not be "
        f"analyzed; counting took {seconds:.0f} s (0 when reused from {args.counts}).",
        "- Latencies are those measured in the databases; only the static analysis ran now.",
        "",
        "Mean over the reference workloads of top-10 ratio / top-50 ratio / Spearman",
        "(score vs measured latency):",
        "",
        "| feature set | coefficients | top-10 | top-50 | Spearman |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        t10, t50, rho = row.mean()
        lines.append(f"| {row.feature_set} | {row.method} | {_f(t10)} | {_f(t50)} | {_f(rho)} |")
    lines += ["", "Fits: `plugins.tuna.calibrate.fit` (pairwise logistic loss on log scores, "
              f"pull towards the prior {FitOptions().prior_strength} strong, {WEAK_PULL} weak; "
              f"LOWO with {LOWO_OPTIONS.steps} steps of {LOWO_OPTIONS.learning_rate} on at most "
              f"{LOWO_OPTIONS.max_pairs} pairs per workload). Version 2's prior is version 3's "
              "re-expressed: an instruction slot plus the class's extra cost.", ""]
    detail = [r for r in rows if r.method.startswith("fitted on calibration, strong")
              and r.feature_set == FEATURE_SETS[0].name]
    lowo = [r for r in rows if r.method.startswith("LOWO") and r.feature_set == FEATURE_SETS[0].name]
    if detail and lowo:
        lines += ["Per workload, version 3 (top-10 / top-50 / Spearman):", "",
                  "| workload | fitted on calibration | LOWO |", "|---|---|---|"]
        for g in sorted(detail[0].per_workload):
            a = detail[0].per_workload[g]
            b = lowo[0].per_workload.get(g, (math.nan,) * 3)
            lines.append(f"| {g.split(':', 1)[1]} | {' / '.join(_f(x) for x in a)} | "
                         f"{' / '.join(_f(x) for x in b)} |")
        lines.append("")
    if failed:
        lines += ["Configs the analysis failed on:", ""]
        lines += [f"- {r['group']} {r['config']}: {r['error']}" for r in failed[:20]]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reference-db", default="tuna-reference.db")
    p.add_argument("--workloads", default=",".join(rt.DEFAULT_WORKLOADS),
                   help="reference workloads (suite names or op:shape, as reproduce_tuna.py)")
    p.add_argument("--per-workload", type=int, default=300,
                   help="measured configs per reference workload to analyze [300]")
    p.add_argument("--calibration-db", required=True)
    p.add_argument("--calibration-workloads", default=CALIBRATION_WORKLOADS)
    p.add_argument("--calibration-cores", type=int, default=1,
                   help="threads the calibration data was measured with [1]")
    p.add_argument("--counts", default="tuna-feature-counts.jsonl",
                   help="raw counts file, reused while the code is unchanged")
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--out", default="docs/results/tuna-features.md")
    args = p.parse_args(argv)
    try:
        from orchestrator.manager import load_plugins

        plugins = load_plugins()
        target = resolve_target("host")
        cal_target = dataclasses.replace(target, cores=args.calibration_cores, tvm=tuple(
            (k, args.calibration_cores if k == "num-cores" else v) for k, v in target.tvm))
        version = {**code_version(), "reference": args.workloads,
                   "calibration": args.calibration_workloads,
                   "per_workload": str(args.per_workload)}
        jobs = collect_jobs("reference", args.reference_db, args.workloads, target,
                            args.per_workload, plugins)
        jobs += collect_jobs("calibration", args.calibration_db, args.calibration_workloads,
                             cal_target, None, plugins)
        counts = Path(args.counts)
        start = time.monotonic()
        records = load_counts(counts, version)
        if records is None:
            rt.log(f"analyzing {len(jobs)} configs into {counts}")
            records = compute_counts(jobs, counts, args.workers or cpu_cores(), version)
        else:
            rt.log(f"reusing the raw counts of {counts}")
        seconds = time.monotonic() - start
        rows = evaluate_sets(records, target.clock_ghz)
    except OrchestratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    text = report(rows, records, args, seconds)
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
