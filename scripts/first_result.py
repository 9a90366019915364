"""Seconds from ``tune()`` to a searcher's first measured batch, with the local measurer's
workers started at the first batch (``off``), when the task starts (``on``: ``prestart``,
the default) or kept from an earlier task (``kept``: a shared measurer, as the CLI keeps
for every workload of a command but the first), side by side in rounds. ``--settings
late,on`` times instead the runner's sentinel compiled at its first timing (``late``:
``early_sentinel=false``) against compiled when the runner starts (``on``).

Issue 4's time targets are won or lost at the first batch: on most layers gga's first
configs (the best of history) already reach 95% of xgb's best, so its seconds to the mark
are its seconds to its first result, and a mark that xgb reaches within five times that
is out of reach. Each run tunes a shape no history holds, on a fresh copy of the history
database, and stops at its first batch (gga: its lead batch of the best history
candidates, one config per core unless ``lead`` says otherwise; xgb and ga: a batch of
``--batch-size``, 8 by default). Every round runs each shape and searcher with
every setting, the order of the settings rotated from round to round. Reported: median
seconds, and medians of per-pair ratios (same round, shape and searcher) with their
distribution-free intervals (``scripts/paired.py``).

    python scripts/first_result.py --db /work/gga/base.db --rounds 5
    python scripts/first_result.py --db /work/gga/base.db --rounds 7 --settings late,on
    python scripts/first_result.py --db /work/gga/base.db --settings on,kept --variant gga-lead1=gga:lead=1
    python scripts/first_result.py --smoke          # CI: a small real run, own history
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header, write_report  # noqa: E402
from paired import paired_ratio  # noqa: E402
from variant_spec import split_variant  # noqa: E402
from warm import warm_measurer  # noqa: E402

from orchestrator.hookspecs import hookimpl  # noqa: E402
from orchestrator.loop import tune  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.task import Task  # noqa: E402

# Shapes of no suite (so of no history): channel counts and sizes ResNet-18 lacks.
SHAPES = {
    "u96x28": {"N": 1, "C": 96, "H": 28, "W": 28, "K": 96, "R": 3, "S": 3, "stride": 1, "pad": 1},
    "u48x40": {"N": 1, "C": 48, "H": 40, "W": 40, "K": 80, "R": 3, "S": 3, "stride": 1, "pad": 1},
    "u160x14": {"N": 1, "C": 160, "H": 14, "W": 14, "K": 192, "R": 1, "S": 1, "stride": 1,
                "pad": 0},
}
SMOKE_HISTORY = {"N": 1, "C": 16, "H": 14, "W": 14, "K": 16, "R": 3, "S": 3, "stride": 1, "pad": 1}
SMOKE_SHAPE = {"N": 1, "C": 24, "H": 14, "W": 14, "K": 16, "R": 3, "S": 3, "stride": 1, "pad": 1}
BATCH = 8
# Where the local measurer's workers come from: started by the first batch, started when
# the task starts, kept from an earlier task; or started when the task starts with the
# runner's sentinel compiled at its first timing instead of when it starts.
SETTINGS = ("off", "on", "kept")
ALL_SETTINGS = (*SETTINGS, "late")
MEASURER_OPTIONS = {"off": {"prestart": False}, "on": {}, "kept": {},
                    "late": {"early_sentinel": False}}
WHAT = {
    "off": "`off`, started by the first batch (`prestart=false`)",
    "on": "`on`, started when the task starts (`prepare`, the default), so that their TVM "
          "import overlaps the searcher's start",
    "kept": "`kept`, a measurer kept from an earlier task (`tune(shared_measurer=...)`), as "
            "`orchestrator tune` keeps it for every workload of a command but the first: no "
            "TVM import, the runner's sentinel already built",
    "late": "`late`, started when the task starts but with the runner's contention-guard "
            "sentinel compiled at its first timing (`early_sentinel=false`, as before the "
            "runner compiled it when it starts)",
}


class _FirstBatch(Exception):
    """Raised by the observer to end a run at its first measured batch."""


class _Stopwatch:
    """Notes the seconds since ``t0`` when the first batch is measured, and ends the run."""

    def __init__(self) -> None:
        self.t0 = 0.0
        self.seconds: float | None = None
        self.trials = 0

    @hookimpl
    def orchestrator_results_measured(self, run: Any, results: Any, trials_done: int,
                                      best: Any) -> None:
        self.seconds = time.perf_counter() - self.t0
        self.trials = trials_done
        raise _FirstBatch


@dataclass(frozen=True)
class Sample:
    round: int
    shape: str
    searcher: str
    setting: str
    seconds: float
    trials: int


def first_result(task: Task, searcher: str, setting: str, history: Path, seed: int,
                 scratch: Path, kept: Any, options: dict[str, Any] | None = None,
                 batch: int = BATCH) -> tuple[float, int]:
    """(seconds, trials) of ``searcher``'s first batch on ``task`` (with searcher
    ``options``), on a copy of ``history``, with the workers of ``setting`` (``kept``: the
    measurer kept for that setting), in batches of ``batch``."""
    db = scratch / "history.db"
    shutil.copyfile(history, db)
    plugins = load_plugins()
    watch = _Stopwatch()
    plugins.pm.register(watch, name="first-result-stopwatch")
    watch.t0 = time.perf_counter()
    try:
        tune(task, db=str(db), plugins=plugins, searcher=searcher, trials=batch,
             batch_size=batch, seed=seed, measurer_options=MEASURER_OPTIONS[setting],
             searcher_options=dict(options or {}),
             shared_measurer=kept if setting == "kept" else None)
    except _FirstBatch:
        pass
    if watch.seconds is None:
        raise SystemExit(f"error: {searcher} on {task.label()} measured nothing")
    return watch.seconds, watch.trials


def measure(shapes: dict[str, dict[str, int]], searchers: list[str], rounds: int,
            history: Path, settings: tuple[str, ...] = SETTINGS,
            variants: dict[str, tuple[str, dict[str, Any]]] | None = None,
            batch: int = BATCH) -> list[Sample]:
    """Every shape, name in ``searchers`` and setting, ``rounds`` times; a name in
    ``variants`` runs its (searcher, options) there, any other name the searcher so named."""
    variants = variants or {}
    samples = []
    with tempfile.TemporaryDirectory(prefix="first-result-") as d:
        scratch = Path(d)
        kept = warm_measurer(scratch) if "kept" in settings else None
        try:
            for r in range(rounds):
                order = settings[r % len(settings):] + settings[:r % len(settings)]
                for name, shape in shapes.items():
                    task = Task.create("conv2d", {**shape, "dilation": 1}, name=name)
                    for searcher in searchers:
                        plugin, options = variants.get(searcher, (searcher, {}))
                        for setting in order:
                            seconds, trials = first_result(task, plugin, setting, history,
                                                           seed=r, scratch=scratch, kept=kept,
                                                           options=options, batch=batch)
                            samples.append(Sample(r, name, searcher, setting, seconds, trials))
                            print(f"round {r + 1}/{rounds} {name} {searcher} {setting}: "
                                  f"{seconds:.2f} s ({trials} trials)", flush=True)
        finally:
            if kept is not None:
                kept.close()
    return samples


def report(samples: list[Sample], searchers: list[str], command: str, note: str = "",
           settings: tuple[str, ...] = SETTINGS, batch: int = BATCH) -> str:
    """The report; each setting in ``settings`` is over the next one (pairs of runs)."""
    seconds = {(s.round, s.shape, s.searcher, s.setting): s.seconds for s in samples}
    runs = sorted({(s.round, s.shape) for s in samples})

    def column(searcher: str, setting: str) -> list[float]:
        """``searcher``'s seconds with ``setting``, one per (round, shape), in one order:
        two columns pair run by run."""
        return [seconds[(r, shape, searcher, setting)] for r, shape in runs]

    def over(slow: list[float], fast: list[float], level: bool = True) -> str:
        """The median of the pairs' ``slow / fast`` [interval] (at its confidence level)."""
        ratio = paired_ratio(fast, slow)  # paired_ratio(x, ref) is ref / x
        if ratio is None:
            return "-"
        return f"{ratio.text()} at {ratio.level:.1%}" if level else ratio.text()

    shapes = sorted({s.shape for s in samples})
    rounds = len({s.round for s in samples})
    pairs = list(zip(settings, settings[1:]))
    title = ("workers started at the first batch, when the task starts, or kept from an "
             "earlier task" if settings == SETTINGS else
             "settings " + ", ".join(f"`{x}`" for x in settings))
    lines = [f"# Seconds to the first result: {title}", "", machine_header(), "",
             f"Command: `{command}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"Each run tunes one of {len(shapes)} shapes no history holds ({', '.join(shapes)}; "
        "conv2d, see `SHAPES` in the script) on a fresh copy of the history database and "
        f"stops at its first measured batch (batches of {batch}); seconds run from the "
        "`tune()` call (store, space, searcher start, workers, builds, timing). Where the "
        f"local measurer's build and run workers come from: {'; '.join(WHAT[x] for x in settings)}. "
        f"{rounds} rounds; in each, every shape and searcher with every setting, the order "
        "of the settings rotated from round to round.", "",
        "| searcher | first batch (trials) | "
        + " | ".join(f"median s, {x}" for x in settings) + " | "
        + " | ".join(f"{a} / {b} [interval]" for a, b in pairs) + " | pairs |",
        "|---|---|" + "---|" * (len(settings) + len(pairs)) + "---|"]
    for searcher in searchers:
        cols = {x: column(searcher, x) for x in settings}
        trials = sorted({s.trials for s in samples if s.searcher == searcher})
        lines.append(f"| {searcher} | {', '.join(map(str, trials))} | "
                     + " | ".join(f"{statistics.median(cols[x]):.2f}" for x in settings) + " | "
                     + " | ".join(over(cols[a], cols[b]) for a, b in pairs)
                     + f" | {len(runs)} |")
    if "xgb" in searchers:
        lines += ["", "xgb's seconds over each searcher's, same round, shape and setting "
                  "(median of pairs [interval]): the speed-up to a mark that both reach "
                  "with their first batch.", "",
                  "| searcher | " + " | ".join(settings) + " |",
                  "|---|" + "---|" * len(settings)]
        for searcher in (s for s in searchers if s != "xgb"):
            cells = [over(column("xgb", setting), column(searcher, setting), level=False)
                     for setting in settings]
            lines.append(f"| {searcher} | {' | '.join(cells)} |")
    lines += ["", "All runs (seconds):", "",
              "| round | shape | searcher | " + " | ".join(settings) + " |",
              "|---|---|---|" + "---|" * len(settings)]
    for r, shape in runs:
        for searcher in searchers:
            cells = " | ".join(f"{seconds[(r, shape, searcher, setting)]:.2f}"
                               for setting in settings)
            lines.append(f"| {r + 1} | {shape} | {searcher} | {cells} |")
    return "\n".join(lines) + "\n"


def smoke_history(scratch: Path) -> Path:
    """A small real history: random search on one small shape (the smoke run's gga seeds)."""
    db = scratch / "smoke-history.db"
    tune(Task.create("conv2d", {**SMOKE_HISTORY, "dilation": 1}, name="smoke_hist"),
         db=str(db), searcher="random", trials=8, batch_size=BATCH, seed=0)
    return db


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, help="history database for gga (copied for each run)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--searchers", default="xgb,gga,ga")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: its own small history, one small shape, one round, xgb and gga")
    ap.add_argument("--settings", default=",".join(SETTINGS),
                    help=f"which of {', '.join(ALL_SETTINGS)} to time, each over the next "
                         f"(default {','.join(SETTINGS)})")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="NAME=SEARCHER[:KEY=VALUE,...]",
                    help="also time a searcher with options under its own name, e.g. "
                         "gga-lead1=gga:lead=1 (repeatable)")
    ap.add_argument("--batch-size", type=int, default=BATCH,
                    help=f"configs measured per batch, every searcher (default {BATCH}; "
                         "AutoTVM's tuners batch as many as the CPU has cores)")
    ap.add_argument("--out", type=Path, default=Path("docs/results/first-result.md"))
    a = ap.parse_args(argv)
    if a.batch_size < 1:
        ap.error(f"--batch-size must be >= 1, got {a.batch_size}")
    settings = tuple(x.strip() for x in a.settings.split(",") if x.strip())
    if len(settings) < 2 or len(set(settings)) < len(settings) or \
            not set(settings) <= set(ALL_SETTINGS):
        ap.error(f"--settings takes two or more of {', '.join(ALL_SETTINGS)}, each once; "
                 f"got {a.settings!r}")
    command = "python scripts/first_result.py " + " ".join(argv if argv is not None
                                                            else sys.argv[1:])
    searchers = [s.strip() for s in a.searchers.split(",") if s.strip()]
    known = load_plugins().registry("searcher").names()
    variants: dict[str, tuple[str, dict[str, Any]]] = {}
    for item in a.variant:
        try:
            name, searcher, options = split_variant(item)
        except ValueError:
            name = searcher = ""
        if searcher not in known or name in known or name in variants:
            ap.error(f"--variant takes NAME=SEARCHER[:KEY=VALUE,...] with a new NAME and a "
                     f"known SEARCHER ({', '.join(sorted(known))}), got {item!r}")
        variants[name] = (searcher, options)
    searchers += list(variants)
    unknown = [s for s in searchers if s not in known and s not in variants]
    if unknown:
        ap.error(f"unknown searcher(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    with tempfile.TemporaryDirectory(prefix="first-result-smoke-") as d:
        if a.smoke:
            history = smoke_history(Path(d))
            samples = measure({"smoke": SMOKE_SHAPE}, ["xgb", "gga"], 1, history, settings)
            text = report(samples, ["xgb", "gga"], command,
                          note="Smoke run (CI): one small shape, one round; no figure here "
                               "is a result.", settings=settings)
        else:
            if a.db is None or not a.db.exists():
                ap.error("--db must name an existing history database (or give --smoke)")
            samples = measure(SHAPES, searchers, a.rounds, a.db, settings, variants,
                              batch=a.batch_size)
            text = report(samples, searchers, command, settings=settings, batch=a.batch_size)
    write_report(a.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
