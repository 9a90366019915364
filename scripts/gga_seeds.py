"""Issue 4's targets over several seeds of the same turns (``gga_turns.py``), side by side.

One set of turns gives one verdict per layer, and verdicts swing between seeds (a layer's
speed-up at 95% can turn on one measurement). This reads turns already run with
``gga_turns.py`` under different ``--seed`` values into different ``--work`` directories,
and reports each layer's verdicts seed by seed, how many targets each seed met, on how
many layers a target was met on every seed and on at least one, and gga's speed-ups
averaged over the layers (the paper's figures are averages), seed by seed and over every
seed, each layer counted once. It measures nothing.

    python scripts/gga_seeds.py --layers r18_l1,r18_l2 --no-pruned --confirm 1 \\
        --turns 0=/work/gga/turns-confirm --turns 1=/work/gga/turns-confirm-s1 \\
        --out docs/results/gga-znver3-seeds

Give the options the turns were run with (``--confirm``, ``--budget``, ``--variant``):
they decide how the databases are read.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import gga_turns as gt  # noqa: E402
import reproduce_gga as rg  # noqa: E402
from speedup_mean import (  # noqa: E402
    TIME_TARGETS, describe, layer_speedups, mean_speedup, over_seeds)

TARGETS = ("5x xgb", "3x ga", "0.98 final")


def _yes(ok: bool | None) -> str:
    return "-" if ok is None else ("met" if ok else "not met")


def summary(per_seed: Mapping[int, Sequence[gt.TurnsResult]]) -> list[str]:
    """Markdown: each layer's speed-ups and verdicts seed by seed, then the counts."""
    lines = ["| layer | seed | gga / xgb seconds to 95% | vs xgb (>= 5x) | ga seconds | "
             "vs ga (>= 3x) | gga final / xgb (>= 0.98) | 5x xgb | 3x ga | 0.98 final |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    by_layer: dict[str, dict[int, dict[str, bool | None]]] = {}
    rows: dict[str, list[str]] = {}  # a layer's seeds side by side
    for seed, results in per_seed.items():
        for r in results:
            _, g = r.reach("gga")
            _, x = r.reach("xgb")
            _, a = r.reach("ga")
            v = gt.verdict(r)
            by_layer.setdefault(r.task.name, {})[seed] = v
            final = f"{r.curves['gga'].final / r.reference:.3f}" if r.reference > 0 else "-"
            rows.setdefault(r.task.name, []).append(
                f"| {r.task.name} | {seed} | {rg._fmt(g)} / {rg._fmt(x)} | "
                f"{gt.speedup(r, 'xgb', rg.MARK)} | {rg._fmt(a)} | "
                f"{gt.speedup(r, 'ga', rg.MARK)} | {final} | "
                + " | ".join(_yes(v[k]) for k in TARGETS) + " |")
    lines += [row for layer in rows.values() for row in layer]
    lines.append("")
    lines += ["| target | " + " | ".join(f"seed {s}" for s in per_seed)
              + " | met on every seed | met on at least one | same verdict on every seed |",
              "|---|" + "---|" * (len(per_seed) + 3)]
    for k in TARGETS:
        per = []
        for seed in per_seed:
            told = [v[seed][k] for v in by_layer.values() if seed in v and v[seed][k] is not None]
            per.append(f"{sum(told)} of {len(told)}")
        every = some = same = counted = 0
        for seeds in by_layer.values():
            told = [v[k] for v in seeds.values() if v[k] is not None]
            if len(told) < len(per_seed):  # not told on some seed, or a seed lacks the layer
                continue
            counted += 1
            every += all(told)
            some += any(told)
            same += len(set(told)) == 1
        lines.append(f"| {k} | " + " | ".join(per)
                     + f" | {every} of {counted} | {some} of {counted} | {same} of {counted} |")
    lines += ["", "A layer counts in the last three columns only where the target could be "
              "told on every seed (xgb reached its own mark; gga or ga reached it). \"ga "
              "never\" counts as beaten, as in `gga_turns.py`.", ""]
    return lines


def means_over_seeds(per_seed: Mapping[int, Sequence[gt.TurnsResult]]) -> list[str]:
    """Markdown: gga's time targets on speed-ups averaged over the layers, seed by seed
    and over every seed (``speedup_mean.over_seeds``: a layer's figure is the geometric
    mean over its seeds, and the interval resamples layers with their seeds); then each
    variant's (``--variant``) over every seed, and over gga's seconds."""
    lines = ["Averaged over the layers (`speedup_mean.py`; the interval is a 95% bootstrap "
             "over layers), seed by seed and over every seed. Over every seed a layer's "
             "speed-up is the geometric mean of its seeds' (over the seeds where it could "
             "be told), so each layer counts once and its seeds are resampled together; "
             "the summed seconds are of those per-layer geometric means.", ""]
    for other, target in TIME_TARGETS:
        per = [layer_speedups(results, other) for results in per_seed.values()]
        for seed, items in zip(per_seed, per):
            lines.append(f"- gga over {other}, seed {seed}: "
                         + describe(mean_speedup(items), target, "gga", other) + ".")
        lines.append(f"- gga over {other}, every seed: "
                     + describe(mean_speedup(over_seeds(per)), target, "gga", other) + ".")
    variants = sorted({name for results in per_seed.values() for r in results
                       for name in r.curves} - {v.name for v in gt.SEARCHERS})
    for name in variants:  # every seed only, and over gga against 1x: sooner or not
        for other, target in (*TIME_TARGETS, ("gga", 1.0)):
            per = [layer_speedups(results, other, name=name) for results in per_seed.values()]
            lines.append(f"- {name} over {other}, every seed: "
                         + describe(mean_speedup(over_seeds(per)), target, name, other) + ".")
    lines.append("")
    return lines


def measured(results: Sequence[gt.TurnsResult]) -> str:
    """When one seed's turns were measured (UTC), from its runs' first and last records."""
    when = gt.measured_period(results)
    return f"from {when[0]} to {when[1]} UTC" if when else "nothing yet"


VIEWS = ("run", "deployed")


def write_report(exp: rg.Experiment, turns: Sequence[tuple[int, Path]], command: str,
                 header: str, view: str = "run") -> Path:
    """Read each (seed, work directory) set of turns of ``exp``'s layers and write
    ``gga-seeds.md`` in ``exp.out``. ``view`` ``deployed``: each layer as
    :func:`gga_turns.deployed` sees it (layers whose reported configs were not timed
    again are left out)."""
    per_seed = {}
    for seed, work in turns:
        e = replace(exp, seed=seed, work=work)
        results = [gt.layer_turns(e, job.task) for job in rg.left_out(e)]
        if view == "deployed":
            results = [d for r in results if (d := gt.deployed(e, r)) is not None]
        per_seed[seed] = results
    budgets = ", ".join(f"{v.name} {exp.budget(v.name)}" for v in gt.searchers(exp))
    lines = ["# GGA turns over several seeds", "", header, "", f"Command: `{command}`", "",
             f"Seeds {', '.join(str(s) for s in per_seed)}, each a full set of turns "
             f"(`gga_turns.py`; budgets {budgets} trials"
             + (f"; `--confirm {exp.confirm}`" if exp.confirm else "") + "), read from "
             + ", ".join(f"`{d}`" for _, d in turns) + ". Seconds are each searcher's "
             "own clock; the 95% mark is of xgb's best in the same seed's turns"
             + (". Deployed view: each run's best-so-far is the speed of the config it "
                "reported after each trial, timed again side by side with the layer's "
                "other reported configs (`gga_turns.py --deployed`), and xgb's best is its "
                "final config's, timed the same way; layers without those timings are "
                "left out. " + gt.deployed_view_line(exp.deployed_view, exp.deployed_rounds)
                if view == "deployed" else "."),
             "",
             *(f"- Seed {seed} measured {measured(results)}." for seed, results in per_seed.items()),
             "", *summary(per_seed), *means_over_seeds(per_seed)]
    exp.out.mkdir(parents=True, exist_ok=True)
    path = exp.out / "gga-seeds.md"
    path.write_text("\n".join(lines))
    return path


def _seed_dir(text: str) -> tuple[int, Path]:
    seed, sep, path = text.partition("=")
    if not sep or not path or not seed.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"--turns takes SEED=DIR, e.g. 1=/work/gga/turns-s1; "
                                         f"got {text!r}")
    return int(seed), Path(path)


def turns_parser(doc: str, turns_help: str) -> argparse.ArgumentParser:
    """A parser of ``gga_turns.py``'s options and ``--turns SEED=DIR`` (repeatable), for
    the scripts that read turns already run; ``doc``'s first paragraph describes it."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    gt.add_turns_arguments(ap)
    ap.add_argument("--turns", action="append", type=_seed_dir, default=[], metavar="SEED=DIR",
                    help=turns_help)
    return ap


def check_turns_dirs(ap: argparse.ArgumentParser, turns: Sequence[tuple[int, Path]]) -> None:
    """A usage error naming each ``--turns`` directory that does not exist."""
    missing = [str(d) for _, d in turns if not d.is_dir()]
    if missing:
        ap.error(f"no turns directory {', '.join(missing)}: run gga_turns.py with that --work")


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    ap = turns_parser(__doc__, "the --seed and --work of one set of turns (repeat, two or more)")
    ap.add_argument("--view", choices=VIEWS, default="run",
                    help="run: the runs' own best-so-far; deployed: the speeds of the "
                         "configs they reported, timed again (gga_turns.py --deployed) "
                         "[%(default)s]")
    args = ap.parse_args(argv)
    ignored = [flag for flag, given in (
        ("--seed", args.seed != 0), ("--work", args.work is not None),
        ("--remeasure", args.remeasure), ("--deployed", args.deployed), ("--smoke", args.smoke),
        ("--report-only", args.report_only)) if given]
    if ignored:
        ap.error(f"{', '.join(ignored)} do(es) not apply here: this script reads turns already "
                 "run, each seed's from its --turns SEED=DIR")
    if len(args.turns) < 2:
        ap.error("give two or more --turns SEED=DIR: the seeds to compare")
    seeds = [s for s, _ in args.turns]
    if len(set(seeds)) != len(seeds):
        ap.error(f"each --turns needs its own seed, got {', '.join(map(str, seeds))}")
    check_turns_dirs(ap, args.turns)
    args.report_only = True
    command = "python scripts/gga_seeds.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    path = write_report(gt.experiment(ap, args), args.turns, command.strip(), machine_header(),
                        args.view)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
