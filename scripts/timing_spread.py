"""How far one config's timings spread: the same config timed several times in finished
turns of ``gga_turns.py``, read from their stored measurements. Measures nothing.

A searcher reaches the 95% mark when one of its configs is timed at or above 95% of xgb's
best, so a config whose timings span more than the 5% between the mark and the best can
land on either side of the mark by chance; this report says how many do. Per layer and
database (``deployed`` by default: the configs the runs reported, timed again round after
round with ``--deployed``; ``remeasure``: the final bests with ``--remeasure``; or a
searcher's own database, where a config has more than one timing only when ``--confirm``
timed it again), over the configs with at least ``--min-timings`` timings:

- "high": a config's fastest timing over the median of its timings (how far a lucky
  timing sits above the config's usual speed);
- "low": the median over the slowest timing;
- "first": the config's first timing over the median (in a searcher's database that is
  the timing that picked the config for confirming, so it leans high);
- "span > 5%": the share of configs whose fastest timing is more than 1/0.95 of their
  slowest.

The timings include whatever the machine did while they ran. Where a database's runs
timed their configs side by side in rounds (``deployed``, ``remeasure``), "round state
out" reads "high" and "span > 5%" again with each timing divided by its round's state
(``paired.round_states``), so that a spell every config of a round shared drops out
(``deployed_states.py`` tests whether the finals' ratios follow those states).

    python scripts/timing_spread.py /work/gga/unseen4-z3-c3b-s0 /work/gga/unseen4-z3-c3b-s1 \\
        --out docs/results/gga-znver3-unseen4-c3b-spread/timing-spread.md
"""

from __future__ import annotations

import argparse
import math
import shlex
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header, write_or_print  # noqa: E402
from paired import round_states  # noqa: E402

from history.models import RunRow  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402

MARK = 0.95  # the turns' mark, as a share of xgb's best


class TimingSpreadError(OrchestratorError):
    """A turns directory or database this script cannot read."""


@dataclass(frozen=True)
class ConfigTimings:
    """One config's successful timings in one database, oldest first, as speeds (1/s)."""

    key: str
    speeds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.speeds)

    @property
    def high(self) -> float:
        return max(self.speeds) / self.median

    @property
    def low(self) -> float:
        return self.median / min(self.speeds)

    @property
    def first(self) -> float:
        return self.speeds[0] / self.median

    @property
    def wide(self) -> bool:
        """Its timings span more than the gap between the mark and the best."""
        return max(self.speeds) * MARK > min(self.speeds)


@dataclass(frozen=True)
class Spread:
    work: Path
    layer: str
    db: str
    configs: tuple[ConfigTimings, ...]
    steady: tuple[ConfigTimings, ...] | None  # each timing over its round's state


def _kept(speeds: Sequence[float | None], key: str, min_timings: int) -> ConfigTimings | None:
    ok = tuple(x for x in speeds if x is not None)
    return ConfigTimings(key, ok) if len(ok) >= min_timings else None


def config_timings(db: Path, layer: str, min_timings: int
                   ) -> tuple[list[ConfigTimings], list[ConfigTimings] | None] | None:
    """Each config of ``layer`` in ``db`` with at least ``min_timings`` successful timings
    in one run; and, where every such run timed its configs side by side in rounds (a
    ``remeasure`` run, which records each config's timings in round order), the same with
    each timing divided by its round's state (``paired.round_states``), else None for those.
    None where ``db`` holds no task of that name (a searcher's database also holds the
    history it was seeded with)."""
    try:
        store = HistoryStore.open(db, create=False)
    except OrchestratorError as exc:
        raise TimingSpreadError(f"cannot read {db}: {exc}") from exc
    try:
        ids = [tid for tid, task in store.tasks() if task.name == layer]
        if not ids:
            return None
        plain: list[ConfigTimings] = []
        steady: list[ConfigTimings] | None = []
        for run in store.runs(where=[RunRow.task_id == ids[0]], limit=10**6):
            by_key: dict[str, list[float | None]] = {}
            for r in store.results(ids[0], None, run_id=run.id):
                by_key.setdefault(r.config.key, []).append(
                    1.0 / r.latency if r.ok and r.latency > 0 else None)
            plain += [c for k, v in by_key.items() if (c := _kept(v, k, min_timings))]
            if run.searcher != "remeasure" or steady is None:
                steady = None
                continue
            states = round_states(list(by_key.values()))
            steady += [c for k, v in by_key.items()
                       if (c := _kept([x / st if x is not None and st else None
                                       for x, st in zip(v, states)], k, min_timings))]
        return plain, steady
    finally:
        store.close()


def read_work(work: Path, db_names: Sequence[str], min_timings: int) -> list[Spread]:
    """Every layer of a ``gga_turns.py --work`` directory that holds one of ``db_names``."""
    if not work.is_dir():
        raise TimingSpreadError(f"{work} is not a directory: give a gga_turns.py --work "
                                f"directory")
    found = []
    for turns in sorted(work.glob("*/turns")):
        layer = turns.parent.name
        for name in db_names:
            db = turns / f"{name}.db"
            if db.exists() and (got := config_timings(db, layer, min_timings)) is not None:
                plain, steady = got
                found.append(Spread(work, layer, name, tuple(plain),
                                    None if steady is None else tuple(steady)))
    if not found:
        raise TimingSpreadError(f"{work} holds no {' or '.join(n + '.db' for n in db_names)} "
                                f"under <layer>/turns: give a finished gga_turns.py --work "
                                f"directory (--deployed writes deployed.db)")
    return found


def quantile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0 < q <= 1) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _cells(configs: Sequence[ConfigTimings], steady: Sequence[ConfigTimings] | None
           ) -> list[str]:
    if not configs:
        return ["0"] + ["-"] * 8
    highs = [c.high for c in configs]
    cells = [str(len(configs)), f"{statistics.median(len(c.speeds) for c in configs):g}",
             f"{statistics.median(highs):.3f}", f"{quantile(highs, 0.9):.3f}",
             f"{statistics.median(c.low for c in configs):.3f}",
             f"{statistics.median(c.first for c in configs):.3f}",
             f"{sum(c.wide for c in configs)} of {len(configs)}"]
    if not steady:
        return cells + ["-", "-"]
    return cells + [f"{statistics.median(c.high for c in steady):.3f}",
                    f"{sum(c.wide for c in steady)} of {len(steady)}"]


COLUMNS = ("configs | timings each | high: median | high: 90th percentile | low: median | "
           "first: median | span > 5% | round state out: high, median | round state out: "
           "span > 5% |")


def _pooled(spreads: Sequence[Spread]) -> list[str]:
    configs = [c for s in spreads for c in s.configs]
    steady = None if any(s.steady is None for s in spreads) else [
        c for s in spreads for c in s.steady or ()]
    return _cells(configs, steady)


def report(spreads: Sequence[Spread], command: str, min_timings: int) -> str:
    lines = ["# How far one config's timings spread", "", machine_header(), "",
             f"Command: `{command}`", "",
             "Read from the stored measurements of finished turns (it measures nothing); "
             "the header names the machine this was read on, the turns' reports the one "
             f"they were measured on. Configs with at least {min_timings} successful "
             "timings in one run. Ratios are of speeds: \"high\" is a config's fastest "
             "timing over its median, \"low\" its median over its slowest, \"first\" its "
             "first timing over its median; \"span > 5%\" counts the configs whose fastest "
             f"timing is more than 1/{MARK} of their slowest, so that one timing could put "
             "them on either side of the 95% mark. \"round state out\" reads the same "
             "after dividing each timing by its round's state, the median over the round's "
             "configs of their speed in the round over their median speed, so that what "
             "the machine did to every config of a round drops out; only where the "
             "database's runs timed their configs side by side in rounds (remeasure runs: "
             "`deployed`, `remeasure`). A span widens with the number of timings, so compare "
             "rows with as many timings each.", "", "| turns | layer | database | " + COLUMNS,
             "|" + "---|" * 12]
    for s in spreads:
        lines.append(f"| {s.work.name} | {s.layer} | {s.db} | "
                     + " | ".join(_cells(s.configs, s.steady)) + " |")
    lines += ["", "Pooled over every layer, per database:", "", "| database | " + COLUMNS,
              "|" + "---|" * 10]
    for name in dict.fromkeys(s.db for s in spreads):
        lines.append(f"| {name} | " + " | ".join(_pooled([s for s in spreads if s.db == name]))
                     + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("work", type=Path, nargs="+", help="gga_turns.py --work directories")
    ap.add_argument("--db", action="append", default=[], metavar="NAME",
                    help="a database of each layer's turns, by name: deployed (the default), "
                         "remeasure, or a searcher's (xgb, gga, ga); repeat for several")
    ap.add_argument("--min-timings", type=int, default=3, metavar="N",
                    help="read configs timed at least N times (default 3)")
    ap.add_argument("--out", type=Path, help="write the report here (printed otherwise)")
    args = ap.parse_args(argv)
    if args.min_timings < 2:
        ap.error("--min-timings must be at least 2: a spread needs two timings")
    spreads = [s for w in args.work for s in read_work(w, args.db or ["deployed"],
                                                       args.min_timings)]
    argv = sys.argv[1:] if argv is None else argv
    command = f"python scripts/timing_spread.py {shlex.join(argv)}"
    write_or_print(args.out, report(spreads, command, args.min_timings))
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
