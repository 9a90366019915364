"""Seconds gga's ``screen`` spends on its rank model, by ``screen_rows`` (the history rows
it learns from) and ``screen_rows_from``, side by side.

Every task of each history database is left out in turn; its space is built (as the
loop builds it), and for each ``--rows`` value (0: every history record of the operator,
as ``screen`` without ``screen_rows``; N: the N records with the best filtering metric)
and each ``--spread`` value (N: N records spread over the tasks, ``screen_rows_from=spread``)
two costs are timed, in an order that rotates from round to round:

- ``setup``: what the first generation spends on the screen after the lead batch: ranking
  the records it learns from (``rank_history`` for 0, ``history.ranking.RankedHistory``
  read to N by metric, ``rank_history`` then ``spread_rows`` under ``--spread``), encoding
  them (``ChildScreen``) and the first fit;
- ``refit``: one later fit, with this task's first ``--own`` results as its own (every
  generation after the first fits again before it screens its children).

    python scripts/gga_screen_cost.py --db /work/gga/base500.db --rows 0 --rows 2000 \\
        --rows 1000 --spread 2000 --spread 1000 --rounds 3 \\
        --out docs/results/gga-screen-cost-znver5.md
    python scripts/gga_screen_cost.py --smoke --out /tmp/screen-cost.md   # CI
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from history_ranking import open_history, smoke_history  # noqa: E402
from machine import machine_header, write_report  # noqa: E402
from paired import paired_ratio  # noqa: E402

from history.ranking import RankedHistory  # noqa: E402
from history.similarity import ScoredRecord, rank_history  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.result import MeasureResult  # noqa: E402
from orchestrator.space import Space  # noqa: E402
from orchestrator.target import TargetInfo, detect_host  # noqa: E402
from plugins.gga.screen import ChildScreen, spread_rows  # noqa: E402

Setting = tuple[int, bool]  # (screen_rows, spread: screen_rows_from=spread)


@dataclass(frozen=True)
class Sample:
    db: str
    task: str
    round: int
    rows: int  # the option (0: every record)
    setup: float  # seconds: rank, encode, first fit
    refit: float  # seconds: one fit with this task's own results
    trained: int  # history rows the model learned from
    scored: int  # records the ranking scored
    spread: bool = False  # screen_rows_from=spread


def screen_cost(reader: object, space: Space, target: TargetInfo, rows: int,
                own: list[MeasureResult], seed: int = 0,
                spread: bool = False) -> tuple[float, float, int, int]:
    """(setup s, refit s, rows trained on, records scored) of one ``screen_rows`` value
    (under ``spread``: the rows by ``screen_rows_from=spread``)."""
    gc.collect()
    t0 = time.perf_counter()
    if rows and spread:
        whole = rank_history(reader, space, target)  # type: ignore[arg-type]
        records, scored = spread_rows(whole, rows), len(whole)
    elif rows:
        ranking = RankedHistory(reader, space, target)  # type: ignore[arg-type]
        records: list[ScoredRecord] = list(itertools.islice(ranking, rows))
        scored = ranking.scored
    else:
        records = rank_history(reader, space, target)  # type: ignore[arg-type]
        scored = len(records)
    screen = ChildScreen(space, records, seed)
    screen.fit([])
    setup = time.perf_counter() - t0
    gc.collect()
    t1 = time.perf_counter()
    screen.fit(own)
    return setup, time.perf_counter() - t1, len(records), scored


def measure(dbs: list[Path], rows: list[Setting], rounds: int, n_own: int) -> tuple[
        list[Sample], dict[str, int]]:
    plugins = load_plugins()
    target = detect_host()
    samples: list[Sample] = []
    sizes: dict[str, int] = {}
    for db in dbs:
        with open_history(db, plugins, target) as h:
            reader, tasks, spaces = h.reader, h.tasks, h.spaces
            sizes[db.name] = h.size
            owns = {t.key: reader.results(t, target, ok_only=True)[:n_own] for t in tasks}
            for n, sp in rows:  # untimed: imports, caches and the booster's first call
                screen_cost(reader, spaces[tasks[0].key], target, n, owns[tasks[0].key],
                            spread=sp)
            for r in range(rounds):
                order = rows[r % len(rows):] + rows[:r % len(rows)]
                for task in tasks:
                    label = task.name or task.key_hash
                    for n, sp in order:
                        setup, refit, trained, scored = screen_cost(
                            reader, spaces[task.key], target, n, owns[task.key], spread=sp)
                        samples.append(Sample(db.name, label, r, n, setup, refit, trained,
                                              scored, sp))
                print(f"{db.name} round {r + 1}/{rounds} done", flush=True)
    return samples, sizes


def _rows_name(rows: int, spread: bool = False) -> str:
    if rows == 0:
        return "every record"
    return f"screen_rows={rows}" + (",screen_rows_from=spread" if spread else "")


def report(samples: list[Sample], sizes: dict[str, int], settings: list[Setting],
           rounds: int, n_own: int, command: str, note: str = "") -> str:
    by = {(s.db, s.task, s.round, s.rows, s.spread): s for s in samples}
    lines = ["# Seconds gga's `screen` spends on its rank model, by `screen_rows`", "",
             machine_header(), "", f"Command: `{command}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        "Each task of each history database is left out in turn. `setup`: ranking the "
        "history records the screen learns from (every record: `rank_history`; "
        "`screen_rows=N`: the N with the best filtering metric, read lazily by "
        "`RankedHistory`; `screen_rows_from=spread`: every record ranked, then N spread "
        "over the tasks by `spread_rows`), encoding them and the first fit, as gga's first "
        "generation does "
        f"after the lead batch. `refit`: one later fit with the task's first {n_own} "
        "results as its own, as every later generation does. "
        f"Rounds: {rounds}, after an untimed call of each value; the values' order rotates "
        "from round to round. Ratios: every record's seconds over the row's, task and round "
        "paired.",
        "",
        "| history | measurements | screen learns from | rows (median) | records scored "
        "(median) | setup s (median) | every record / this, setup | refit s (median) | "
        "every record / this, refit |",
        "|---|---|---|---|---|---|---|---|---|"]
    for db, size in sizes.items():
        keys = sorted({(s.task, s.round) for s in samples if s.db == db})
        for n, sp in settings:
            mine = [by[(db, t, r, n, sp)] for t, r in keys]
            cells = []
            for what in ("setup", "refit"):
                here = [getattr(s, what) for s in mine]
                cells.append(f"{statistics.median(here):.3f}")
                ratio = (paired_ratio(here, [getattr(by[(db, t, r, 0, False)], what)
                                             for t, r in keys])
                         if (0, False) in settings and n else None)
                cells.append(f"{ratio.text()} at {ratio.level:.1%}" if ratio else "-")
            lines.append(
                f"| {db} | {size} | {_rows_name(n, sp)} | "
                f"{statistics.median(s.trained for s in mine):.0f} | "
                f"{statistics.median(s.scored for s in mine):.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, action="append", default=[],
                    help="a history database (repeat for several)")
    ap.add_argument("--rows", type=int, action="append", default=[],
                    help="a screen_rows value, 0 for every record (repeat; default 0 and 1000)")
    ap.add_argument("--spread", type=int, action="append", default=[],
                    help="a screen_rows value under screen_rows_from=spread (repeat)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--own", type=int, default=32,
                    help="this task's results the refit learns from (two generations: 32)")
    ap.add_argument("--smoke", action="store_true", help="CI: a small real history, one round")
    ap.add_argument("--out", type=Path, default=Path("docs/results/gga-screen-cost.md"))
    a = ap.parse_args(argv)
    plain = list(dict.fromkeys(a.rows or [0, 1000]))
    if a.rounds < 1 or a.own < 0 or any(n < 0 for n in plain) or any(
            n < 1 for n in a.spread):
        ap.error("--rounds must be >= 1, --own and --rows >= 0, and --spread >= 1")
    rows: list[Setting] = [(n, False) for n in plain]
    rows += [(n, True) for n in dict.fromkeys(a.spread)]
    command = "python scripts/gga_screen_cost.py " + " ".join(argv if argv is not None
                                                              else sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="gga-screen-cost-") as d:
        if a.smoke:
            samples, sizes = measure([smoke_history(Path(d))], rows, 1, a.own)
            text = report(samples, sizes, rows, 1, a.own, command,
                          note="Smoke run (CI): a small history, one round; no figure here "
                               "is a result.")
        else:
            missing = [str(p) for p in a.db if not p.exists()]
            if not a.db or missing:
                ap.error("--db must name existing history databases (or give --smoke); "
                         f"missing: {', '.join(missing) or 'none given'}")
            samples, sizes = measure(a.db, rows, a.rounds, a.own)
            text = report(samples, sizes, rows, a.rounds, a.own, command)
    write_report(a.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
