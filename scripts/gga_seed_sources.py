"""Which history layers seed a left-out layer well: each history layer's first candidate
in gga's order, adapted to the left-out layer and timed side by side with that layer's
own best config.

gga's first generation is the history candidates with the best filtering metric (eq. 2:
throughput x utilization x match score squared), whatever layer they come from. This
asks, for each layer left out, how fast the first candidate of every other layer runs
there, and where gga's order puts it: does the metric pick the layer that suits the
left-out one? The reference is the left-out layer's own best in the same database (its
xgb run), timed in the same rounds; each ratio is the median over the rounds of the
candidate's speed over the reference's, with its interval (``paired.py``).

    python scripts/gga_seed_sources.py --db /work/gga/base500.db --rounds 5 \\
        --out docs/results/gga-emeraldrapids-seed-sources

A history tuned on another space names it as its runs did (``--space cpu --space-opt
check=relaxed``): the candidates are adapted to, and timed on, that space.

The database must hold every layer's tuning (``reproduce_gga.py --history-only``, or runs
imported with ``orchestrator history import``). Timings are kept in ``OUT/data/<layer>.json``:
a second run with the same configs and as many rounds or fewer writes the report again
without measuring.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shlex
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402
from history.similarity import ScoredRecord, iter_candidates, rank_history  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.loop import build_space  # noqa: E402
from orchestrator.result import MeasureResult  # noqa: E402
from orchestrator.runoff import measure_interleaved  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from paired import PairedRatio, paired_ratio  # noqa: E402

NEAR = 0.95  # a source whose candidate runs at this share of the layer's own best or more


@dataclass(frozen=True)
class Source:
    """A history layer's first candidate in gga's order for the left-out layer."""

    task: Task
    position: int  # 1-based place in gga's candidate order (its first generation: 1..8)
    record: ScoredRecord
    config: Config  # the record's config adapted to the left-out layer


@dataclass(frozen=True)
class LayerSources:
    """One left-out layer: its own best, each source, and each source over the best."""

    task: Task
    own: Config
    own_gflops: float  # the own best's median timing in the rounds
    sources: tuple[Source, ...]
    ratios: dict[str, PairedRatio]  # source task key -> its candidate over the own best
    gflops: dict[str, float]  # source task key -> its candidate's median GFLOPS here
    measured_at: str = ""  # when the timings were finished (UTC, ISO)


def kernel(task: Task) -> str:
    """``3x3/2``: the kernel and stride of a convolution, "" for other operators."""
    p = task.params
    if not {"R", "S", "stride"} <= p.keys():
        return ""
    return f"{p['R']}x{p['S']}/{p['stride']}"


def sources(ranked: Sequence[ScoredRecord], space: Space) -> list[Source]:
    """Each source task's first config in gga's candidate order over ``ranked`` (best
    filtering metric first), in that order."""
    wanted = len({r.task.key for r in ranked})
    found: dict[str, Source] = {}
    for i, (cfg, rec) in enumerate(iter_candidates(ranked, space), 1):
        if rec.task.key not in found:
            found[rec.task.key] = Source(rec.task, i, rec, cfg)
            if len(found) == wanted:
                break
    return list(found.values())


def own_best(store: HistoryStore, task: Task, exp: rg.Experiment) -> MeasureResult | None:
    """``task``'s fastest successful record in ``store`` on ``exp.target`` (None if none)."""
    task_id, target_id = store.find_task(task), store.find_target(exp.target)
    if task_id is None or target_id is None:
        return None
    top = store.best(task_id, target_id, k=1)
    return top[0].result if top else None


def fastest_record(exp: rg.Experiment, task: Task, dbs: Sequence[Path]) -> MeasureResult | None:
    """``task``'s fastest successful record over the databases ``dbs`` (None if none has
    one): the own best of a task tuned in several runs, each in its own database."""
    best: MeasureResult | None = None
    for db in dbs:
        store = HistoryStore.open(db, create=False)
        try:
            top = own_best(store, task, exp)
        finally:
            store.close()
        if top is not None and (best is None or top.latency < best.latency):
            best = top
    return best


def _timings(path: Path, configs: Sequence[Config], rounds: int
             ) -> tuple[dict[str, list[float | None]], str] | None:
    """The kept timings of ``configs`` at ``path``, and when they were finished, if they
    cover ``rounds`` rounds."""
    if not path.exists():
        return None
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    got = kept.get("latencies", {})
    if kept.get("rounds", 0) < rounds or any(c.key not in got for c in configs):
        return None
    return {c.key: got[c.key][:rounds] for c in configs}, str(kept.get("measured_at", ""))


def timed_side_by_side(exp: rg.Experiment, space: Space, configs: Sequence[Config],
                       rounds: int, what: str) -> tuple[dict[str, list[float | None]], str]:
    """The latencies of ``configs`` on ``space``'s task, ``rounds`` rounds side by side
    (None where a timing failed), and when they were finished: read from
    ``OUT/data/<task>.json`` when it covers them, else measured (the log names them as
    ``what``) and kept there."""
    task = space.task
    path = exp.out / "data" / f"{task.name or task.key_hash}.json"
    kept = _timings(path, configs, rounds)
    if kept is not None:
        return kept
    exp.log(f"{task.name}: {what}, {rounds} rounds side by side")
    measurer = exp.plugins.create("measurer", exp.measurer, **exp.measurer_options)
    try:
        got = measure_interleaved(measurer, space, exp.target, configs, rounds)
    finally:
        measurer.close()
    lat = {k: [r.latency if r.ok else None for r in rs] for k, rs in got.items()}
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"task": task.to_dict(), "rounds": rounds, "measured_at": when,
                                "latencies": lat}, indent=1))
    return lat, when


def measure_layer(exp: rg.Experiment, task: Task, rounds: int) -> LayerSources | None:
    """Time ``task``'s own best and every source's candidate side by side (or read the
    timings kept from an earlier run); None when the database has no own best."""
    _, space = build_space(exp.plugins, task, exp.target,
                           exp.space_tune_options)
    store = HistoryStore.open(exp.db, create=False)
    try:
        own = own_best(store, task, exp)
        found = sources(rank_history(store.reader(), space, exp.target), space)
    finally:
        store.close()
    if own is None:
        exp.log(f"{task.name}: no successful measurement of its own in {exp.db}; skipped")
        return None
    configs = [own.config, *(s.config for s in found)]
    lat, when = timed_side_by_side(exp, space, configs, rounds,
                                   f"its best and {len(found)} sources' candidates")
    ref = lat[own.config.key]
    ratios: dict[str, PairedRatio] = {}
    gflops: dict[str, float] = {}
    for s in found:
        p = paired_ratio(lat[s.config.key], ref)
        if p is not None:
            ratios[s.task.key] = p
        gflops[s.task.key] = _median_gflops(task, lat[s.config.key])
    return LayerSources(task, own.config, _median_gflops(task, ref), tuple(found), ratios, gflops,
                        when)


def _median_gflops(task: Task, latencies: Sequence[float | None]) -> float:
    ok = [x for x in latencies if x]
    return task.flops / statistics.median(ok) / 1e9 if ok else 0.0


def layer_rows(ls: LayerSources) -> list[str]:
    rows = []
    for s in ls.sources:
        p = ls.ratios.get(s.task.key)
        rows.append(f"| {ls.task.name} | {kernel(ls.task)} | {s.task.name} | {kernel(s.task)} "
                    f"| {s.position} | {s.record.metric:.1f} | {s.record.gflops:.1f} "
                    f"| {ls.gflops[s.task.key]:.1f} | {p.text() if p else 'failed'} |")
    return rows


def summary_row(ls: LayerSources) -> tuple[str, dict[str, bool]]:
    """One layer's line of the summary table and what it counts towards."""
    ranked = sorted((s for s in ls.sources if s.task.key in ls.ratios),
                    key=lambda s: -ls.ratios[s.task.key].median)
    first = min(ls.sources, key=lambda s: s.position, default=None)  # gga's first pick

    def cell(s: Source | None) -> str:
        if s is None:
            return "-"
        p = ls.ratios.get(s.task.key)
        return (f"{s.task.name} ({kernel(s.task)}, place {s.position}) "
                f"{f'{p.median:.3f}' if p else 'failed'}")

    head = f"| {ls.task.name} ({kernel(ls.task)}) | {ls.own_gflops:.1f} | {cell(first)} "
    if not ranked:
        return head + "| - | - |", {}
    best = ranked[0]
    kin = [s for s in ranked if kernel(s.task) and kernel(s.task) == kernel(ls.task)]
    first_ratio = ls.ratios.get(first.task.key) if first is not None else None
    counts = {"best is kin": bool(kin) and best in kin,
              "first is best": first is best,
              "near": ls.ratios[best.task.key].median >= NEAR,
              "first near": first_ratio is not None and first_ratio.median >= NEAR,
              "has kin": bool(kin)}
    return head + f"| {cell(best)} | {cell(kin[0] if kin else None)} |", counts


def kernel_pairs(layers: Sequence[LayerSources]) -> list[str]:
    """Markdown rows: for each (source kernel, left-out kernel) pair, how many candidates
    and the median, lowest and highest of their ratios over the own best."""
    groups: dict[tuple[str, str], list[float]] = {}
    for ls in layers:
        for s in ls.sources:
            if s.task.key in ls.ratios:
                groups.setdefault((kernel(s.task), kernel(ls.task)), []).append(
                    ls.ratios[s.task.key].median)
    rows = []
    for (src, dst), xs in sorted(groups.items()):
        rows.append(f"| {src or '-'} | {dst or '-'} | {len(xs)} | {statistics.median(xs):.3f} "
                    f"| {min(xs):.3f} | {max(xs):.3f} | {sum(x >= NEAR for x in xs)} |")
    return rows


def space_words(exp: rg.Experiment) -> str:
    """The space the candidates are adapted to and timed on, as the report names it."""
    name = f"`{exp.space_generator}`" if exp.space_generator else "the first that supports conv2d"
    return f"{name} ({exp.space_option_text or 'its defaults'})"


def report(exp: rg.Experiment, layers: Sequence[LayerSources], rounds: int, header: str,
           command: str) -> Path:
    lines = ["# gga's seed sources: each history layer's first candidate on a left-out layer",
             "", header, "", f"Command: `{command}`", "",
             f"History: `{exp.db}`; space: {space_words(exp)}. For each layer left out, "
             "every other layer's first candidate in gga's order (best filtering metric, "
             "eq. 2, adapted to the left-out shape) was timed side by side with the left-out "
             "layer's own best config in that "
             f"database (its xgb run), {rounds} rounds, the order reversed every other round. "
             "\"place\" is where gga's candidate order puts it (the first generation takes "
             "places 1 to 8 with the default probe share); \"over own best\" is the median "
             "of the per-round speed ratios [interval].", ""]
    times = sorted(ls.measured_at for ls in layers if ls.measured_at)
    if times:
        lines += [f"Timings finished from {times[0]} to {times[-1]} UTC (each layer's "
                  "timings side by side take a minute or less).", ""]
    if not layers:
        lines += ["No layer had an own best to compare with.", ""]
    else:
        lines += ["| left out (kernel/stride) | own best again (GFLOPS) | gga's first candidate, "
                  "over own best | best source | best source of the same kernel and stride |",
                  "|---|---|---|---|---|"]
        totals: dict[str, int] = {}
        for ls in layers:
            row, counts = summary_row(ls)
            lines.append(row)
            for k, v in counts.items():
                totals[k] = totals.get(k, 0) + int(v)
        n = len(layers)
        lines += ["", f"Of {n} layers: gga's first candidate is the best source on "
                  f"{totals.get('first is best', 0)}; the best source has the left-out layer's "
                  f"kernel and stride on {totals.get('best is kin', 0)} (of "
                  f"{totals.get('has kin', 0)} with such a source); some source runs at >= "
                  f"{NEAR:.2f} of the own best (median) on {totals.get('near', 0)}, gga's first "
                  f"candidate on {totals.get('first near', 0)}.", "",
                  "By kernel and stride, source to left-out layer (each candidate's median "
                  "ratio over the own best):", "",
                  "| source | left out | candidates | median | lowest | highest | "
                  f">= {NEAR:.2f} |", "|---|---|---|---|---|---|---|", *kernel_pairs(layers), "",
                  "Every source, layer by layer:", "",
                  "| left out | kernel | source | kernel | place | metric | source GFLOPS "
                  "(its own shape, in history) | GFLOPS here (median) | over own best |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for ls in layers:
            lines += layer_rows(ls)
        lines.append("")
    path = exp.out / "seed-sources.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="history database holding every layer's tuning")
    ap.add_argument("--layers", help="comma-separated layers to leave out [all resnet18_conv]")
    ap.add_argument("--rounds", type=int, default=5, help="rounds side by side [%(default)s]")
    ap.add_argument("--out", default="docs/results/gga-seed-sources", help="report directory")
    ap.add_argument("--space", help="space generator the history was tuned on [the first that "
                                    "supports conv2d: cpu]")
    ap.add_argument("--space-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="an option of that space, as the history's runs had it, e.g. "
                         "--space-opt check=relaxed (repeatable)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    db = Path(args.db)
    if not db.exists():
        ap.error(f"{db} does not exist: give the history database the layers were tuned into")
    by_name = {t.name: t for t in rg.resnet_layers()}
    names = args.layers.split(",") if args.layers else list(by_name)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    plugins = load_plugins()
    target = rg.checked_target(ap, argparse.Namespace(
        space_opt=args.space_opt, measurer="local", space=args.space, target="host"), plugins)
    exp = rg.Experiment(layers=tuple(by_name[n] for n in names), history_layers=(), trials=0,
                        budgets={}, db=db, work=db.parent, out=Path(args.out),
                        target=target, plugins=plugins, space_generator=args.space,
                        space_options=rg.parse_options(args.space_opt))
    found = [ls for t in exp.layers if (ls := measure_layer(exp, t, args.rounds)) is not None]
    command = "python scripts/gga_seed_sources.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    path = report(exp, found, args.rounds, machine_header(), command.strip())
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
