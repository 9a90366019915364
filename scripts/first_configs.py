"""A run's first configs against the mark: what each trial measured, in the order it was
measured, and which knobs it set differently from the run's first config.

Reads finished turns of ``gga_turns.py``: the newest run of ``--searcher`` (gga unless
told) on one layer (``WORK/<layer>/turns/<searcher>.db`` and its clock file), and xgb's
best from the same turns (its confirmed best with ``--confirmed``, as gga_turns reports
runs made with ``--confirm``). Prints, per trial, the run's own seconds, the GFLOPS of the
config's first timing against the mark (95% of xgb's best), the run's best so far, and the
knobs changed from trial 1: a gga run's first config is its best history seed, and each
probe of its first generation is that seed with one knob changed. Then the trial at which
the run's best first reached the mark, as the turns report counts it. This is how the
"read by hand" diagnoses of gga.md were made; the script makes them reproducible.

    python scripts/first_configs.py /work/gga/unseen2-s1 goog_3a_5x5 --confirmed
    python scripts/first_configs.py /work/gga/unseen2 alex_c1 --searcher gga --searcher gga-agreed \\
        --first 32 --confirmed --out docs/results/some-dir/first-configs.md
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)
from gga_turns import own_seconds  # noqa: E402
from turns import read_clock  # noqa: E402

from history.models import RunRow  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.result import MeasureStatus  # noqa: E402
from orchestrator.space import Config  # noqa: E402
from orchestrator.task import Task  # noqa: E402


EVERY_TRIAL = 10**9  # read a run to its end


class FirstConfigsError(OrchestratorError):
    """A turns directory, layer or searcher this script cannot read."""


@dataclass(frozen=True)
class Trial:
    number: int  # 1-based, in the order the run measured its configs
    seconds: float  # the run's own clock at the end of the turn that measured it
    gflops: float | None  # of the config's first timing; None when it failed
    status: str
    best: float  # the run's best so far (confirmed when read so)
    changed: dict[str, object]  # knobs set differently from trial 1, with their values

    def timed_at(self, level: float) -> bool:
        """Whether the first timing is at ``level`` GFLOPS (a failed trial never is)."""
        return self.gflops is not None and self.gflops >= level


@dataclass(frozen=True)
class RunTrials:
    layer: str
    searcher: str  # the run's file name in the turns directory, e.g. gga-agreed
    run_id: int
    seed: int
    target: str
    reference: float  # xgb's best in the same turns
    trials: tuple[Trial, ...]
    reached: tuple[int | None, float | None]  # (trial, own seconds) at the mark
    period: tuple[str, str] | None
    first_config: str = ""  # trial 1's config, canonical JSON

    def first_timed_at(self, mark: float = rg.MARK) -> int | None:
        """The number of the first trial whose first timing is at ``mark`` of the
        reference, or None."""
        level = mark * self.reference
        return next((t.number for t in self.trials if t.timed_at(level)), None)


MISSING_RUN = ("give a gga_turns --work directory, a layer it ran and a searcher that took "
               "turns there")


def open_turns_db(db: Path, missing: str = MISSING_RUN) -> HistoryStore:
    """The database of one run that took turns; a one-line error saying ``missing`` (what
    to give instead) where it does not exist."""
    if not db.exists():
        raise FirstConfigsError(f"{db} does not exist: {missing}")
    return HistoryStore.open(db, create=False)


def _task(store: HistoryStore, layer: str, db: Path) -> tuple[int, Task]:
    """The id and task of ``layer`` in ``db``."""
    named = [(tid, t) for tid, t in store.tasks() if t.name == layer]
    if not named:
        raise FirstConfigsError(f"{db} holds no layer named {layer!r}")
    return named[0]


def changed_knobs(first: Config, config: Config) -> dict[str, object]:
    """The knobs ``config`` sets differently from ``first``, with ``config``'s values."""
    base = first.to_dict()
    return {k: v for k, v in config.to_dict().items() if base.get(k) != v}


def read_run(work: Path, layer: str, searcher: str, confirmed: bool,
             mark: float = rg.MARK) -> RunTrials:
    """Every trial of the newest run in ``WORK/<layer>/turns/<searcher>.db``."""
    turns = work / layer / "turns"
    db = turns / f"{searcher}.db"
    store = open_turns_db(db)
    try:
        tid, task = _task(store, layer, db)
        runs = store.runs(where=[RunRow.task_id == tid], limit=1)
        if not runs:
            raise FirstConfigsError(f"{db} holds no run of {layer}")
        run = runs[0]
    finally:
        store.close()
    # the newest run of its searcher: ``run`` itself, the newest of the layer in ``db``
    curve = rg.curve(db, task, run.searcher, run.max_trials, confirmed=confirmed)
    xgb = rg.curve(turns / f"{rg.REFERENCE}.db", task, rg.XGB.searcher, EVERY_TRIAL,
                   confirmed=confirmed)
    if xgb.final <= 0:
        raise FirstConfigsError(f"{turns / 'xgb.db'} holds no successful xgb trial of {layer}: "
                                f"the mark is 95% of xgb's best in the same turns")
    seconds = own_seconds(read_clock(turns / f"{searcher}.clock.jsonl"), len(curve.best))
    out = tuple(Trial(i + 1, seconds[i],
                      r.gflops(task.flops) if r.status is MeasureStatus.OK else None,
                      r.status.value, curve.best[i],
                      changed_knobs(curve.firsts[0].config, r.config))
                for i, r in enumerate(curve.firsts))
    trial, _ = curve.reach(mark * xgb.final)  # its seconds are wall time, not the own clock
    return RunTrials(layer, searcher, run.id, run.seed, run.target_key, xgb.final, out,
                     (trial, None if trial is None else seconds[trial - 1]), curve.period,
                     curve.firsts[0].config.key if curve.firsts else "")


def _secs(seconds: float) -> str:
    """Own seconds, or "-" where the run has no clock file (a run not made in turns)."""
    return "-" if math.isnan(seconds) else f"{seconds:.1f}"


def _knobs(changed: dict[str, object]) -> str:
    return ", ".join(f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in changed.items())


def _row(t: Trial, level: float) -> str:
    speed = "failed: " + t.status if t.gflops is None else f"{t.gflops:.1f}"
    at = " **at the mark**" if t.timed_at(level) else ""
    knobs = "(the first config)" if t.number == 1 else (_knobs(t.changed) or "(none)")
    # A confirmed best is known only once its batch is confirmed: none yet is "-".
    best = f"{t.best:.1f}" if t.best > 0 else "-"
    return (f"| {t.number} | {_secs(t.seconds)} | {speed}{at} | {best} | {len(t.changed)} "
            f"| {knobs} |")


def section(run: RunTrials, first: int, mark: float = rg.MARK) -> list[str]:
    """One run's first ``first`` trials as a Markdown table, with the trial that reached
    the mark after them when it came later."""
    level = mark * run.reference
    period = f", measured {run.period[0]} to {run.period[1]} UTC" if run.period else ""
    trial, secs = run.reached
    reached = (f"its best reached the mark at trial {trial}, {_secs(secs)} own seconds"
               if trial is not None else "its best never reached the mark")
    at_mark = run.first_timed_at(mark)
    lines = [f"## {run.layer}: {run.searcher} (run {run.run_id}, seed {run.seed}{period})", "",
             f"xgb's best in the same turns: {run.reference:.1f} GFLOPS; the mark "
             f"({mark:.0%}): {level:.1f}. Of {len(run.trials)} trials, {reached}; the first "
             f"config timed at the mark the first time was trial "
             f"{at_mark if at_mark is not None else 'none'}.", "",
             *([f"Trial 1's config: `{run.first_config}`", ""] if run.first_config else []),
             "| trial | own s | GFLOPS (first timing) | best so far | knobs changed | changed from trial 1 |",
             "|---|---|---|---|---|---|"]
    shown = run.trials[:first]
    lines += [_row(t, level) for t in shown]
    later = [t for t in run.trials[first:] if t.number in (trial, at_mark)]
    if later:
        lines.append("| … | | | | | |")
        lines += [_row(t, level) for t in later]
    return lines + [""]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work", type=Path, help="a gga_turns.py --work directory")
    ap.add_argument("layer", help="a layer or shape name the turns ran, e.g. goog_3a_5x5")
    ap.add_argument("--searcher", action="append", default=[], metavar="NAME",
                    help="a run of the turns, by its database's name (gga, ga, xgb, or a "
                         "--variant's name); repeat for several; gga by default")
    ap.add_argument("--first", type=int, default=24, metavar="N",
                    help="how many trials to show (default 24)")
    ap.add_argument("--confirmed", action="store_true",
                    help="read bests by their re-timings, as for turns run with --confirm")
    ap.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    if args.first < 1:
        ap.error("--first must be at least 1")
    runs = [read_run(args.work, args.layer, s, args.confirmed) for s in args.searcher or ["gga"]]
    from machine import machine_header

    argv = sys.argv[1:] if argv is None else argv
    lines = [f"# First configs of {args.layer} against the mark", "", machine_header(), "",
             f"Command: `python scripts/first_configs.py {shlex.join(argv)}`", "",
             f"Read from the stored measurements of `{args.work}` (target `{runs[0].target}`); "
             f"bests {'confirmed by their re-timings' if args.confirmed else 'by first timings'}."
             " Own seconds are each run's clock in the turns. The header names the machine"
             " this was read on; the turns' report names the one they were measured on.", ""]
    for run in runs:
        lines += section(run, args.first)
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
