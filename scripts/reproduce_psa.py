"""Pruner's PSA (Qiao et al., section 2.3) on the ResNet-18 convolutions of the built-in
suite, for CUDA GPUs, without a GPU.

For every ``r18_*`` layer, every GPU of ``--targets`` (default H100 and A100) and every
CUDA space generator that is importable (``cuda``, ``cnnopt``), the ``psa`` pruner ranks
the whole space (or a large uniform sample of it) by its analytical latency L_total and
builds the target spaces of size 256 and 512. Reported: the full space size, the
launchable configs ranked, the target space sizes (kept + explored share), the estimated
latency of the best kept config and the predicted median over best. Nothing is measured:
Best-1 needs a GPU.

``--measure`` (needs an NVIDIA GPU; refused in one line otherwise) measures, on this
machine's GPU, the largest target space and a uniform sample of the full space with the
``cuda`` measurer and reports Best-1/5/20 (Pruner, equation 6) of the target spaces and
of random spaces of the same size drawn from the sample (first run on an H100:
docs/results/psa-h100.md). Measurements go through the history database (``--db``), so a
rerun resumes and ``--replay`` recomputes the report without a GPU.

    python scripts/reproduce_psa.py                 # docs/results/psa.md, minutes
    python scripts/reproduce_psa.py --smoke --out /tmp/psa.md
    python scripts/reproduce_psa.py --measure --layers r18_l4 --sample 1000 --out psa-gpu.md
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(ROOT))

from gpu_bench import GPU_MEASURER_OPTIONS, Bench, DeadlineReached  # noqa: E402
from machine import machine_header  # noqa: E402
from orchestrator.errors import OrchestratorError, TargetError  # noqa: E402
from orchestrator.gpus import local_gpu_names, resolve_gpu_target  # noqa: E402
from orchestrator.manager import Plugins, load_plugins  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.suite import read_suite  # noqa: E402
from orchestrator.target import TargetInfo  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from plugins.psa.metrics import TaskLatencies, best_k  # noqa: E402
from plugins.psa.pruner import MAX_ENUMERATE, SAMPLE_SIZE, PsaPruner  # noqa: E402

GENERATORS = ("cuda", "cnnopt")
SIZES = (256, 512)
KS = (1, 5, 20)
MEASURE_BATCH = 64         # configs per measurer call under --measure (progress lines)
DEFAULT_OUT = ROOT / "docs" / "results" / "psa.md"


@dataclass
class Row:
    """One (generator, GPU, layer): the space, the PSA ranking and its target spaces."""

    generator: str
    gpu: str
    layer: str
    full_size: int
    ranked: int
    sampled: bool
    target_sizes: dict[int, int]
    best_us: float
    median_us: float
    best_gflops: float
    seconds: float
    distinct: int = 0                         # different estimates among the first 256
    # "psa256" / "random256" ... -> measured latencies (whole-space sample, that space)
    measured: dict[str, TaskLatencies] = field(default_factory=dict)
    counts: tuple[int, int] = (0, 0)          # configs measured, of which ok
    target_measured: dict[int, int] = field(default_factory=dict)  # size -> configs measured


def plugin_set() -> Plugins:
    """Installed plugins, plus psa/cuda/cnnopt from this checkout when not registered yet."""
    plugins = load_plugins()
    extra: list[tuple[str, object]] = []
    if "psa" not in plugins.registry("pruner"):
        extra.append(("psa", importlib.import_module("plugins.psa")))
    for name in GENERATORS:
        if name in plugins.registry("space_generator"):
            continue
        try:
            extra.append((name, importlib.import_module(f"plugins.{name}")))
        except ImportError:
            continue
    return load_plugins(extra=extra) if extra else plugins


def generators(plugins: Plugins, wanted: Sequence[str]) -> list[tuple[str, Any]]:
    """(name, generator) for each wanted CUDA space generator that is registered."""
    reg = plugins.registry("space_generator")
    return [(n, reg.create(n)) for n in wanted if n in reg]


def resnet_layers(only: Sequence[str]) -> list[Task]:
    """The ``r18_*`` workloads of the built-in suite (those named in ``only``, if any)."""
    tasks = [t for t in read_suite() if (t.name or "").startswith("r18_")]
    if only:
        tasks = [t for t in tasks if t.name in only]
    return tasks


def analyse(gen_name: str, space: Space, target: TargetInfo, task: Task,
            pruner: PsaPruner) -> tuple[Row, list[tuple[float, Config]], bool]:
    """The report row of one space, with its PSA ranking."""
    t0 = time.perf_counter()
    ranked, sampled = pruner.rank(space, target)
    sizes = {}
    for size in SIZES:
        sized = PsaPruner(size=size, explore=pruner.explore, seed=pruner.seed)
        sizes[size] = len(sized.select(space, target, ranked, sampled).candidates or ())
    lats = [lat for lat, _ in ranked]
    best = lats[0]
    distinct = len({round(lat, 15) for lat in lats[:min(SIZES)]})
    row = Row(gen_name, target.arch, task.name or task.op, space.size, len(ranked), sampled,
              sizes, best * 1e6, statistics.median(lats) * 1e6, task.flops / best / 1e9,
              time.perf_counter() - t0, distinct)
    return row, ranked, sampled


def measure_row(row: Row, bench: Bench, space: Space, ranked: list[tuple[float, Config]],
                sample: int, seed: int) -> dict[str, Any]:
    """Measures the largest target space and a uniform sample; fills ``row.measured``."""
    rng = random.Random(seed)
    top = [c for _, c in ranked[:max(SIZES)]]
    pool = [c for _, c in ranked]
    whole = rng.sample(pool, min(sample, len(pool)))
    todo = list(dict.fromkeys([*top, *whole]))
    if bench.replay:
        # A replay reports what the campaign measured: a sample or target space cut
        # short by its deadline is smaller, and the report says how much was measured.
        known = {c for c in todo if bench.known(space, c) is not None}
        for size in SIZES:
            row.target_measured[size] = sum(c in known for c in top[:size])
        top = [c for c in top if c in known]
        whole = [c for c in whole if c in known]
        todo = [c for c in todo if c in known]
    latency: dict[Config, float] = {}
    for i in range(0, len(todo), MEASURE_BATCH):
        chunk = todo[i:i + MEASURE_BATCH]
        latency.update(zip(chunk, bench.measure(space, chunk), strict=True))
        print(f"  measured {len(latency)}/{len(todo)}", flush=True)
    # L*: the best latency known on this layer, from this sample and target space and
    # from any other run that shares the database (reproduce_cnnopt.py --measure).
    full = tuple(bench.measured_latencies(space).values())
    for size in SIZES:
        row.target_measured.setdefault(size, min(size, len(top)))
        kept = top[:row.target_measured[size]]
        row.measured[f"psa{size}"] = TaskLatencies(full, tuple(latency[c] for c in kept))
        rand = rng.sample(whole, min(size, len(whole)))
        row.measured[f"random{size}"] = TaskLatencies(full, tuple(latency[c] for c in rand))
    row.counts = (len(todo), sum(math.isfinite(v) for v in latency.values()))
    return {"layer": row.layer, "generator": row.generator, "gpu": row.gpu,
            "latencies": {c.key: latency[c] for c in todo},
            "target": [c.key for c in top], "sample": [c.key for c in whole]}


def report(rows: Sequence[Row], args: argparse.Namespace, missing: Sequence[str],
           measured: bool) -> str:
    """The markdown result file."""
    lines = ["# Pruner PSA: target spaces of the ResNet-18 convolutions", "",
             machine_header(),
             (f"- GPU: none here; measurements replayed from the history database "
              f"(target cuda:{args.targets.split(',')[0]})" if getattr(args, "replay", False)
              else f"- GPU: {', '.join(local_gpu_names()) or 'none (nvidia-smi found none)'}"),
             ""]
    if measured:
        lines += [("**Measured on a GPU, recomputed here from the history database "
                   "(--replay)**" if args.replay else "**Measured on this machine's GPU**")
                  + f" with the `{args.measurer}` measurer (median of 3 timings of at least "
                  "10 ms each, output checked against NumPy). Best-k as in Pruner, "
                  "equation 6: L* over the k-th best latency of the target space, where L* "
                  "is the best latency measured on the layer (the uniform sample, the "
                  "target space, and any other run recorded in the same database, such as "
                  "reproduce_cnnopt.py --measure).", ""]
        if getattr(args, "stopped", ""):
            lines += [f"**Partial run:** {args.stopped}.", ""]
    else:
        lines += ["**No GPU measurement was made.** Every latency below is PSA's analytical "
                  "estimate L_total (Pruner, equation 4) from the GPU table's peak FP32 rate "
                  "and DRAM bandwidth, not a measurement. Best-1 (equation 6), the paper's "
                  "quality measure of a target space, needs the measured latencies of the "
                  "target space and of the whole space: run `python "
                  "scripts/reproduce_psa.py --measure` on a machine with an NVIDIA GPU.", ""]
    lines += [f"Command: `{' '.join(['python', 'scripts/reproduce_psa.py', *args.argv])}`",
              "", f"Target spaces: the {' / '.join(map(str, SIZES))} configs with the lowest "
              f"estimate, plus {args.explore:.0%} of that size drawn uniformly from the rest "
              f"(seed {args.seed}). Spaces above {args.max_enumerate:,} configs are ranked on "
              f"a uniform sample of {args.sample_size:,}.", ""]
    if missing:
        lines += [f"Space generators not available here (not importable or not registered): "
                  f"{', '.join(missing)}.", ""]
    if not rows:
        lines += ["No CUDA space generator could be loaded: nothing was analysed.", ""]
        return "\n".join(lines) + "\n"
    lines += ["| generator | GPU | layer | full space | ranked | target 256 | target 512 "
              "| estimates in 256 | est. best (us) | est. GFLOPS | est. median / best | time (s) |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ranked = f"{r.ranked:,}" + (" (sample)" if r.sampled else "")
        lines.append(f"| {r.generator} | {r.gpu} | {r.layer} | {r.full_size:,} | {ranked} | "
                     f"{r.target_sizes[256]} | {r.target_sizes[512]} | {r.distinct} | "
                     f"{r.best_us:.1f} | "
                     f"{r.best_gflops:,.0f} | {r.median_us / r.best_us:.2f} | {r.seconds:.1f} |")
    lines += ["", "`full space`: knob combinations before the template's check; `ranked`: "
              "configs that pass the check and can launch (a block fits on an SM), all of "
              "them or the uniform sample; `target N`: configs the pruner returns (N kept + "
              "explored share); `estimates in 256`: different estimated latencies among the "
              "256 kept (configs that differ only in what the penalties do not see, such as "
              "unrolling, tie and fill the target space together); `est. GFLOPS`: the "
              "operator's FLOPs over the best estimate. A sample draws at most 20 index "
              "tuples per wanted config and keeps those that pass the template's check, so "
              "spaces whose check rejects most tuples give smaller samples; configs that "
              "cannot launch are then dropped.",
              ""]
    if measured:
        lines += measured_table(rows)
    lines += ["Not done here: the paper's PaCM cost model and momentum transfer learning; "
              "PSA reads the templates' kernel plans (KernelPlan), not TIR statements.", ""]
    return "\n".join(lines) + "\n"


def _best(tasks: Sequence[TaskLatencies], k: int) -> str:
    try:
        return f"{best_k(tasks, k):.3f}"
    except OrchestratorError:
        return "n/a"


def measured_table(rows: Sequence[Row]) -> list[str]:
    """Markdown lines: Best-k per layer and over all layers (equation 6, weights 1)."""
    labels = [f"{lab}{s}" for s in SIZES for lab in ("psa", "random")]
    cols = [f"{lab}-b{k}" for lab in labels for k in KS]
    lines = ["## Measured Best-k", "",
             "| generator | GPU | layer | measured (ok) | " + " | ".join(cols) + " |",
             "|---|---|---|---:|" + "---:|" * len(cols)]
    groups: dict[tuple[str, str], list[Row]] = {}
    for r in rows:
        if r.measured:
            groups.setdefault((r.generator, r.gpu), []).append(r)
    for (gen, gpu), group in groups.items():
        for r in [*group, None]:
            members = group if r is None else [r]
            vals = " | ".join(_best([m.measured[lab] for m in members], k)
                              for lab in labels for k in KS)
            name = "**all (eq. 6)**" if r is None else r.layer
            done = sum(m.counts[0] for m in members), sum(m.counts[1] for m in members)
            lines.append(f"| {gen} | {gpu} | {name} | {done[0]} ({done[1]}) | {vals} |")
    partial = [(r.layer, size, n) for r in rows for size, n in r.target_measured.items()
               if n < size]
    if partial:
        lines += ["", "**Incomplete target spaces** (the measuring campaign stopped at its "
                  "deadline): " + "; ".join(f"{layer} psa{size}: {n} of {size} measured"
                                            for layer, size, n in partial)
                  + ". Their Best-k is taken over the measured part only: an unmeasured config "
                  "of the target space could only raise it."]
    lines += ["", "`psaN`: the N configs PSA ranks first (the explored share is left out); "
              "`randomN`: N configs drawn uniformly from the measured sample of the whole "
              "space (one draw, not the paper's average of 5000; the whole sample when it "
              "has fewer than N). `n/a`: fewer than k successful measurements.", ""]
    return lines


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--smoke", action="store_true", help="one layer, one GPU, small samples")
    ap.add_argument("--measure", action="store_true", help="measure on this machine's GPU")
    ap.add_argument("--layers", default="", help="comma-separated r18_* names (default all)")
    ap.add_argument("--targets", default="h100,a100", help="GPU models of the table")
    ap.add_argument("--generators", default=",".join(GENERATORS))
    ap.add_argument("--explore", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-enumerate", type=int, default=MAX_ENUMERATE)
    ap.add_argument("--sample-size", type=int, default=SAMPLE_SIZE)
    ap.add_argument("--sample", type=int, default=1000,
                    help="--measure: configs of the whole space measured")
    ap.add_argument("--measurer", default="cuda", help="--measure: the measurer to use")
    ap.add_argument("--db", default="psa-measure.db",
                    help="--measure: history database (reruns resume from it)")
    ap.add_argument("--deadline", type=float, default=0.0,
                    help="--measure: stop measuring after this many seconds")
    ap.add_argument("--replay", action="store_true",
                    help="--measure without a GPU: every latency from --db")
    ap.add_argument("--raw", type=Path, default=None,
                    help="--measure: JSON file for every measured latency")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.smoke:
        args.layers = args.layers or "r18_l4"
        args.targets = "h100"
        args.max_enumerate = min(args.max_enumerate, 5000)
        args.sample_size = min(args.sample_size, 2000)
        args.sample = min(args.sample, 64)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if args.measure and not args.replay:
        gpus = local_gpu_names()
        if not gpus:
            raise TargetError("--measure needs an NVIDIA GPU on this machine (nvidia-smi "
                              "found none); add --replay --db DB to recompute from a database "
                              "that holds the measurements, or run without --measure for the "
                              "analytical part")
    bench: Bench | None = None
    stopped = ""
    rows: list[Row] = []
    raw: list[dict[str, Any]] = []
    try:
        plugins = plugin_set()
        wanted = [g for g in args.generators.split(",") if g]
        gens = generators(plugins, wanted)
        missing = [g for g in wanted if g not in dict(gens)]
        if args.measure:
            targets = [resolve_gpu_target("cuda" if not args.replay
                                          else f"cuda:{args.targets.split(',')[0]}")]
            if args.measurer not in plugins.registry("measurer"):
                print(f"reproduce_psa: --measure needs the `{args.measurer}` measurer "
                      "(plugins/cuda), which is not installed", file=sys.stderr)
                return 2
            deadline = time.monotonic() + args.deadline if args.deadline else None
            bench = Bench(targets[0], args.db, MEASURE_BATCH, replay=args.replay,
                          deadline=deadline, measurer=args.measurer, plugins=plugins,
                          options=GPU_MEASURER_OPTIONS if args.measurer == "cuda" else {})
        else:
            targets = [resolve_gpu_target(f"cuda:{t}") for t in args.targets.split(",") if t]
        tasks = resnet_layers([x for x in args.layers.split(",") if x])
        pruner = PsaPruner(size=max(SIZES), explore=args.explore, seed=args.seed,
                           max_enumerate=args.max_enumerate, sample_size=args.sample_size)
        for gen_name, gen in gens:
            for target in targets:
                for task in tasks:
                    if not gen.supports(task, target):
                        continue
                    space = gen.generate(task, target)
                    row, ranked, _ = analyse(gen_name, space, target, task, pruner)
                    print(f"{gen_name} {target.arch} {row.layer}: {row.full_size:,} configs, "
                          f"{row.ranked:,} ranked, best est. {row.best_us:.1f} us "
                          f"({row.seconds:.1f} s)", flush=True)
                    if bench is not None:
                        raw.append(measure_row(row, bench, space, ranked, args.sample,
                                               args.seed))
                    rows.append(row)
    except DeadlineReached as exc:
        stopped = str(exc)
        print(f"reproduce_psa: stopped: {stopped}", file=sys.stderr)
    finally:
        if bench is not None:
            bench.close()
    args.stopped = stopped
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(rows, args, missing, args.measure))
    if args.raw is not None and raw:
        args.raw.write_text(json.dumps(raw, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
