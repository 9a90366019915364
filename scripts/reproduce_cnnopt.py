"""Reproduce CNNOpt (Xu et al., PACT'22) on ResNet-18's conv2d layers for NVIDIA GPUs.

Without a GPU (the default): for every ResNet-18 conv layer of the built-in suite
(``r18_*``), the size of the full cnnopt space, of the schema (32-thread warps) and of
the pruned space (``cnnopt-capacity``) on the H100 and the T4 (the paper's Table 3),
and PTX-level static features of the analytical model's top-5 configs (ptxas registers,
spills and shared memory; FMA and load/store counts from plugins/cuda/ptx.py). Nothing
is run on a GPU and the report says so.

With ``--measure`` (needs an NVIDIA GPU; first run on an H100, docs/results/gpu-h100.md):
measures random training problems with the ``cuda`` measurer, trains the ``cnnopt-ml``
and ``cnnopt-hybrid`` models, then per ResNet-18 layer measures the models' top-30 plus a
reference set (the whole pruned space when it is small enough) and reports the loss of
performance (LoP, equation 5) of the top-30 of the analytical, ML and hybrid models
(Table 9) and the trials each needs to reach 95% of the best (Table 8); ``--vendor`` adds
PyTorch cuDNN and MetaSchedule beside our best kernel. Every measurement goes into the
history database (``--db``): a rerun resumes from it (``--deadline`` stops a run cleanly),
and ``--replay`` recomputes the report from it without a GPU.

    python scripts/reproduce_cnnopt.py [--smoke] [--out docs/results/cnnopt.md]
    python scripts/reproduce_cnnopt.py --measure [--db cnnopt.db] [--train-problems 40]
    python scripts/reproduce_cnnopt.py --measure --replay --db h100.db ...   # no GPU
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from gpu_bench import Bench, DeadlineReached  # noqa: E402
from machine import machine_header  # noqa: E402

from orchestrator.errors import OrchestratorError, TargetError  # noqa: E402
from orchestrator.gpus import GPUS, gpu_spec, local_gpu_names  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.suite import read_suite  # noqa: E402
from orchestrator.target import TargetInfo, resolve_target  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from plugins.cnnopt.analytical import AnalyticalModel  # noqa: E402
from plugins.cnnopt.capacity import CapacityPruner, Rules, capacity_configs  # noqa: E402
from plugins.cnnopt.generator import CnnoptSpaces  # noqa: E402
from plugins.cnnopt.plan import plan_config  # noqa: E402
from plugins.cnnopt.schema import dims_of, tiles_of, warp_shapes  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "results" / "cnnopt.md"
DEFAULT_VENDOR = ROOT / "docs" / "results" / "data" / "cnnopt-vendor.json"
SIZE_GPUS = ("h100", "t4")
SMOKE_LAYERS = ("r18_l4",)
PAPER_TABLE_3 = {"r18_c1": 423, "r18_l1": 2429, "r18_l2a": 1398, "r18_l2": 2161,
                 "r18_l3a": 876, "r18_l3": 1017, "r18_l4a": 150, "r18_l4": 159}
TOP_N = 30
WALK_STEP = 8  # configs measured at a time while walking a model's order


def layers(only: Sequence[str]) -> list[Task]:
    tasks = [t for t in read_suite() if (t.name or "").startswith("r18_")]
    return [t for t in tasks if not only or t.name in only]


# -- sizes (Table 3) ----------------------------------------------------------------------

def schema_size(space: Space) -> int:
    """Configs of the space whose warp is T_x T_y T_k = 32 (counted, not enumerated)."""
    dims = dims_of(space.task)
    count: dict[str, dict[int, int]] = {}
    for name in ("tile_x", "tile_y", "tile_k"):
        per: dict[int, int] = {}
        for c in space.knob(name).choices:
            per[c[2]] = per.get(c[2], 0) + 1
        count[name] = per
    shapes = sum(count["tile_x"].get(a, 0) * count["tile_y"].get(b, 0) * count["tile_k"].get(c, 0)
                 for a, b, c in warp_shapes(dims))
    return shapes * len(space.knob("tile_c").choices) * len(space.knob("kernel").choices)


@dataclass
class LayerSizes:
    task: Task
    full: int
    schema: int
    pruned: dict[str, int] = field(default_factory=dict)        # default rules
    capacity_only: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def sizes(task: Task, gpus: Sequence[str], with_capacity_only: bool) -> LayerSizes:
    t0 = time.perf_counter()
    gen = CnnoptSpaces()
    space = gen.generate(task, GPUS[gpus[0]].target())
    out = LayerSizes(task, space.size, schema_size(space))
    for name in gpus:
        space = gen.generate(task, GPUS[name].target())
        out.pruned[name] = sum(1 for _ in capacity_configs(space, GPUS[name]))
        if with_capacity_only:
            out.capacity_only[name] = sum(
                1 for _ in capacity_configs(space, GPUS[name], Rules.capacity_only()))
    out.seconds = time.perf_counter() - t0
    return out


# -- top configs and their PTX (static) ---------------------------------------------------

@dataclass
class TopConfig:
    task: Task
    rank: int
    config: Config
    est_seconds: float
    regs_estimate: int
    smem: int
    threads: int
    grid: int
    fma_expected: float
    ptx: dict[str, float] | None
    ptx_error: str = ""


def top_configs(task: Task, target: TargetInfo, k: int, with_ptx: bool) -> list[TopConfig]:
    gpu = gpu_spec(target)
    pruned = CapacityPruner().prune(CnnoptSpaces().generate(task, target), target)
    configs = list(pruned.candidates[:k])
    est = AnalyticalModel(gpu).estimate_configs(pruned, configs)
    dims = dims_of(task)
    out = []
    for i, (cfg, secs) in enumerate(zip(configs, est), start=1):
        plan = plan_config(task, cfg, target)
        t = tiles_of(dims, cfg)
        fma = t.outputs_per_thread * (dims.c // t.bc) * dims.fy * dims.fx
        ptx, error = None, ""
        if with_ptx:
            try:
                from plugins.cuda.ptx import static_features

                ptx = static_features(pruned, cfg, target)
            except (OrchestratorError, ImportError) as exc:
                error = str(exc).splitlines()[0][:120]
        out.append(TopConfig(task, i, cfg, secs, plan.regs_per_thread,
                             plan.smem_bytes_per_block, plan.threads_per_block,
                             plan.grid_blocks, float(fma), ptx, error))
    return out


def have_ptx_tools() -> bool:
    return shutil.which("nvcc") is not None and shutil.which("ptxas") is not None


# -- measurement (a GPU, or --replay from the history) -------------------------------------

@dataclass
class LayerEval:
    task: Task
    pruned: int
    measured: int
    exhaustive: bool
    best_seconds: float
    lop: dict[str, float]
    trials95: dict[str, int | None]
    tops: dict[str, list[Config]] = field(default_factory=dict)  # each model's top-N
    space: Space | None = None
    best_outside: float = math.inf  # best measured config the pruner dropped, if any


def training_tasks(rng: random.Random, count: int, exclude: set[str], max_xy: int = 112,
                   max_channels: int = 512) -> list[Task]:
    from plugins.cnnopt.training import random_problems

    tasks: list[Task] = []
    gen, probe = CnnoptSpaces(), GPUS["h100"].target()
    while len(tasks) < count:
        stride = 1 if len(tasks) % 2 == 0 else 2
        for t in random_problems(rng, 1, stride=stride, max_xy=max_xy,
                                 max_channels=max_channels):
            if t.key not in exclude and gen.supports(t, probe):
                tasks.append(t)
    return tasks


def train_models(bench: Bench, target: TargetInfo, args: argparse.Namespace,
                 log: Any) -> dict[str, Any]:
    from plugins.cnnopt.regression import user_path
    from plugins.cnnopt.training import concat, task_samples, train
    from orchestrator.result import MeasureResult, MeasureStatus

    gpu = gpu_spec(target)
    rng = random.Random(args.seed)
    exclude = {t.key for t in layers(())}
    parts: dict[str, list[Any]] = {"ml": [], "hybrid": []}
    tasks = training_tasks(rng, args.train_problems, exclude, args.train_max_xy,
                           args.train_max_channels)
    for i, task in enumerate(tasks, start=1):
        # What the history already holds for this problem is its training sample (a rerun
        # resumes without enumerating the space again); otherwise draw from the pruned space.
        space = CnnoptSpaces().generate(task, target)
        known = list(bench.measured_latencies(space))
        if len(known) >= args.train_configs:
            configs = known[:args.train_configs]
        else:
            try:
                space = CapacityPruner(rank=False).prune(space, target)
            except OrchestratorError as exc:
                log(f"  training problem {task.label()}: skipped ({exc})")
                continue
            configs = list(space.candidates)
            rng.shuffle(configs)
            configs = configs[:args.train_configs]
        secs = bench.measure(space, configs)
        results = [MeasureResult(c, MeasureStatus.OK, (s,), measurer="cuda")
                   for c, s in zip(configs, secs) if math.isfinite(s)]
        log(f"  training problem {i}/{args.train_problems} {task.label()}: "
            f"{len(results)}/{len(configs)} ok")
        for kind in parts:
            parts[kind].append(task_samples(space, results, kind, gpu))
    models = {}
    for kind, p in parts.items():
        model = train(concat(p, kind), kind, gpu.name, seed=args.seed)
        path = model.save(user_path(gpu.name, kind))
        log(f"  trained cnnopt-{kind} on {model.info['samples']} configs -> {path}")
        models[kind] = model
    return models


def evaluate_layer(bench: Bench, task: Task, target: TargetInfo, models: dict[str, Any],
                   args: argparse.Namespace) -> LayerEval:
    from plugins.cnnopt.cost_models import AnalyticalCostModel, RegressionCostModel
    from plugins.cnnopt.metrics import lop

    space = CapacityPruner().prune(CnnoptSpaces().generate(task, target), target)
    configs = list(space.candidates)
    predicted = {"analytical": AnalyticalCostModel(target=target).seconds(space, configs)}
    for kind, model in models.items():
        predicted[kind] = RegressionCostModel.with_model(model, target).seconds(space, configs)
    orders = {name: sorted(range(len(configs)), key=lambda i, p=p: p[i])
              for name, p in predicted.items()}
    exhaustive = len(configs) <= args.exhaustive
    if exhaustive:
        reference = configs
    else:
        sample = random.Random(args.seed).sample(configs, min(args.reference, len(configs)))
        reference = sample + [configs[i] for o in orders.values() for i in o[:TOP_N]]
    bench.measure(space, reference)
    # Trials to 95%: walk each model's order, measuring in batches, until a config is
    # within 95% of the best measured so far; a second pass catches up with a best
    # found later (measured configs are answered from the cache).
    for _ in range(2):
        for order in orders.values():
            for start in range(0, min(args.max_trials, len(order)), WALK_STEP):
                chunk = [configs[i] for i in order[start:start + WALK_STEP]]
                secs = bench.measure(space, chunk)
                best = min(bench.measured_latencies(space).values())
                if any(math.isfinite(t) and best / t >= 0.95 for t in secs):
                    break
    # LoP is against the best of the pruned space (the paper's exhaustive search of it);
    # other runs sharing the database (PSA) may have measured configs outside it.
    everything = bench.measured_latencies(space)
    pruned = set(configs)
    measured = {c: v for c, v in everything.items() if c in pruned}
    best = min(measured.values())
    outside = min((v for c, v in everything.items() if c not in pruned), default=math.inf)
    lops: dict[str, float] = {}
    trials: dict[str, int | None] = {}
    for name, order in orders.items():
        top = [measured.get(configs[i], math.inf) for i in order[:TOP_N]]
        lops[name] = lop(min(top), best)
        trials[name] = None
        for n, i in enumerate(order[:args.max_trials], start=1):
            t = measured.get(configs[i])
            if t is None:
                break
            if math.isfinite(t) and best / t >= 0.95:
                trials[name] = n
                break
    tops = {name: [configs[i] for i in order[:TOP_N]] for name, order in orders.items()}
    return LayerEval(task, len(configs), len(measured), exhaustive, best, lops, trials, tops,
                     space, outside)


@dataclass
class VendorRow:
    """One layer's best kernels, timed in one run: ours (the hybrid model's top-N,
    measured again here), PyTorch cuDNN and MetaSchedule."""

    layer: str
    flops: float
    ours: float | None
    ours_trials: int
    ours_config: str
    cudnn: float | None
    cudnn_note: str
    ms: float | None
    ms_note: str
    ms_wall: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> VendorRow:
        return cls(**data)


def compare_vendor(bench: Bench, evals: Sequence[LayerEval], target: TargetInfo,
                   models: dict[str, Any], args: argparse.Namespace,
                   log: Any) -> list[VendorRow]:
    from gpu_vendor import cudnn_seconds, metaschedule_seconds

    gpu = gpu_spec(target)
    ms_layers = {x for x in args.ms_layers.split(",") if x}
    rows = []
    for e in evals:
        assert e.space is not None
        task = e.task
        measured = bench.measured_latencies(e.space)
        top = [c for c in e.tops.get("hybrid", []) if math.isfinite(measured.get(c, math.inf))]
        best_cfg = min(top, key=lambda c: measured[c]) if top else None
        ours = None
        if best_cfg is not None:
            r = bench.remeasure(e.space, best_cfg)
            ours = r.latency if r.ok else None
        cudnn = cudnn_seconds(task)
        ms, ms_note, ms_wall = None, "not run (--ms-layers)", 0.0
        if not ms_layers or task.name in ms_layers:
            if bench.deadline is not None and time.monotonic() > bench.deadline:
                ms_note = "not run (deadline)"
            else:
                t0 = time.perf_counter()
                try:
                    got = metaschedule_seconds(task, f"nvidia/nvidia-{gpu.name}",
                                               args.ms_trials)
                    ms, ms_note = got.seconds, got.note
                except Exception as exc:  # a baseline's failure is a row note, not a crash
                    first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
                    ms_note = f"failed: {first}"
                ms_wall = time.perf_counter() - t0
        row = VendorRow(task.name or task.op, float(task.flops), ours,
                        len(e.tops.get("hybrid", [])), best_cfg.key if best_cfg else "",
                        cudnn.seconds, cudnn.note, ms, ms_note, ms_wall)
        log(f"{row.layer}: ours {_us(ours)}, cuDNN {_us(cudnn.seconds)}, MetaSchedule "
            f"{_us(ms)} ({ms_note}, {ms_wall:.0f} s)")
        rows.append(row)
    return rows


def _us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f} us"


# -- report ---------------------------------------------------------------------------------

def _fmt_int(v: float | None) -> str:
    return "-" if v is None else f"{int(v):,}"


def static_sections(args: argparse.Namespace, gpu: Any, size_rows: list[LayerSizes],
                    tops: list[TopConfig], ptx_note: str) -> list[str]:
    """The markdown of the space-size and top-config (PTX) tables."""
    gpus = list(size_rows[0].pruned) if size_rows else []
    lines = ["## Space sizes (cf. the paper's Table 3)", "",
              "*full*: the cross product of the knobs (kernel, tile_x, tile_y, tile_k, "
              "tile_c, every exact-factor split); *schema*: those whose warp is "
              "T_x T_y T_k = 32; *pruned*: `cnnopt-capacity` with its default rules; "
              "*capacity only*: the paper's constraints alone (registers by equations 2/3, "
              "shared memory, threads per block, B_c > 1 only against tail effects). The "
              "paper's counts are for a V100 / RTX 2080 Ti and its own schema; its layers "
              "res1*, res2, res4*, res6, res7*, res9, res10*, res12 are matched to ours by "
              "position, and it leaves out the 1x1 downsampling convolutions (r18_*ds).", "",
              "| layer | shape | full | schema | "
              + " | ".join(f"pruned {g}" for g in gpus) + " | "
              + " | ".join(f"capacity only {g}" for g in gpus) + " | paper (Table 3) |",
              "|---|---|---:|---:|" + "---:|" * (2 * len(gpus)) + "---:|"]
    for r in size_rows:
        p = r.task.params
        shape = (f"C={p['C']} {p['H']}x{p['W']} K={p['K']} {p['R']}x{p['S']} "
                 f"s{p['stride']}")
        lines.append(f"| {r.task.name} | {shape} | {r.full:,} | {r.schema:,} | "
                     + " | ".join(_fmt_int(r.pruned.get(g)) for g in gpus) + " | "
                     + " | ".join(_fmt_int(r.capacity_only.get(g)) for g in gpus) + " | "
                     + _fmt_int(PAPER_TABLE_3.get(r.task.name or "")) + " |")
    lines += ["", "Default extra rules of `cnnopt-capacity` (ours, not the paper's; "
              "`Rules.capacity_only()` turns them off): at least 4 outputs per thread, "
              "at least 64 threads per block, at least 4 channels per shared-memory stage, "
              "a grid of at least half as many blocks as SMs. Shared memory is capped at "
              "48 KiB because TVM allocates it statically.", ""]
    lines += [f"## Top-{args.top} configs of the analytical model on {gpu.name} "
              "(static PTX features)", "", ptx_note, "",
              "| layer | # | kernel | tile_x (B,W,T,R) | tile_y | tile_k | tile_c (B_c,S_c,W_c)"
              " | threads | grid | est. µs | est. GFLOPS | regs est. | regs ptxas | spill B "
              "| smem B | fma (static) | fma/thread exec. | fma/thread expected "
              "| ld.shared | ld.global | st.global |",
              "|---|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
              "|---:|---:|---:|---:|"]
    for t in tops:
        c = t.config
        x = t.ptx or {}
        gflops = t.task.flops / t.est_seconds / 1e9 if t.est_seconds > 0 else 0.0

        def g(name: str) -> str:
            return _fmt_int(x[name]) if name in x else "n/a"

        lines.append(
            f"| {t.task.name} | {t.rank} | {c['kernel']} | {tuple(c['tile_x'])} | "
            f"{tuple(c['tile_y'])} | {tuple(c['tile_k'])} | {tuple(c['tile_c'])} | "
            f"{t.threads} | {t.grid:,} | {t.est_seconds * 1e6:.1f} | {gflops:,.0f} | "
            f"{t.regs_estimate} | {g('ptxas_registers')} | {g('ptxas_spill_bytes')} | "
            f"{t.smem:,} / {g('ptxas_smem_bytes')} | {g('fma')} | {g('fma_executed')} | "
            f"{t.fma_expected:,.0f} | {g('ld_shared')} | {g('ld_global')} | "
            f"{g('st_global')} |")
    errors = sorted({t.ptx_error for t in tops if t.ptx_error})
    if errors:
        lines += ["", "PTX analysis failed for some configs: " + "; ".join(errors)]
    lines += ["", "*regs est.*: equation (2)/(3) plus 24 registers for indices and "
              "addresses; *smem B*: the plan's shared memory / ptxas'; *fma/thread "
              "expected*: R^x R^y R^k (C/B_c) F_y F_x; *fma/thread exec.*: the PTX FMA "
              "count weighted by recovered loop trip counts (plugins/cuda/ptx.py).", ""]
    return lines


def report(args: argparse.Namespace, target: TargetInfo, size_rows: list[LayerSizes],
           tops: list[TopConfig], evals: list[LayerEval] | None, wall: float,
           ptx_note: str, vendor: list[VendorRow] | None = None, stopped: str = "") -> str:
    gpu = gpu_spec(target)
    lines = [
        "# CNNOpt on ResNet-18 conv2d (CUDA)" + (" — smoke run" if args.smoke else ""),
        "",
        "Xu et al., *Effective Performance Modeling and Domain-Specific Compiler Optimization "
        "of CNNs for GPUs* (PACT'22), sections 3 and 4, as the `cnnopt` plugin: the RS/S "
        "kernel schemas (space generator `cnnopt`), the capacity pruner `cnnopt-capacity` "
        "and the cost models `cnnopt-analytical`, `cnnopt-ml`, `cnnopt-hybrid`.",
        "",
        machine_header(),
        f"- Script: `python scripts/reproduce_cnnopt.py{' --smoke' if args.smoke else ''}"
        f"{' --measure' if args.measure else ''}{' --replay' if args.replay else ''}`"
        f", wall time {wall:.0f} s",
        "",
    ]
    if evals is None:
        lines += ["**No GPU measurements were made.** This machine has no NVIDIA GPU; every "
                  "figure below is a count, an analytical estimate or a static fact about "
                  "the generated code (CUDA C from TVM, PTX from nvcc, registers from ptxas). "
                  "Estimated times come from the analytical model, not from hardware.", ""]
    else:
        lines += [f"**Measured on an {gpu.title}** with the `cuda` measurer "
                  "(median of 3 timings of at least 10 ms each, output checked against "
                  "NumPy)" + (", recomputed here from the history database (--replay)"
                              if args.replay else "") + ".", ""]
    if stopped:
        lines += [f"**Partial run:** {stopped}.", ""]
    if args.smoke:
        lines += ["Smoke run: a single small layer and the top config only; run without "
                  "`--smoke` for every layer.", ""]
    if size_rows or tops:
        lines += static_sections(args, gpu, size_rows, tops, ptx_note)
    if evals is not None:
        lines += [f"## Measured on {gpu.title}: LoP of the top-{TOP_N} and trials to 95%", "",
                  "| layer | pruned | measured | best ms | best GFLOPS | LoP analytical | "
                  "LoP ML | LoP hybrid | trials95 analytical | trials95 ML | trials95 hybrid |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for e in evals:
            lines.append(
                f"| {e.task.name} | {e.pruned:,} | {e.measured:,}"
                f"{' (all)' if e.exhaustive else ''} | {e.best_seconds * 1e3:.4f} | "
                f"{e.task.flops / e.best_seconds / 1e9:,.0f} | "
                + " | ".join(f"{100 * e.lop[m]:.1f}%" for m in ("analytical", "ml", "hybrid"))
                + " | " + " | ".join(str(e.trials95[m] or f">{args.max_trials}")
                                     for m in ("analytical", "ml", "hybrid")) + " |")
        lines += ["", "The best time is the best measured config of the layer: the whole "
                  f"pruned space when it has at most {args.exhaustive} configs (as the paper's "
                  f"exhaustive search), otherwise {args.reference} uniformly drawn configs "
                  "plus every model's top-30 and the configs walked for trials-to-95%.", ""]
        dropped = [e for e in evals if math.isfinite(e.best_outside)]
        if dropped:
            lines += ["Configs outside the pruned space measured by other runs sharing the "
                      "database (PSA's target spaces): "
                      + "; ".join(f"{e.task.name}: best {e.best_outside * 1e6:.1f} µs, "
                                  f"{e.best_seconds / e.best_outside:.3f}x the pruned space's "
                                  "best" for e in dropped)
                      + " (above 1: `cnnopt-capacity` dropped a faster config).", ""]
        if evals:
            lines += ["Means over the layers above: LoP of the top-30 "
                      + ", ".join(f"{m} {100 * statistics.mean(e.lop[m] for e in evals):.2f}%"
                                  for m in ("analytical", "ml", "hybrid"))
                      + "; trials to 95% (median) "
                      + ", ".join(f"{m} {_median_trials([e.trials95[m] for e in evals], args)}"
                                  for m in ("analytical", "ml", "hybrid"))
                      + ". The paper reports a hybrid LoP under 1% on average (Table 9) and "
                      "about 6 trials to reach 95% (Table 8).", ""]
    if vendor:
        lines += [f"## Our best kernel against PyTorch cuDNN and MetaSchedule on {gpu.title}",
                  "", "Timed in one run: *ours* is the best of the hybrid model's top-30 "
                  "(30 measured trials), measured again beside the others; *cuDNN* is "
                  "PyTorch's FP32 conv2d (TF32 off, cuDNN autotuner on, CUDA events, median "
                  "of 7); *MetaSchedule* is TVM's tuner with the trial budget shown, its best "
                  "kernel re-timed like ours. Ratios > 1 mean ours is faster.", "",
                  "| layer | ours µs | ours GFLOPS | cuDNN µs | MetaSchedule µs | cuDNN / ours "
                  "| MetaSchedule / ours | MetaSchedule | MS wall s |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for v in vendor:
            def ratio(x: float | None) -> str:
                return f"{x / v.ours:.2f}" if x and v.ours else "-"

            lines.append(f"| {v.layer} | {_us_num(v.ours)} | "
                         f"{v.flops / v.ours / 1e9 if v.ours else 0:,.0f} | {_us_num(v.cudnn)} | "
                         f"{_us_num(v.ms)} | {ratio(v.cudnn)} | {ratio(v.ms)} | {v.ms_note} | "
                         f"{v.ms_wall:.0f} |")
        notes = sorted({v.cudnn_note for v in vendor if v.cudnn_note})
        lines += ["", "cuDNN: " + "; ".join(notes) if notes else "", ""]
    return "\n".join(lines) + "\n"


def _us_num(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:.1f}"


def _median_trials(values: Sequence[int | None], args: argparse.Namespace) -> str:
    known = [v if v is not None else math.inf for v in values]
    if not known:
        return "-"
    mid = statistics.median(known)
    return f">{args.max_trials}" if math.isinf(mid) else f"{mid:g}"


# -- main -----------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--smoke", action="store_true", help="one small layer, top-1 config")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown report")
    p.add_argument("--target", default="cuda:h100", help="GPU of the top-config table")
    p.add_argument("--only", action="append", default=[], help="layer name(s), e.g. r18_l2")
    p.add_argument("--top", type=int, default=5, help="top configs per layer with PTX")
    p.add_argument("--no-ptx", action="store_true", help="skip nvcc/ptxas")
    p.add_argument("--measure", action="store_true", help="measure on this machine's GPU")
    p.add_argument("--db", default="cnnopt-measure.db", help="history database (--measure)")
    p.add_argument("--train-problems", type=int, default=40)
    p.add_argument("--train-configs", type=int, default=60, help="configs per problem")
    p.add_argument("--train-max-xy", type=int, default=112, help="largest output size")
    p.add_argument("--train-max-channels", type=int, default=512)
    p.add_argument("--exhaustive", type=int, default=3000,
                   help="measure the whole pruned space up to this size")
    p.add_argument("--reference", type=int, default=500, help="uniform sample otherwise")
    p.add_argument("--max-trials", type=int, default=300)
    p.add_argument("--batch", type=int, default=32, help="configs per measurer call")
    p.add_argument("--deadline", type=float, default=0.0,
                   help="--measure: stop measuring after this many seconds (the report "
                        "covers what is done; rerun with the same --db to continue)")
    p.add_argument("--replay", action="store_true",
                   help="--measure without a GPU: answer every measurement from --db "
                        "(e.g. after `orchestrator history import` of a committed dataset)")
    p.add_argument("--no-static", action="store_true",
                   help="skip the space-size and PTX tables")
    p.add_argument("--vendor", action="store_true",
                   help="--measure: time PyTorch cuDNN and MetaSchedule beside our best")
    p.add_argument("--ms-trials", type=int, default=TOP_N + 2,
                   help="MetaSchedule's trial budget (default: ours, rounded to its batch)")
    p.add_argument("--ms-layers", default="",
                   help="comma-separated layers tuned by MetaSchedule (default: all)")
    p.add_argument("--vendor-json", type=Path, default=DEFAULT_VENDOR,
                   help="where the library timings are written (read back by --replay)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    vendor: list[VendorRow] | None = None
    stopped = ""
    if args.measure and not args.replay:
        if not local_gpu_names():
            raise TargetError("--measure needs an NVIDIA GPU and nvidia-smi found none; add "
                              "--replay --db DB to recompute the report from a database that "
                              "holds the measurements, or run without --measure for the "
                              "static report")
        target = resolve_target("cuda")
    else:
        target = resolve_target(args.target)
    only = args.only or (list(SMOKE_LAYERS) if args.smoke else [])
    if args.smoke:
        args.top = min(args.top, 1)
    tasks = layers(only)
    size_rows: list[LayerSizes] = []
    tops: list[TopConfig] = []
    with_ptx = not args.no_ptx and have_ptx_tools()
    ptx_note = ("PTX from `nvcc --ptx -O3 --use_fast_math` on TVM's CUDA C, registers "
                "and shared memory from `ptxas -v`." if with_ptx else
                "nvcc/ptxas not found (or --no-ptx): PTX columns are n/a.")
    if not args.no_static:
        for task in tasks:
            row = sizes(task, SIZE_GPUS, with_capacity_only=True)
            log(f"{task.name}: full {row.full:,}, schema {row.schema:,}, pruned "
                + ", ".join(f"{g} {n:,}" for g, n in row.pruned.items())
                + ", capacity only "
                + ", ".join(f"{g} {n:,}" for g, n in row.capacity_only.items())
                + f" ({row.seconds:.1f} s)")
            size_rows.append(row)
        for task in tasks:
            got = top_configs(task, target, args.top, with_ptx)
            for t in got:
                log(f"{task.name} #{t.rank}: {t.config.key} est "
                    f"{t.est_seconds * 1e6:.1f} us"
                    + (f", ptxas {t.ptx['ptxas_registers']:.0f} regs" if t.ptx else ""))
            tops.extend(got)
    evals = None
    if args.measure:
        deadline = time.monotonic() + args.deadline if args.deadline else None
        bench = Bench(target, args.db, args.batch, replay=args.replay, deadline=deadline)
        evals = []
        try:
            log(f"training on {args.train_problems} random problems")
            models = train_models(bench, target, args, log)
            for task in tasks:
                e = evaluate_layer(bench, task, target, models, args)
                log(f"{task.name}: best {e.best_seconds * 1e6:.1f} us, LoP top-{TOP_N} "
                    + ", ".join(f"{m} {100 * v:.1f}%" for m, v in e.lop.items())
                    + f" ({bench.measured} measured so far, {time.perf_counter() - t0:.0f} s)")
                evals.append(e)
            if args.vendor and not args.replay:
                vendor = compare_vendor(bench, evals, target, models, args, log)
                args.vendor_json.parent.mkdir(parents=True, exist_ok=True)
                args.vendor_json.write_text(json.dumps([v.to_json() for v in vendor],
                                                       indent=1) + "\n")
            elif args.vendor and args.vendor_json.exists():  # --replay
                vendor = [VendorRow.from_json(d)
                          for d in json.loads(args.vendor_json.read_text())]
        except DeadlineReached as exc:
            stopped = str(exc)
            log(f"stopped: {stopped}")
        finally:
            log(f"{bench.measured} configs measured by this run, {bench.reused} answered "
                "from the history")
            bench.close()
    text = report(args, target, size_rows, tops, evals, time.perf_counter() - t0, ptx_note,
                  vendor, stopped)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
