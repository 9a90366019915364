"""What gga measures first: each variant's lead batch (the configs it proposes before it
knows any result), timed side by side with the task's own best config.

In a run taking turns, gga reaches the 95% mark within its first batch or it does not,
and on a machine where xgb's random first batches often come close to its best, that first
batch decides whether gga can be several times sooner. This times, for each task, the
lead batch of every variant given (``gga`` with its defaults, and e.g.
``gga-metric=gga:lead_seeding=metric``, the paper's order) beside the task's own best
config, in rounds, the order reversed every other round. Per round a batch counts at its
fastest config; the ratio is the median over the rounds of that over the own best's
speed, with its interval (``paired.py``).

    python scripts/gga_lead_batch.py --db /work/gga/base500.db \\
        --shapes scripts/unseen_convs3.json --reference /work/gga/unseen3/*/turns/xgb.db \\
        --variant gga-metric=gga:lead_seeding=metric --rounds 5 --out docs/results/gga-lead-batch

Each ResNet-18 layer is left out of ``--db`` (gga reads the other layers' records) and
compared with its own best there; each ``--shapes`` shape reads every layer and is
compared with its fastest record in the ``--reference`` databases (its xgb runs).
Timings are kept in ``OUT/data/<task>.json`` (``gga_seed_sources.timed_side_by_side``); a
second run with the same configs and as many rounds or fewer writes the report again
without measuring.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import gga_seed_sources as ss  # noqa: E402
import reproduce_gga as rg  # noqa: E402
from history.ranking import RankedHistory  # noqa: E402
from history.similarity import iter_candidates  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.components import SearchContext  # noqa: E402
from orchestrator.loop import build_space  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from paired import PairedRatio, paired_ratio  # noqa: E402
from variant_spec import split_variant  # noqa: E402

NEAR = 0.95  # the share of the own best that the 95% mark asks for
SOURCES_READ = 512  # candidates read to name the history task each lead config came from


@dataclass(frozen=True)
class Lead:
    """A variant's lead batch on one task: its configs and the history task each was
    adapted from (``-`` for a config that is no history candidate, e.g. a probe)."""

    variant: str
    configs: tuple[Config, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class TaskLeads:
    task: Task
    own: Config
    own_gflops: float  # median over the rounds
    leads: tuple[Lead, ...]
    ratios: dict[str, PairedRatio]  # variant -> its batch's fastest config over the own best
    measured_at: str


def lead_batch(plugins: Any, name: str, options: dict[str, Any], space: Space, target: Any,
               history: Any, seed: int, batch: int) -> tuple[Config, ...]:
    """The first batch of ``batch`` or fewer configs that ``options``' gga proposes on
    ``space``'s task with ``history``, before any result."""
    searcher = plugins.create("searcher", "gga", **options)
    searcher.start(SearchContext(space.task, target, space, seed, None, (), dict(options),
                                 history=history))
    return tuple(searcher.propose(batch))


def sources(history: Any, space: Space, target: Any, configs: Sequence[Config]) -> tuple[str, ...]:
    """The history task each of ``configs`` is the adapted candidate of (``-`` if none)."""
    found: dict[str, str] = {}
    for i, (cfg, rec) in enumerate(iter_candidates(RankedHistory(history, space, target), space)):
        found.setdefault(cfg.key, rec.task.name or rec.task.key_hash)
        if i >= SOURCES_READ or all(c.key in found for c in configs):
            break
    return tuple(found.get(c.key, "-") for c in configs)


def fastest_per_round(lat: dict[str, list[float | None]], configs: Sequence[Config],
                      rounds: int) -> list[float | None]:
    """Round by round, the lowest latency among ``configs`` (None if all failed)."""
    out: list[float | None] = []
    for i in range(rounds):
        got = [t for c in configs if (t := lat[c.key][i]) is not None]
        out.append(min(got) if got else None)
    return out


def measure_task(exp: rg.Experiment, task: Task, variants: Sequence[tuple[str, dict[str, Any]]],
                 references: Sequence[Path], rounds: int, batch: int) -> TaskLeads | None:
    """Every variant's lead batch on ``task`` and the own best, timed side by side (or
    the timings kept from an earlier run); None without an own best."""
    top = ss.fastest_record(exp, task, [exp.db, *references])
    if top is None:
        exp.log(f"{task.name}: no successful record of its own in {exp.db} or the "
                "--reference databases; skipped")
        return None
    own = top.config
    _, space = build_space(exp.plugins, task, exp.target,
                           exp.space_tune_options)
    store = HistoryStore.open(exp.db, create=False)
    try:
        batches = [(name, lead_batch(exp.plugins, name, options, space, exp.target,
                                     store.reader(), exp.seed, batch))
                   for name, options in variants]
        every = [c for _, configs in batches for c in configs]
        source = dict(zip((c.key for c in every),
                          sources(store.reader(), space, exp.target, every)))
        leads = [Lead(name, configs, tuple(source[c.key] for c in configs))
                 for name, configs in batches]
    finally:
        store.close()
    configs = [own, *(c for lead in leads for c in lead.configs)]
    n = len({c.key for c in configs})
    lat, when = ss.timed_side_by_side(exp, space, configs, rounds,
                                      f"{n} configs (its best and the lead batches)")
    ref = lat[own.key]
    ratios = {}
    for lead in leads:
        p = paired_ratio(fastest_per_round(lat, lead.configs, rounds), ref)
        if p is not None:
            ratios[lead.variant] = p
    ok = [t for t in ref if t]
    gflops = task.flops / statistics.median(ok) / 1e9 if ok else 0.0
    return TaskLeads(task, own, gflops, tuple(leads), ratios, when)


def _cell(p: PairedRatio | None) -> str:
    if p is None:
        return "-"
    mark = " **>= 0.95**" if p.median >= NEAR else ""
    return f"{p.median:.3f} [{p.low:.3f}, {p.high:.3f}]{mark}"


def report(exp: rg.Experiment, found: Sequence[TaskLeads], names: Sequence[str], rounds: int,
           batch: int, header: str, command: str) -> Path:
    lines = ["# gga's lead batch: the configs it measures first, beside the own best", "",
             header, "", f"Command: `{command}`", "",
             f"History: `{exp.db}` (a ResNet-18 layer is left out of it; a shape of "
             "`--shapes` reads every layer). Each variant's lead batch (at most "
             f"{batch} configs: gga's first batch before it knows any result) and the task's "
             f"own best config were timed side by side, {rounds} rounds, the order reversed "
             "every other round. A batch counts at its fastest config in each round; each "
             "cell is the median of the per-round ratios of that over the own best's speed "
             f"[interval]. Bold: at or above {NEAR:.2f}, where the 95% mark would be reached "
             "with the first batch if the mark were the own best's median speed (in the "
             "turns it is 95% of xgb's fastest timing, a little higher).", ""]
    times = sorted(t.measured_at for t in found if t.measured_at)
    if times:
        lines += [f"Timings finished from {times[0]} to {times[-1]} UTC.", ""]
    lines += ["| task | own best (GFLOPS, median) | " + " | ".join(names) + " |",
              "|---|---|" + "---|" * len(names)]
    for t in found:
        lines.append(f"| {t.task.name} | {t.own_gflops:.1f} | "
                     + " | ".join(_cell(t.ratios.get(n)) for n in names) + " |")
    lines.append("")
    for n in names:
        got = [t.ratios[n] for t in found if n in t.ratios]
        if not got:
            continue
        near = sum(p.median >= NEAR for p in got)
        geo = statistics.geometric_mean([p.median for p in got])
        lines.append(f"- {n}: the lead batch at >= {NEAR:.2f} of the own best on {near} of "
                     f"{len(got)} tasks; geometric mean of the medians {geo:.3f}.")
    lines += ["", "The lead batches (the history task each config was adapted from; `-`: "
              "no history candidate):", "", "| task | variant | sources |", "|---|---|---|"]
    for t in found:
        for lead in t.leads:
            lines.append(f"| {t.task.name} | {lead.variant} | {', '.join(lead.sources)} |")
    lines.append("")
    path = exp.out / "lead-batch.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins
    from orchestrator.target import detect_host

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="history database holding every layer's tuning")
    ap.add_argument("--layers", help="comma-separated layers to leave out [all resnet18_conv; "
                    "none with --shapes]")
    ap.add_argument("--shapes", action="append", default=[], metavar="FILE",
                    help="a suite file of conv2d shapes, each read against every layer")
    ap.add_argument("--reference", action="append", default=[], metavar="DB", nargs="+",
                    help="databases holding the shapes' own tuning (their xgb runs)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=gga:KEY=VALUE,...",
                    help="a gga variant compared beside gga's defaults")
    ap.add_argument("--batch-size", type=int, default=2,
                    help="the first batch's size, which bounds the lead [%(default)s]")
    ap.add_argument("--seed", type=int, default=0, help="the searchers' seed [%(default)s]")
    ap.add_argument("--rounds", type=int, default=5, help="rounds side by side [%(default)s]")
    ap.add_argument("--out", default="docs/results/gga-lead-batch", help="report directory")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.batch_size < 1:
        ap.error("--rounds and --batch-size must be >= 1")
    db = Path(args.db)
    if not db.exists():
        ap.error(f"{db} does not exist: give the history database the layers were tuned into")
    variants: list[tuple[str, dict[str, Any]]] = [("gga", {})]
    for text in args.variant:
        try:
            name, searcher, options = split_variant(text)
        except ValueError as exc:
            ap.error(f"--variant {text}: {exc}")
        if searcher != "gga" or name in dict(variants):
            ap.error(f"--variant {text}: give a new name and the searcher gga")
        variants.append((name, options))
    by_name = {t.name: t for t in rg.resnet_layers()}
    names = (args.layers.split(",") if args.layers
             else [] if args.shapes else list(by_name))
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    shapes = [t for f in args.shapes
              for t in rg.chosen_shapes(ap, argparse.Namespace(shapes=f))]
    references = [Path(p) for group in args.reference for p in group]
    missing = [str(p) for p in references if not p.exists()]
    if missing:
        ap.error(f"--reference: {', '.join(missing)} does not exist")
    exp = rg.Experiment(layers=tuple(by_name[n] for n in names), history_layers=(), trials=0,
                        budgets={}, db=db, work=db.parent, out=Path(args.out),
                        target=detect_host(), plugins=load_plugins(), seed=args.seed)
    found = [t for task in (*exp.layers, *shapes)
             if (t := measure_task(exp, task, variants, references, args.rounds,
                                   args.batch_size)) is not None]
    command = "python scripts/gga_lead_batch.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    path = report(exp, found, [n for n, _ in variants], args.rounds, args.batch_size,
                  machine_header(), command.strip())
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
