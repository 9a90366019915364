"""Seconds from ``tune()`` to a searcher's first measured batch, with the local measurer's
workers started when the task starts (``prestart``, the default) and without (started by
the first batch), side by side in rounds.

Issue 4's time targets are won or lost at the first batch: on most layers gga's first
configs (the best of history) already reach 95% of xgb's best, so its seconds to the mark
are its seconds to its first result, and a mark that xgb reaches within five times that
is out of reach. Each run tunes a shape no history holds, on a fresh copy of the history
database, and stops at its first batch (gga: its lead batch of the best history
candidates; xgb and ga: a batch of 8). Every round runs each shape and searcher with
both settings, the order of the two reversed every other round. Reported: median seconds,
and the median of the per-pair ratios (off over on, same round, shape and searcher) with
its distribution-free interval (``scripts/paired.py``).

    python scripts/first_result.py --db /work/gga/base.db --rounds 5
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

from machine import machine_header  # noqa: E402
from paired import paired_ratio  # noqa: E402

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
    prestart: bool
    seconds: float
    trials: int


def first_result(task: Task, searcher: str, prestart: bool, history: Path, seed: int,
                 scratch: Path) -> tuple[float, int]:
    """(seconds, trials) of ``searcher``'s first batch on ``task``, on a copy of ``history``."""
    db = scratch / "history.db"
    shutil.copyfile(history, db)
    plugins = load_plugins()
    watch = _Stopwatch()
    plugins.pm.register(watch, name="first-result-stopwatch")
    watch.t0 = time.perf_counter()
    try:
        tune(task, db=str(db), plugins=plugins, searcher=searcher, trials=BATCH,
             batch_size=BATCH, seed=seed, measurer_options={"prestart": prestart})
    except _FirstBatch:
        pass
    if watch.seconds is None:
        raise SystemExit(f"error: {searcher} on {task.label()} measured nothing")
    return watch.seconds, watch.trials


def measure(shapes: dict[str, dict[str, int]], searchers: list[str], rounds: int,
            history: Path) -> list[Sample]:
    samples = []
    with tempfile.TemporaryDirectory(prefix="first-result-") as d:
        scratch = Path(d)
        for r in range(rounds):
            for name, shape in shapes.items():
                task = Task.create("conv2d", {**shape, "dilation": 1}, name=name)
                for searcher in searchers:
                    order = (False, True) if r % 2 == 0 else (True, False)
                    for prestart in order:
                        seconds, trials = first_result(task, searcher, prestart, history,
                                                       seed=r, scratch=scratch)
                        samples.append(Sample(r, name, searcher, prestart, seconds, trials))
                        print(f"round {r + 1}/{rounds} {name} {searcher} prestart={prestart}: "
                              f"{seconds:.2f} s ({trials} trials)", flush=True)
    return samples


def report(samples: list[Sample], searchers: list[str], command: str, note: str = "") -> str:
    seconds = {(s.round, s.shape, s.searcher, s.prestart): s.seconds for s in samples}
    runs = sorted({(s.round, s.shape) for s in samples})

    def column(searcher: str, prestart: bool) -> list[float]:
        """``searcher``'s seconds with ``prestart``, one per (round, shape), in one order:
        two columns pair run by run."""
        return [seconds[(r, shape, searcher, prestart)] for r, shape in runs]

    shapes = sorted({s.shape for s in samples})
    rounds = len({s.round for s in samples})
    lines = ["# Seconds to the first result, workers started when the task starts or at the "
             "first batch", "", machine_header(), "", f"Command: `{command}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"Each run tunes one of {len(shapes)} shapes no history holds ({', '.join(shapes)}; "
        "conv2d, see `SHAPES` in the script) on a fresh copy of the history database and "
        "stops at its first measured batch; seconds run from the `tune()` call (store, space, "
        "searcher start, workers, builds, timing). `prestart` on: the local measurer starts "
        "its build and run workers when the task starts (`prepare`), so that their TVM "
        "import overlaps the searcher's start; off: the first batch starts them. "
        f"{rounds} rounds; in each, every shape and searcher with both settings, the order "
        "reversed every other round.", "",
        "| searcher | first batch (trials) | median s, prestart off | median s, prestart on | "
        "off / on, median of pairs [interval] | pairs |", "|---|---|---|---|---|---|"]
    for searcher in searchers:
        ratio = paired_ratio(column(searcher, True), column(searcher, False))
        trials = sorted({s.trials for s in samples if s.searcher == searcher})
        ratio_text = f"{ratio.text()} at {ratio.level:.1%}" if ratio else "-"
        lines.append(f"| {searcher} | {', '.join(map(str, trials))} | "
                     f"{statistics.median(column(searcher, False)):.2f} | "
                     f"{statistics.median(column(searcher, True)):.2f} | {ratio_text} | "
                     f"{ratio.rounds if ratio else 0} |")
    if "xgb" in searchers:
        lines += ["", "Each searcher's seconds over xgb's, same round, shape and setting "
                  "(median of pairs [interval]):", "",
                  "| searcher | prestart off | prestart on |", "|---|---|---|"]
        for searcher in (s for s in searchers if s != "xgb"):
            cells = []
            for prestart in (False, True):
                # Over xgb's: paired_ratio(reference, this) gives this / xgb.
                ratio = paired_ratio(column("xgb", prestart), column(searcher, prestart))
                cells.append(ratio.text() if ratio else "-")
            lines.append(f"| {searcher} | {cells[0]} | {cells[1]} |")
    lines += ["", "All runs (seconds):", "", "| round | shape | searcher | off | on |",
              "|---|---|---|---|---|"]
    for r, shape in runs:
        for searcher in searchers:
            lines.append(f"| {r + 1} | {shape} | {searcher} | "
                         f"{seconds[(r, shape, searcher, False)]:.2f} | "
                         f"{seconds[(r, shape, searcher, True)]:.2f} |")
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
    ap.add_argument("--out", type=Path, default=Path("docs/results/first-result.md"))
    a = ap.parse_args(argv)
    command = "python scripts/first_result.py " + " ".join(argv if argv is not None
                                                            else sys.argv[1:])
    searchers = [s.strip() for s in a.searchers.split(",") if s.strip()]
    known = load_plugins().registry("searcher").names()
    unknown = [s for s in searchers if s not in known]
    if unknown:
        ap.error(f"unknown searcher(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    with tempfile.TemporaryDirectory(prefix="first-result-smoke-") as d:
        if a.smoke:
            history = smoke_history(Path(d))
            samples = measure({"smoke": SMOKE_SHAPE}, ["xgb", "gga"], 1, history)
            text = report(samples, ["xgb", "gga"], command,
                          note="Smoke run (CI): one small shape, one round; no figure here "
                               "is a result.")
        else:
            if a.db is None or not a.db.exists():
                ap.error("--db must name an existing history database (or give --smoke)")
            samples = measure(SHAPES, searchers, a.rounds, a.db)
            text = report(samples, searchers, command)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
