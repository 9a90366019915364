"""Reproduce DLFusion's Figure 10 (FPS of the Table III strategies) on the SIMULATED MLU-100.

Writes docs/results/dlfusion.md and docs/results/dlfusion_fps.png (if matplotlib is
installed). Every FPS figure comes from the analytic accelerator model in
plugins/dlfusion/accelerator.py, not from hardware. Runs in a few seconds.

    python scripts/reproduce_dlfusion.py [--out docs/results]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header  # noqa: E402

from plugins.dlfusion.accelerator import SimulatedAccelerator  # noqa: E402
from plugins.dlfusion.dp import optimal_plan, reduced_oracle_plan  # noqa: E402
from plugins.dlfusion.layers import NETWORK_INPUT, Network  # noqa: E402
from plugins.dlfusion.models import NetBuilder, builtin_model  # noqa: E402
from plugins.dlfusion.plan import Block, Plan, PlanResult  # noqa: E402
from plugins.dlfusion.calibrate import (  # noqa: E402
    CRITICAL_EXPONENTS, MP_SCALES, calibrate,
)
from plugins.dlfusion.planner import joint_opt_fusion_and_mp, layer_mp  # noqa: E402
from plugins.dlfusion.strategies import (  # noqa: E402
    STRATEGIES, STRATEGY_NAMES, _pow2s, _unfused, alg1_params, compare_strategies,
    plan_dlfusion, plan_none,
)

MODELS = ("resnet18", "resnet50", "vgg19", "alexnet", "mobilenet")
PAPER_TABLE_II = {"resnet18": (3.38, 20), "resnet50": (7.61, 53), "vgg19": (36.34, 16),
                  "alexnet": (1.22, 5), "mobilenet": (10.33, 52)}
GIB = 2**30
CALIBRATION_NETWORKS = 64   # synthetic chains for Algorithm 1's calibration
CALIBRATION_SEED = 0


def _stack(c: int, hw: int, n: int = 16) -> Network:
    b = NetBuilder(f"16x{{{c},{c},{hw}x{hw},3x3}}", (1, c, hw, hw))
    x = NETWORK_INPUT
    for k in range(n):
        x = b.conv(f"conv{k}", x, c, 3)
    return b.build()


def _uniform(net: Network, size: int, mp: int) -> Plan:
    return Plan("uniform", net.name, tuple(Block(k, min(k + size, len(net)), mp)
                                           for k in range(0, len(net), size)))


def _time_dp(acc: SimulatedAccelerator, net: Network, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        optimal_plan(acc, net)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def params_section(acc: SimulatedAccelerator) -> list[str]:
    p = acc.params
    values = {
        "cores": str(p.cores), "frequency_ghz": f"{p.frequency_ghz:g} GHz",
        "peak_tops_per_core": f"{p.peak_ops_per_core / 1e12:g} T{p.dtype} ops/s per core",
        "dtype": p.dtype, "memory_gb": f"{p.memory_bytes / GIB:g} GiB",
        "bandwidth_gbs": f"{p.bandwidth_bytes_s / 1e9:g} GB/s",
        "opcount_critical_gops": f"10^1.25 x 2^30 = {p.opcount_critical / 1e9:.2f} G ops",
        "gops_unit": "2^30", "efficiency_exponent": f"gamma = {p.efficiency_exponent:g}",
        "channel_granularity": f"{p.channel_granularity} channels",
        "dispatch_us_per_core": f"{p.dispatch_s_per_core * 1e6:g} us per core per block",
    }
    lines = ["| parameter | value | where it comes from |", "|---|---|---|"]
    for key, text in p.sources:
        lines.append(f"| `{key}` | {values.get(key, '')} | {text} |")
    return lines


def calibration_section(acc: SimulatedAccelerator) -> list[str]:
    lines = ["Figure 5(a): FPS of the no-fusion plan with one MP shared by all layers "
             "(the paper found 4 best for ResNet-18 and 16 for VGG-19):", "",
             "| model | " + " | ".join(f"MP {m}" for m in _pow2s(acc.cores)) + " | best |",
             "|---|" + "---|" * (len(_pow2s(acc.cores)) + 1)]
    for name in ("resnet18", "vgg19"):
        net = builtin_model(name)
        fps = {m: acc.measure_plan(net, _unfused(net, "x", [m] * len(net))).fps
               for m in _pow2s(acc.cores)}
        best = max(fps, key=fps.get)
        lines.append(f"| {name} | " + " | ".join(f"{v:.1f}" for v in fps.values())
                     + f" | **{best}** |")
    lines += ["", "Figure 7(b): 16 identical layers fused in blocks of S layers at MP 8 "
              "(equation 5 gives 8 for both layers); the paper found {512,512,28x28} better "
              "in blocks of 4 than 16, and {512,512,14x14} better in one block of 16 than "
              "in blocks of 4. Simulated FPS:", "",
              "| layers | S=1 | S=2 | S=4 | S=8 | S=16 | best |", "|---|---|---|---|---|---|---|"]
    for c, hw in ((512, 28), (512, 14), (64, 56), (256, 56)):
        net = _stack(c, hw)
        fps = {s: acc.measure_plan(net, _uniform(net, s, 8)).fps for s in (1, 2, 4, 8, 16)}
        best = max(fps, key=fps.get)
        lines.append(f"| {net.name} | " + " | ".join(f"{v:.1f}" for v in fps.values())
                     + f" | **{best}** |")
    return lines


GAMMAS = (0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
TAUS_US = (0.0, 2.0, 5.0, 8.0, 10.0, 12.0, 14.0, 16.0, 20.0, 25.0, 30.0)


def _with(acc: SimulatedAccelerator, gamma: float, tau_us: float) -> SimulatedAccelerator:
    return SimulatedAccelerator(dataclasses.replace(
        acc.params, efficiency_exponent=gamma, dispatch_s_per_core=tau_us * 1e-6))


def _observations(acc: SimulatedAccelerator) -> tuple[tuple[int, int], dict, dict]:
    """Best fixed MP (ResNet-18, VGG-19) and block-size latencies of the Figure 7(b) stacks."""
    best = []
    for name in ("resnet18", "vgg19"):
        net = builtin_model(name)
        lat = {m: acc.measure_plan(net, _unfused(net, "x", [m] * len(net))).latency_s
               for m in _pow2s(acc.cores)}
        best.append(min(lat, key=lat.get))
    sizes = {}
    for key, (c, hw) in (("conv1", (512, 28)), ("conv2", (512, 14))):
        net = _stack(c, hw)
        sizes[key] = {s: acc.measure_plan(net, _uniform(net, s, 8)).latency_s
                      for s in (1, 2, 4, 8, 16)}
    return (best[0], best[1]), sizes["conv1"], sizes["conv2"]


def calibration_search(acc: SimulatedAccelerator) -> tuple[list[tuple[float, float]],
                                                           list[tuple[float, float]]]:
    """(gamma, tau) grid points that reproduce Figures 5(a) and 7(b), strict and literal.

    Literal: Figure 5(a)'s optima and Figure 7(b)'s two comparisons (Conv1: 4 beats 16,
    Conv2: 16 beats 4). Strict: in addition, 4 and 16 are the best of sizes 1..16.
    """
    strict, literal = [], []
    for g in GAMMAS:
        for t in TAUS_US:
            fig5a, c1, c2 = _observations(_with(acc, g, t))
            if fig5a != (4, 16) or not (c1[4] < c1[16] and c2[16] < c2[4]):
                continue
            literal.append((g, t))
            if min(c1, key=c1.get) == 4 and min(c2, key=c2.get) == 16:
                strict.append((g, t))
    return strict, literal


def _fmt_points(points: list[tuple[float, float]]) -> str:
    by_g: dict[float, list[float]] = {}
    for g, t in points:
        by_g.setdefault(g, []).append(t)
    return "; ".join(f"gamma {g:g}: tau {min(ts):g}-{max(ts):g} us" for g, ts in by_g.items()) \
        or "none"


def model_sensitivity(acc: SimulatedAccelerator, points: list[tuple[float, float]]
                      ) -> tuple[list[str], tuple[float, float, float, float]]:
    lines = ["| gamma, tau | " + " | ".join(MODELS) + " | DLFusion speedup range | "
             "DLFusion / oracle range |", "|---|" + "---|" * (len(MODELS) + 2)]
    all_sp: list[float] = []
    all_vo: list[float] = []
    for g, t in points:
        a = recalibrated(_with(acc, g, t))
        cells, sps, vos = [], [], []
        for name in MODELS:
            rs = compare_strategies(builtin_model(name), a,
                                    ("none", "dlfusion", "oracle"))
            sp, vo = rs[0].latency_s / rs[1].latency_s, rs[2].latency_s / rs[1].latency_s
            sps.append(sp)
            vos.append(vo)
            cells.append(f"{sp:.2f}x / {vo:.2f}")
        mark = " (shipped)" if (g, t) == (acc.params.efficiency_exponent,
                                          acc.params.dispatch_s_per_core * 1e6) else ""
        lines.append(f"| {g:g}, {t:g} us{mark} | " + " | ".join(cells)
                     + f" | {min(sps):.2f}x-{max(sps):.2f}x | {min(vos):.2f}-{max(vos):.2f} |")
        all_sp += sps
        all_vo += vos
    return lines, (min(all_sp), max(all_sp), min(all_vo), max(all_vo))


def recalibrated(acc: SimulatedAccelerator) -> SimulatedAccelerator:
    """``acc`` with Algorithm 1's parameters calibrated for its own model."""
    c = calibrate(acc, count=CALIBRATION_NETWORKS, seed=CALIBRATION_SEED)
    return SimulatedAccelerator(dataclasses.replace(
        acc.params, alg1_opcount_critical=c.params.opcount_critical,
        alg1_mp_scale=c.params.mp_scale, alg1_source=c.to_json()["source"]))


def alg1_calibration_section(acc: SimulatedAccelerator) -> tuple[list[str], bool]:
    """The shipped Algorithm 1 parameters next to a fresh calibration (same seed)."""
    c = calibrate(acc, count=CALIBRATION_NETWORKS, seed=CALIBRATION_SEED)
    shipped = alg1_params(acc)
    same = (abs(shipped.opcount_critical / c.params.opcount_critical - 1) < 1e-4
            and shipped.mp_scale == c.params.mp_scale)
    top = sorted(c.grid, key=lambda g: -g[2])[:5]
    lines = [
        f"Shipped (`algorithm1` in the accelerator file): OpCount_critical = "
        f"{shipped.opcount_critical / GIB:.4g} x 2^30 ops per core, MP scale "
        f"{shipped.mp_scale:g}. Source: {acc.params.alg1_source or '(none: paper constants)'}",
        "",
        f"Re-run now ({CALIBRATION_NETWORKS} synthetic chains, seed {CALIBRATION_SEED}, grid "
        f"{len(CRITICAL_EXPONENTS)} thresholds x {len(MP_SCALES)} MP scales): "
        f"10^{math.log10(c.params.opcount_critical / GIB):.2f} x 2^30 ops, scale "
        f"{c.params.mp_scale:g}, geometric-mean FPS {c.score:.3f} of the DP optimum "
        f"({'matches the shipped values' if same else 'DIFFERS from the shipped values'}).",
        "",
        "Best grid points (log10 threshold in 2^30 ops, MP scale, geo-mean FPS / optimum): "
        + "; ".join(f"({e:g}, {sc:g}, {v:.3f})" for e, sc, v in top) + ".",
    ]
    return lines, same


def models_section() -> list[str]:
    lines = ["| model | layers in list | CONV layers (Table II) | conv GMACs | "
             "Table II Total Op: ours / paper | FC + pool + add layers |",
             "|---|---|---|---|---|---|"]
    for name in MODELS:
        net = builtin_model(name)
        convs = [l for l in net.layers if l.kind in ("conv2d", "depthwise")]
        ops = sum(l.ops for l in convs) / GIB
        paper_ops, paper_conv = PAPER_TABLE_II[name]
        note = ""
        if name == "mobilenet":
            dense_dw = sum(l.ops * (l.c_in if l.kind == "depthwise" else 1) for l in convs) / GIB
            note = f" (depthwise counted as dense: {dense_dw:.2f})"
        lines.append(f"| {name} | {len(net)} | {len(convs)} ({paper_conv}) | "
                     f"{sum(l.macs for l in convs) / 1e9:.3f} | {ops:.2f}{note} / {paper_ops} | "
                     f"{len(net) - len(convs)} |")
    return lines


def fps_tables(results: dict[str, tuple[PlanResult, ...]]) -> list[str]:
    head = "| model | " + " | ".join(f"{s.number}. {s.label}" for s in STRATEGIES) + " |"
    sep = "|---|" + "---|" * len(STRATEGIES)
    lines = ["SIMULATED FPS (batch 1, FP16):", "", head, sep]
    for name, rs in results.items():
        lines.append(f"| {name} | " + " | ".join(f"{r.fps:.1f}" for r in rs) + " |")
    lines += ["", "Speedup over strategy 1 (no optimization):", "", head, sep]
    for name, rs in results.items():
        base = rs[0].latency_s
        lines.append(f"| {name} | " + " | ".join(f"{base / r.latency_s:.2f}x" for r in rs) + " |")
    lines += ["", "Plans (number of blocks / distinct MPs):", "", head, sep]
    for name, rs in results.items():
        cells = []
        for r in rs:
            mps = sorted({b.mp for b in r.plan.blocks})
            shown = ",".join(map(str, mps)) if len(mps) <= 4 else f"{mps[0]}..{mps[-1]}"
            cells.append(f"{len(r.plan.blocks)} / {shown}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def targets_section(results: dict[str, tuple[PlanResult, ...]]) -> tuple[list[str], dict]:
    idx = {n: i for i, n in enumerate(STRATEGY_NAMES)}
    rows = ["| model | DLFusion / no-opt (paper: 3.6x-7.9x) | DLFusion / reduced oracle "
            "(paper: within 10%) | with the paper's constants: / no-opt, / oracle | "
            "reduced oracle / no-opt | optimal DP / reduced oracle (>= 1 by construction) |",
            "|---|---|---|---|---|---|"]
    summary = {"speedups": [], "vs_oracle": [], "dp_vs_oracle": [], "pub_vs_oracle": []}
    for name, rs in results.items():
        base, dlf = rs[idx["none"]].latency_s, rs[idx["dlfusion"]].latency_s
        orc, dp = rs[idx["oracle"]].latency_s, rs[idx["optimal-dp"]].latency_s
        pub = rs[idx["dlfusion-published"]].latency_s
        sp, vo, dv = base / dlf, orc / dlf, orc / dp
        summary["speedups"].append(sp)
        summary["vs_oracle"].append(vo)
        summary["dp_vs_oracle"].append(dv)
        summary["pub_vs_oracle"].append(orc / pub)
        rows.append(f"| {name} | {sp:.2f}x {'(in range)' if 3.6 <= sp <= 7.9 else '(outside)'} | "
                    f"{vo:.2f} {'(within 10%)' if vo >= 0.9 else '(gap > 10%)'} | "
                    f"{base / pub:.2f}x, {orc / pub:.2f} | {base / orc:.2f}x | {dv:.3f} |")
    return rows, summary


def sensitivity_section(acc: SimulatedAccelerator) -> list[str]:
    exps = (1.25, 0.75, 0.25, -0.25, -0.75, -1.25)
    lines = ["Algorithm 1 with other thresholds (the accelerator model is unchanged; one "
             "threshold for all networks; equation 5 times the calibrated MP scale "
             f"{alg1_params(acc).mp_scale:g}). Cells: DLFusion speedup over no optimization / "
             "DLFusion FPS as a fraction of the optimal DP's / number of blocks.", "",
             "| threshold (x 2^30 ops per core) | " + " | ".join(MODELS) + " |",
             "|---|" + "---|" * len(MODELS)]
    nets = {n: builtin_model(n) for n in MODELS}
    base = {n: acc.measure_plan(net, plan_none(net, acc)).latency_s for n, net in nets.items()}
    best = {n: optimal_plan(acc, net)[1] for n, net in nets.items()}
    for e in exps:
        cells = []
        for n, net in nets.items():
            plan = plan_dlfusion(net, acc, 10**e * GIB)
            lat = acc.measure_plan(net, plan).latency_s
            cells.append(f"{base[n] / lat:.2f}x / {best[n] / lat:.2f} / {len(plan.blocks)}")
        label = "10^1.25 (paper)" if e == 1.25 else f"10^{e:g}"
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def timing_section(acc: SimulatedAccelerator) -> tuple[list[str], float]:
    lines = ["| network | layers | exact DP (all contiguous blocks x MP 1..32) | "
             "reduced oracle (same DP, restricted) |", "|---|---|---|---|"]
    r50 = builtin_model("resnet50")
    prefix = Network("resnet50[:50]", r50.layers[:50])
    worst50 = 0.0
    for net in [builtin_model(n) for n in MODELS] + [prefix]:
        t_dp = _time_dp(acc, net)
        t0 = time.perf_counter()
        reduced_oracle_plan(acc, net)
        t_or = time.perf_counter() - t0
        if len(net) >= 50:
            worst50 = max(worst50, t_dp)
        lines.append(f"| {net.name} | {len(net)} | {t_dp * 1e3:.0f} ms | {t_or * 1e3:.0f} ms |")
    return lines, worst50


def _fmt_blocks(blocks: tuple[Block, ...]) -> str:
    return ", ".join(f"[{b.start}-{b.stop - 1}]@{b.mp}" for b in blocks)


def dlfusion_detail(acc: SimulatedAccelerator) -> list[str]:
    lines = ["| model | Algorithm 1 blocks (layer ranges, MP) | eq. 5 layer MPs (conv/FC) | "
             "optimal DP blocks (layer ranges, MP) |", "|---|---|---|---|"]
    for name in MODELS:
        net = builtin_model(name)
        params = alg1_params(acc)
        res = joint_opt_fusion_and_mp(net, params.opcount_critical, acc.cores, layer_mps=tuple(
            layer_mp(l, acc.cores, params.mp_scale) if l.is_compute else 0 for l in net.layers))
        mps = sorted({m for m, l in zip(res.layer_mps, net.layers) if l.is_compute})
        dp, _ = optimal_plan(acc, net)
        lines.append(f"| {name} | {_fmt_blocks(res.blocks())} | {','.join(map(str, mps))} | "
                     f"{_fmt_blocks(dp.blocks)} |")
    return lines


def make_chart(results: dict[str, tuple[PlanResult, ...]], path: Path) -> str:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no PNG (pip install matplotlib)"
    import numpy as np
    names = list(results)
    fig, axes = plt.subplots(2, 1, figsize=(11, 7.5), sharex=True)
    width = 0.8 / len(STRATEGIES)
    x = np.arange(len(names))
    colors = plt.get_cmap("tab10").colors
    for k, s in enumerate(STRATEGIES):
        fps = [results[n][k].fps for n in names]
        speed = [results[n][0].latency_s / results[n][k].latency_s for n in names]
        label = f"{s.number}. {s.label}"
        axes[0].bar(x + (k - len(STRATEGIES) / 2 + 0.5) * width, fps, width, label=label,
                    color=colors[k % 10])
        axes[1].bar(x + (k - len(STRATEGIES) / 2 + 0.5) * width, speed, width,
                    color=colors[k % 10])
    axes[0].set_yscale("log")
    axes[0].set_ylabel("FPS (SIMULATED, log scale)")
    axes[1].set_ylabel("speedup over no optimization")
    axes[1].axhspan(3.6, 7.9, color="grey", alpha=0.15, label="paper: DLFusion 3.6x-7.9x")
    axes[1].legend(loc="upper left", fontsize=8)
    axes[1].set_xticks(x, names)
    axes[0].legend(ncol=4, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 1.32))
    fig.suptitle("DLFusion strategies (Table III) on the SIMULATED MLU-100 model — "
                 "not hardware measurements", fontsize=11, y=0.995)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results")
    ap.add_argument("--accelerator", default="mlu100")
    ap.add_argument("--calibrate", action="store_true",
                    help="only calibrate Algorithm 1 for the accelerator and print the "
                         "'algorithm1' entry for its JSON file")
    args = ap.parse_args()
    if args.calibrate:
        c = calibrate(SimulatedAccelerator.load(args.accelerator), count=CALIBRATION_NETWORKS,
                      seed=CALIBRATION_SEED)
        print(json.dumps({"algorithm1": c.to_json()}, indent=2))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    acc = SimulatedAccelerator.load(args.accelerator)

    results = {n: compare_strategies(builtin_model(n), acc) for n in MODELS}
    target_rows, summary = targets_section(results)
    timing_rows, worst50 = timing_section(acc)
    chart_msg = make_chart(results, args.out / "dlfusion_fps.png")
    print(chart_msg)
    strict, literal = calibration_search(acc)
    print(f"calibration: strict {strict}; literal {literal}")
    # sensitivity over the literal band: per gamma, the smallest and largest feasible tau
    band: list[tuple[float, float]] = []
    for g in sorted({g for g, _ in literal}):
        ts = [t for gg, t in literal if gg == g]
        band += sorted({(g, min(ts)), (g, max(ts))})
    shipped = (acc.params.efficiency_exponent, acc.params.dispatch_s_per_core * 1e6)
    if shipped not in band:
        band = sorted(band + [shipped])
    sens_lines, (sp_lo, sp_hi, vo_lo, vo_hi) = model_sensitivity(acc, band)

    sp, vo, dv = summary["speedups"], summary["vs_oracle"], summary["dp_vs_oracle"]
    pub = summary["pub_vs_oracle"]
    alg1_lines, alg1_same = alg1_calibration_section(acc)
    print(f"Algorithm 1 calibration reproduces the shipped values: {alg1_same}")
    md = [
        "# DLFusion on a SIMULATED MLU-100",
        "",
        "**Every FPS figure in this file comes from the SIMULATED accelerator model "
        f"(`{acc.name}`, plugins/dlfusion/accelerator.py), not from hardware.** The paper "
        "measured a real Cambricon MLU-100; we have none, so this reproduces the *method* "
        "(equation 5, Algorithm 1, Table III) on a model built from the paper's published "
        "figures and observations. Agreement with the paper's ratios is therefore evidence "
        "about the model as much as about DLFusion.",
        "",
        machine_header(),
        f"- Generated by `python scripts/reproduce_dlfusion.py` ({len(MODELS)} networks, "
        "batch 1, FP16)",
        "",
        "## Summary",
        "",
        f"- DLFusion (strategy 6) speedup over no optimization: **{min(sp):.2f}x to "
        f"{max(sp):.2f}x** (paper: 3.6x to 7.9x).",
        f"- DLFusion relative to the reduced brute-force oracle: **{min(vo):.2f} to "
        f"{max(vo):.2f}** of its FPS, geometric mean {statistics.geometric_mean(vo):.2f} "
        f"(paper: within 10%, i.e. >= 0.90); {sum(v >= 0.9 for v in vo)} of {len(vo)} "
        f"networks within 10%. With the paper's literal constants: {min(pub):.2f} to "
        f"{max(pub):.2f}.",
        f"- Exact DP vs reduced oracle: **{min(dv):.3f}x to {max(dv):.3f}x** the oracle's FPS "
        "(never below 1: the DP searches a superset exactly).",
        f"- Over the whole band of (gamma, tau) that reproduces Figures 5(a) and 7(b), "
        f"DLFusion's speedups span {sp_lo:.2f}x to {sp_hi:.2f}x and its FPS is {vo_lo:.2f} to "
        f"{vo_hi:.2f} of the oracle's. The ratios depend on constants the paper does not "
        "publish, so they are not a confirmation of the paper's numbers (per-network values "
        "are in the sensitivity table below).",
        f"- Exact DP time on networks of 50 or more layers: at most **{worst50 * 1e3:.0f} ms** "
        "(target: under 1 s for 50 layers).",
        "",
        "### Paper targets",
        "",
        *target_rows,
        "",
        "## FPS of every strategy (Figure 10)",
        "",
        *fps_tables(results),
        "",
        "![FPS chart](dlfusion_fps.png)" if chart_msg.startswith("wrote")
        else f"(no chart: {chart_msg})",
        "",
        "Strategies (Table III): " + "; ".join(f"{s.number}. `{s.name}`: {s.description}"
                                               for s in STRATEGIES) + ".",
        "",
        "## What Algorithm 1 and the DP chose",
        "",
        *dlfusion_detail(acc),
        "",
        "With the paper's literal `OpCount_critical = 10^1.25` GOPs per core, the fusion test "
        "of Algorithm 1 (line 12, `sum_Op / avg_mp >= OpCount_critical`) is never met by "
        "these networks (VGG-19, the largest, has 39 G ops in all), so Algorithm 1 fuses each "
        "whole network into one block (strategy `dlfusion-published`). The paper calls the "
        "threshold 'a tunable parameter' and equation 5 a proportionality with "
        "'hardware-tuned scaling factors', tuned on synthesized layers; we tune both the same "
        "way for the simulated accelerator: on synthetic CNN chains, never on the five "
        "evaluated networks (next section). Strategies 5 and 6 use the calibrated values.",
        "",
        "## Calibration of Algorithm 1",
        "",
        *alg1_lines,
        "",
        "## DP planner timing",
        "",
        *timing_rows,
        "",
        "Median of 3 runs; wall-clock on the machine named above, while other jobs shared "
        "its 2 cores. The DP is O(n^2 x cores) block evaluations, done incrementally (a block "
        "is grown towards the front, so each extension costs O(1) vector work over the 32 "
        "MPs). The reduced oracle is the same recurrence restricted to MP in "
        "{1,2,4,8,12,16,24,32} and block boundaries at multiples of 4 (the last block holds "
        "the remainder), which is exactly the paper's brute force because the cost is "
        "additive over blocks (tests check both against exhaustive enumeration).",
        "",
        "## Sensitivity to Algorithm 1's threshold",
        "",
        *sensitivity_section(acc),
        "",
        "## Sensitivity to the calibrated model constants",
        "",
        "The Figure 10 targets at the two ends of the literal calibration band, per gamma "
        "(cells: DLFusion speedup over no optimization / DLFusion FPS as a fraction of the "
        "reduced oracle's). A steeper efficiency curve (larger gamma) rewards fusion more, "
        "and the speedups grow with it.",
        "",
        *sens_lines,
        "",
        "## The simulated accelerator model",
        "",
        "Latency of a block (layers i..j, m cores) = compute time of the busiest core + "
        "dispatch + off-chip bytes / bandwidth; a plan's latency is the sum over its blocks.",
        "",
        "- **Per-core efficiency** (Section II.B, Figures 3(b), 4(a)): a core given x ops "
        "runs at `peak * min(1, (x / OpCount_critical)^gamma)`. It rises with op count and "
        "saturates at `OpCount_critical`.",
        "- **Channel partition** (Section IV.A, Figure 6(a)): an unfused layer is split "
        "over the cores by output channel, with at least `channel_granularity` channels per "
        "core, so a 64-channel layer keeps at most 4 cores busy.",
        "- **Dispatch** (Section III.A, Figure 5(a)): each block costs `tau * m` to launch and "
        "synchronise. This is the 'net performance degradation' when MP is too large.",
        "- **Fusion** (Section III.B): intermediate tensors of a fused block stay on chip. "
        "Only the block's inputs, its weights and the tensors used after the block cross "
        "the 102.4 GB/s bus, each once.",
        "- **Halo** (Figure 7(a), from Alwani et al.): a fused block is split spatially into "
        "an m-tile grid. Going backwards through the block, each layer's tile grows by its "
        "kernel and stride, and the overlap is recomputed on every core. The redundancy "
        "grows with the number of fused layers and with m. Layers without a feature map "
        "(dense, global pooling) stay channel-split inside a block.",
        "",
        *params_section(acc),
        "",
        "### Calibration of the two unpublished constants",
        "",
        "`gamma` and `tau` are not in the paper. The script searches the grid gamma in "
        f"{{{', '.join(f'{g:g}' for g in GAMMAS)}}} x tau in "
        f"{{{', '.join(f'{t:g}' for t in TAUS_US)}}} us for the points that reproduce two "
        "published observations: Figure 5(a), where the best fixed MP is 4 for ResNet-18 "
        "and 16 for VGG-19, and Figure 7(b), where {512,512,28x28} fuses better by 4 than "
        "by 16 and {512,512,14x14} better by 16 than by 4, at MP 8 as equation 5 gives.",
        "",
        f"- Paper's comparisons only (literal): {_fmt_points(literal)}.",
        f"- Also requiring 4 and 16 to be the best of block sizes 1..16 (strict): "
        f"{_fmt_points(strict)}.",
        "",
        f"We ship gamma = {shipped[0]:g} and tau = {shipped[1]:g} us, a point of the strict "
        "set. No Figure 10 ratio and no per-network setting was used. The channel "
        "granularity (16) is an uncalibrated assumption. How the shipped model reproduces "
        "the two observations:",
        "",
        *calibration_section(acc),
        "",
        "## Built-in networks (Table II)",
        "",
        *models_section(),
        "",
        "Shapes follow torchvision at 224x224. Table II's 'Total Op' equals 2 x MACs / 2^30 "
        "of the convolution layers: our lists match it to the second decimal for ResNet-18, "
        "ResNet-50, VGG-19 and AlexNet. Table II's MobileNet (10.33) equals MobileNetV2 "
        "*with depthwise convolutions counted as dense ones*. MobileNetV2's real count is "
        "0.56, and we use the real count. Residual adds, pooling and the FC layers are in "
        "the layer lists; ReLU, batch norm and bias adds are folded into their producer, as "
        "CNML does.",
        "",
        "## Interpretation choices",
        "",
        "- **Op-count unit.** Table II and Figure 7(b) use GOPs of 2^30 ops, so "
        "`OpCount_critical` = 10^1.25 x 2^30 ops. Layer op counts follow equations 1 and 2 "
        "(2 ops per MAC).",
        "- **Equation 5** gives only a proportionality. We read "
        "`0.316*log2(C_out) + 0.659*log2(ops / 2^20)` directly as a core count and round it "
        "down to a power of two, as Algorithm 1 line 14 does for blocks. This gives "
        "ResNet-18 layers MP 2-4 and VGG-19 layers MP 4-8 (strategy 3 and "
        "`dlfusion-published`). Figure 5(a)'s best shared MPs are 4 and 16, so equation 5 is "
        "a heuristic even inside the model; for fused blocks `dlfusion` multiplies it by the "
        "calibrated MP scale (section 'Calibration of Algorithm 1').",
        "- **Algorithm 1** is implemented as intended, not literally. `avg_mp` is the running "
        "mean of the block's conv/FC MPs (line 11 as printed divides the running sum again "
        "on every iteration). The last block is closed at the end of the list. Pooling and "
        "elementwise layers ride along without ops or MP.",
        "- **Fixed-MP strategies (2 and 5)** take the best power-of-two MP from a sweep, as "
        "in Figure 5(a). Strategy 5 runs Algorithm 1 with every layer at that MP.",
        "- **Strategy 4** uses one block on all 32 cores.",
        "",
        "## What is not modelled",
        "",
        "On-chip buffer capacity (a fused block's intermediates are assumed to fit), "
        "overlap of DMA with compute, batch sizes above 1, INT8 accuracy, and anything in "
        "CNML that the paper does not describe. A real MLU-100 (or any backend) can replace "
        "the model through `measure_plan(layers, plan) -> PlanResult`. Only the DP and the "
        "oracle need per-block latencies (`latencies_ending_at`), which a hardware backend "
        "would have to measure or cache.",
        "",
    ]
    out = args.out / "dlfusion.md"
    out.write_text("\n".join(md))
    print(f"wrote {out}")
    for name, rs in results.items():
        print(f"{name:10s} " + " ".join(f"{r.plan.strategy}={r.fps:.0f}" for r in rs))


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
