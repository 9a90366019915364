"""What a space generator's default check costs in speed: per task, the fastest configs
that history databases made on a wider space (``--space-opt check=relaxed``) hold, those
the default check rejects against those it accepts, timed again side by side.

The ``cpu`` generator's default check (``check=full``) rejects register tiles with poor
vector use or reuse and too little parallelism, which keeps its space small and its
random draws good. If it rejects the configs that run fastest, everyone tuning on the
default space tunes to a slower kernel. This reads every successful record of each task in
``--db`` (each config at its fastest timing, over all the databases), sorts them by the
default check, and times the ``--top`` fastest of each side again in ``--rounds`` rounds,
all in one measurer call per round (in reverse order in odd rounds). Per task: the
fastest accepted config's median GFLOPS over the fastest config's, the share of speed
the default space keeps; over tasks, its geometric mean with a bootstrap interval over
tasks. The accepted side is only what the runs in ``--db`` measured: a search on the
default space may find a faster accepted config than runs on the wider space did, so give
the databases of such searches too, or the loss may be smaller than shown.

    python scripts/check_cost.py --space-opt check=relaxed --db /work/gga/relaxed500.db \\
        $(for f in /work/gga/rx-s0[a-e]/*/turns/*.db; do echo --db $f; done) \\
        --db /work/gga/full300.db --rounds 5 --out docs/results/check-cost-znver4
    python scripts/check_cost.py --smoke --out /tmp/check-cost   # CI: a small real run

Timings are kept in ``OUT/data/<task>.json``; a second run with the same configs and
rounds reads them and only writes the report again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import re
import shlex
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)
from speedup_mean import geomean_interval  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.loop import TuneOptions, build_space  # noqa: E402
from orchestrator.runoff import measure_interleaved  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.task import Task  # noqa: E402

TOP = 2
ROUNDS = 5
SMOKE_SHAPE = {"N": 1, "C": 16, "H": 14, "W": 14, "K": 32, "R": 3, "S": 3, "stride": 1,
               "pad": 1, "dilation": 1}


@dataclass(frozen=True)
class Pick:
    """A config read from the databases: its fastest recorded latency and the default
    check's reason to reject it (None: accepted)."""

    config: Config
    latency: float
    rejected: str | None


@dataclass(frozen=True)
class TaskCost:
    """One task: every config read, and the timings again of the top of each side."""

    task: Task
    notes: tuple[str, ...]  # the default space's notes (a fallback shows here)
    picks: tuple[Pick, ...]  # fastest first
    timed: dict[str, list[float | None]]  # config key -> latency per round
    measured_at: str = ""

    def _gflops(self, latency: float) -> float:
        return self.task.flops / latency / 1e9

    @property
    def rejected(self) -> int:
        return sum(p.rejected is not None for p in self.picks)

    def median(self, key: str) -> float:
        """The median latency over the rounds (+inf if any round failed)."""
        got = self.timed.get(key, [])
        return math.inf if not got or None in got else statistics.median(got)  # type: ignore

    def fastest(self, accepted: bool) -> Pick | None:
        """The side's timed config with the lowest median (None if the side is empty)."""
        side = [p for p in self.picks if (p.rejected is None) == accepted
                and p.config.key in self.timed]
        return min(side, key=lambda p: self.median(p.config.key), default=None)

    @property
    def kept(self) -> float | None:
        """The fastest accepted config's speed over the fastest timed config's (1.0 when
        nothing is rejected; None when nothing is accepted)."""
        if not self.rejected:
            return 1.0
        acc, rej = self.fastest(True), self.fastest(False)
        if acc is None or rej is None:
            return None
        a, r = self.median(acc.config.key), self.median(rej.config.key)
        return min(r, a) / a if math.isfinite(a) else 0.0

    def rounds_kept(self) -> list[float]:
        """``kept`` round by round (paired: both timed in the same measurer call)."""
        acc, rej = self.fastest(True), self.fastest(False)
        if acc is None or rej is None:
            return []
        pairs = zip(self.timed[acc.config.key], self.timed[rej.config.key])
        return [min(a, r) / a for a, r in pairs if a is not None and r is not None]

    def gflops(self, pick: Pick | None) -> str:
        if pick is None:
            return "-"
        m = self.median(pick.config.key)
        return f"{self._gflops(m):.1f}" if math.isfinite(m) else "failed"


def read_picks(task: Task, target: object, dbs: Sequence[Path], default: Space) -> list[Pick]:
    """Every config of ``task`` with a successful record in ``dbs`` at its fastest timing
    over them, fastest first, with the default check's verdict."""
    best: dict[str, tuple[Config, float]] = {}
    for db in dbs:
        store = HistoryStore.open(db, create=False)
        try:
            task_id, target_id = store.find_task(task), store.find_target(target)  # type: ignore
            if task_id is None or target_id is None:
                continue
            for r in store.fastest(task_id, target_id):
                if r.config.key not in best or r.latency < best[r.config.key][1]:
                    best[r.config.key] = (r.config, r.latency)
        finally:
            store.close()
    ranked = sorted(best.values(), key=lambda cl: (cl[1], cl[0].key))
    return [Pick(c, lat, default.validate(c)) for c, lat in ranked]


def chosen(picks: Sequence[Pick], top: int) -> list[Config]:
    """The ``top`` fastest of each side, if both sides hold a config (else none: there is
    nothing to compare)."""
    acc = [p.config for p in picks if p.rejected is None][:top]
    rej = [p.config for p in picks if p.rejected is not None][:top]
    return [*rej, *acc] if acc and rej else []


def time_task(exp: rg.Experiment, task: Task, dbs: Sequence[Path], top: int, rounds: int,
              measurer: object) -> TaskCost | None:
    """Read, sort and time ``task``'s configs (or read the kept timings); None when no
    database holds a successful record of it."""
    _, default = build_space(exp.plugins, task, exp.target,
                             TuneOptions(space_generator=exp.space_generator))
    _, wide = build_space(exp.plugins, task, exp.target, exp.space_tune_options)
    picks = read_picks(task, exp.target, dbs, default)
    if not picks:
        exp.log(f"{task.name}: no successful record in the databases; skipped")
        return None
    configs = chosen(picks, top)
    path = exp.out / "data" / f"{task.name or task.key_hash}.json"
    keys = sorted(c.key for c in configs)
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        kept = {}
    if kept.get("configs") == keys and kept.get("rounds") == rounds:
        timed, when = kept["latencies"], kept["measured_at"]
    else:
        timed, when = {}, ""
        if configs:
            exp.log(f"{task.name}: {len(configs)} configs timed again, {rounds} rounds")
            got = measure_interleaved(measurer, wide, exp.target, configs, rounds)
            timed = {k: [r.latency if r.ok else None for r in rs] for k, rs in got.items()}
            when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"task": task.to_dict(), "configs": keys, "rounds": rounds,
                                    "measured_at": when, "latencies": timed}, indent=1))
    return TaskCost(task, default.notes, tuple(picks), timed, when)


def _names(dbs: Sequence[Path], shown: int = 3) -> str:
    """The databases by name, the first ``shown`` of a long list (the command has all)."""
    names = ", ".join(f"`{db}`" for db in dbs[:shown])
    more = len(dbs) - shown
    return names if more <= 0 else f"{names} and {more} more (the command names them)"


def _reason(text: str | None) -> str:
    return "accepted" if text is None else text.replace("|", "/")


def task_row(c: TaskCost) -> str:
    first = c.picks[0]
    acc_rank = next((i + 1 for i, p in enumerate(c.picks) if p.rejected is None), None)
    acc, rej = c.fastest(True), c.fastest(False)
    per_round = c.rounds_kept()
    spread = f" [{min(per_round):.3f}, {max(per_round):.3f}]" if per_round else ""
    kept = "-" if c.kept is None else f"{c.kept:.3f}{spread}"
    fell_back = "yes" if any("check" in n for n in c.notes[1:]) else "no"
    return (f"| {c.task.name} | {len(c.picks)} | {c.rejected} | "
            f"{c._gflops(first.latency):.1f} | {_reason(first.rejected)} | "
            f"{acc_rank if acc_rank else '-'} | {c.gflops(rej)} | {c.gflops(acc)} | {kept} | "
            f"{_reason(rej.rejected) if rej else '-'} | {fell_back} |")


def summary(costs: Sequence[TaskCost]) -> list[str]:
    kept = [c.kept for c in costs if c.kept is not None and c.kept > 0]
    if not kept:
        return ["- No task has both rejected and accepted configs timed: nothing to compare."]
    mean, low, high = geomean_interval(kept)
    lines = [f"- The default space keeps {mean:.3f} [{low:.3f}, {high:.3f}] of the speed "
             f"(geometric mean over {len(kept)} tasks, 95% bootstrap interval over tasks).",
             f"- Tasks where a rejected config is at least 5% faster than every accepted one "
             f"timed: {sum(k < 1 / 1.05 for k in kept)} of {len(kept)}; where the fastest "
             f"timed config is accepted: {sum(k == 1.0 for k in kept)}."]
    reasons = Counter(re.sub(r"\d+", "N", rej.rejected or "") for c in costs
                      if c.kept is not None and c.kept < 1.0
                      and (rej := c.fastest(False)) is not None)
    if reasons:
        lines.append("- What rejects the faster config (numbers as N), tasks: " + "; ".join(
            f"{r} ({n})" for r, n in reasons.most_common()) + ".")
    return lines


def report(exp: rg.Experiment, costs: Sequence[TaskCost], dbs: Sequence[Path], top: int,
           rounds: int, header: str, command: str, smoke: bool = False) -> Path:
    when = sorted(c.measured_at for c in costs if c.measured_at)
    wide = exp.space_option_text or "its defaults"
    lines = ["# What the default check costs: the fastest rejected configs against the "
             "fastest accepted ones", "", header, "", f"Command: `{command}`", ""]
    if smoke:
        lines += ["Smoke run (CI): one small shape, its records from a short random run on "
                  "the wider space; the figures say nothing of any real space.", ""]
    lines += [
        f"Space generator `{exp.space_generator}`; the records are read from "
        f"{_names(dbs)} (each config at its fastest timing over them), sorted by the "
        f"generator's default check, and the {top} fastest of each side timed again "
        f"{rounds} rounds on the space with {wide}, in one measurer call per round. Kept: "
        "the fastest accepted config's median over the fastest config's, with the range of "
        "the same figure round by round. The accepted side is what the runs in those "
        "databases measured; a search on the default space may find a faster accepted "
        "config than runs on the wider one did, so unless the databases hold such searches "
        "the loss may be smaller than shown. Fallback: the default check excluded "
        "everything on the shape and the space fell back to a looser one.", ""]
    if when:
        lines += [f"Timed again between {when[0]} and {when[-1]} UTC.", ""]
    lines += ["| task | configs read | rejected by the default check | fastest record GFLOPS | "
              "its default check | rank of the fastest accepted record | fastest rejected, "
              "timed again (GFLOPS) | fastest accepted, timed again (GFLOPS) | kept | why the "
              "fastest rejected one is rejected | fallback |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [task_row(c) for c in costs]
    lines += ["", *summary(costs), ""]
    path = exp.out / "check-cost.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def _smoke_history(exp: rg.Experiment, task: Task) -> None:
    from orchestrator.loop import tune

    tune(task, target=exp.target, db=str(exp.db), plugins=exp.plugins, searcher="random",
         trials=12, batch_size=4, seed=0, options=exp.space_tune_options)


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", action="append", default=[],
                    help="a history database with runs on the wider space; repeat it")
    ap.add_argument("--layers", help="comma-separated ResNet-18 layers [all of resnet18_conv]")
    ap.add_argument("--space", default="cpu", help="space generator [%(default)s]")
    ap.add_argument("--space-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="the wider space the records are timed on [check=relaxed]")
    ap.add_argument("--top", type=int, default=TOP,
                    help="configs timed again on each side [%(default)s]")
    ap.add_argument("--rounds", type=int, default=ROUNDS, help="rounds [%(default)s]")
    ap.add_argument("--out", default="docs/results/check-cost", help="report directory")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: one small shape, its records made on the spot")
    args = ap.parse_args(argv)
    if args.smoke:
        args.top, args.rounds = min(args.top, 1), min(args.rounds, 2)
    for name in ("top", "rounds"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    if not args.smoke and not args.db:
        ap.error("give --db, a history database with runs on the wider space (or --smoke)")
    missing = [db for db in args.db if not Path(db).exists()]
    if missing:
        ap.error(f"--db {missing[0]}: no such file; name an existing history database")
    args.space_opt = args.space_opt or ["check=relaxed"]
    plugins = load_plugins()
    target = rg.checked_target(ap, argparse.Namespace(
        space_opt=args.space_opt, measurer="local", space=args.space, target="host"), plugins)
    layers, _ = rg.chosen_layers(ap, argparse.Namespace(
        smoke=False, layers=args.layers, history_layers=None, shapes=None))
    with tempfile.TemporaryDirectory(prefix="check-cost-") as scratch:
        tasks = layers if not args.smoke else (Task.create("conv2d", SMOKE_SHAPE, name="smoke"),)
        dbs = [Path(scratch) / "smoke.db"] if args.smoke else [Path(db) for db in args.db]
        exp = rg.Experiment(layers=tasks, history_layers=(), trials=0, budgets={}, db=dbs[0],
                            work=dbs[0].parent, out=Path(args.out), target=target,
                            plugins=plugins, space_generator=args.space,
                            space_options=rg.parse_options(args.space_opt))
        if args.smoke:
            _smoke_history(exp, tasks[0])
        measurer = exp.plugins.create("measurer", exp.measurer, **exp.measurer_options)
        try:
            costs = [c for task in tasks
                     if (c := time_task(exp, task, dbs, args.top, args.rounds, measurer))]
        finally:
            measurer.close()
        command = "python scripts/check_cost.py " + " ".join(
            shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
        path = report(exp, costs, dbs, args.top, args.rounds, machine_header(),
                      command.strip(), smoke=args.smoke)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
