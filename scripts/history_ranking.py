"""Seconds to gga's first history candidates: the whole history ranked, or ranked lazily.

Every task of each history database is left out in turn; its space is built (as the
loop builds it) and the first ``--k`` candidates (``candidate_configs``: history configs
adapted to it, in filtering-metric order) are found two ways, side by side in each
round, in an order that alternates from round to round:

- ``full``: ``rank_history`` loads and scores every record of every other task, as gga's
  start did before 2026-11-27 (``tl``, ``auto`` and gga's other seedings still do);
- ``lazy``: ``history.ranking.RankedHistory`` reads each task's records fastest first and
  scores only those that can still rank among the first ones (gga's default seeding,
  ``fallback`` and ``history similar``).

Both must give the same candidates in the same order; the script stops if they do not.

    python scripts/history_ranking.py --db /work/gga/base64.db --db /work/gga/base500.db \\
        --rounds 7 --out docs/results/history-ranking.md
    python scripts/history_ranking.py --smoke --out /tmp/ranking.md   # CI: a small real history
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header, write_report  # noqa: E402
from paired import paired_ratio  # noqa: E402

from history.ranking import RankedHistory  # noqa: E402
from history.similarity import candidate_configs, rank_history  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.components import HistoryReader  # noqa: E402
from orchestrator.loop import TuneOptions, build_space, tune  # noqa: E402
from orchestrator.manager import Plugins, load_plugins  # noqa: E402
from orchestrator.space import Space  # noqa: E402
from orchestrator.target import TargetInfo, detect_host  # noqa: E402
from orchestrator.task import Task  # noqa: E402

WAYS = ("full", "lazy")


@dataclass(frozen=True)
class Sample:
    db: str
    task: str
    round: int
    way: str
    seconds: float
    scored: int  # records scored to find the candidates


def first_candidates(way: str, reader: object, space: object, target: object,
                     k: int) -> tuple[float, int, list[str]]:
    """(seconds, records scored, candidate keys) of one way of finding ``k`` candidates."""
    gc.collect()
    t0 = time.perf_counter()
    if way == "full":
        scored = rank_history(reader, space, target)  # type: ignore[arg-type]
        found = candidate_configs(scored, space, k)  # type: ignore[arg-type]
        n = len(scored)
    else:
        ranking = RankedHistory(reader, space, target)  # type: ignore[arg-type]
        found = candidate_configs(ranking, space, k)  # type: ignore[arg-type]
        n = ranking.scored
    return time.perf_counter() - t0, n, [c.key for c, _ in found]


@dataclass(frozen=True)
class OpenHistory:
    """A history database opened for left-out timings: its reader, its tasks, each task's
    space (built as the loop builds it) and its number of measurements."""

    reader: HistoryReader
    tasks: list[Task]
    spaces: dict[str, Space]
    size: int


@contextmanager
def open_history(db: Path, plugins: Plugins, target: TargetInfo) -> Iterator[OpenHistory]:
    """``db`` opened (not created) for the length of the ``with`` block."""
    store = HistoryStore.open(db, create=False)
    try:
        tasks = [t for _, t in store.tasks()]
        spaces = {t.key: build_space(plugins, t, target, TuneOptions())[1] for t in tasks}
        yield OpenHistory(store.reader(), tasks, spaces, store.count())
    finally:
        store.close()


def measure(dbs: list[Path], rounds: int, k: int) -> tuple[list[Sample], dict[str, int]]:
    plugins = load_plugins()
    target = detect_host()
    samples: list[Sample] = []
    sizes: dict[str, int] = {}
    for db in dbs:
        with open_history(db, plugins, target) as h:
            reader, tasks, spaces = h.reader, h.tasks, h.spaces
            sizes[db.name] = h.size
            for r in range(rounds):
                for task in tasks:
                    label = task.name or task.key_hash
                    ways = WAYS if r % 2 == 0 else WAYS[::-1]
                    keys = {}
                    for way in ways:
                        seconds, n, keys[way] = first_candidates(way, reader, spaces[task.key],
                                                                 target, k)
                        samples.append(Sample(db.name, label, r, way, seconds, n))
                    if keys["full"] != keys["lazy"]:
                        raise SystemExit(f"error: {db.name}, {label}: the lazy ranking gave "
                                         f"other candidates than the full one")
                print(f"{db.name} round {r + 1}/{rounds} done", flush=True)
    return samples, sizes


def report(samples: list[Sample], sizes: dict[str, int], k: int, rounds: int,
           command: str, note: str = "") -> str:
    by = {(s.db, s.task, s.round, s.way): s for s in samples}
    lines = [f"# Seconds to gga's first {k} history candidates: every record ranked, or lazily",
             "", machine_header(), "", f"Command: `{command}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"Each task of each history database is left out in turn, and the first {k} "
        "candidates for it (history configs adapted to its space, best filtering metric "
        "first, as gga's first generation takes them) are found two ways: `full`, "
        "`rank_history` loading and scoring every record of every other task (gga's start "
        "before 2026-11-27); `lazy`, `history.ranking.RankedHistory` reading each task's "
        "records fastest first and scoring only those that can still rank among the first "
        f"ones. Both gave the same candidates in the same order every time. {rounds} rounds, "
        "both ways in each, their order alternating; seconds include the database reads "
        "(no space building).",
        "",
        "| history | measurements | tasks | median s, full | median s, lazy | full / lazy "
        "[interval] | records scored, full | records scored, lazy (median) |",
        "|---|---|---|---|---|---|---|---|"]
    for db, size in sizes.items():
        mine = [s for s in samples if s.db == db]
        keys = sorted({(s.task, s.round) for s in mine})
        full = [by[(db, t, r, "full")].seconds for t, r in keys]
        lazy = [by[(db, t, r, "lazy")].seconds for t, r in keys]
        ratio = paired_ratio(lazy, full)  # full / lazy, pair by pair
        tasks = len({s.task for s in mine})
        lines.append(
            f"| {db} | {size} | {tasks} | {statistics.median(full):.3f} | "
            f"{statistics.median(lazy):.3f} | "
            f"{ratio.text() + f' at {ratio.level:.1%}' if ratio else '-'} | "
            f"{statistics.median(by[(db, t, r, 'full')].scored for t, r in keys):.0f} | "
            f"{statistics.median(by[(db, t, r, 'lazy')].scored for t, r in keys):.0f} |")
    lines += ["", "Per task (medians over the rounds):", "",
              "| history | left out | s, full | s, lazy | scored, lazy |", "|---|---|---|---|---|"]
    for db in sizes:
        for task in sorted({s.task for s in samples if s.db == db}):
            def med(way: str, what: str) -> float:
                return statistics.median(getattr(s, what) for s in samples
                                         if s.db == db and s.task == task and s.way == way)
            lines.append(f"| {db} | {task} | {med('full', 'seconds'):.3f} | "
                         f"{med('lazy', 'seconds'):.3f} | {med('lazy', 'scored'):.0f} |")
    return "\n".join(lines) + "\n"


SMOKE = {"N": 1, "C": 16, "H": 14, "W": 14, "K": 16, "R": 3, "S": 3, "stride": 1, "pad": 1,
         "dilation": 1}


def smoke_history(scratch: Path) -> Path:
    """A small real history: random search on two small shapes."""
    db = scratch / "smoke-history.db"
    for i, k in enumerate((16, 24)):
        tune(Task.create("conv2d", {**SMOKE, "K": k}, name=f"smoke{i}"), db=str(db),
             searcher="random", trials=8, batch_size=8, seed=i)
    return db


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, action="append", default=[],
                    help="a history database (repeat for several)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--k", type=int, default=8,
                    help="candidates to find (gga's first generation: population - probe = 8)")
    ap.add_argument("--smoke", action="store_true", help="CI: a small real history, one round")
    ap.add_argument("--out", type=Path, default=Path("docs/results/history-ranking.md"))
    a = ap.parse_args(argv)
    if a.rounds < 1 or a.k < 1:
        ap.error("--rounds and --k must be >= 1")
    command = "python scripts/history_ranking.py " + " ".join(argv if argv is not None
                                                               else sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="history-ranking-") as d:
        if a.smoke:
            samples, sizes = measure([smoke_history(Path(d))], 1, a.k)
            text = report(samples, sizes, a.k, 1, command,
                          note="Smoke run (CI): a small history, one round; no figure here "
                               "is a result.")
        else:
            missing = [str(p) for p in a.db if not p.exists()]
            if not a.db or missing:
                ap.error("--db must name existing history databases (or give --smoke); "
                         f"missing: {', '.join(missing) or 'none given'}")
            samples, sizes = measure(a.db, a.rounds, a.k)
            text = report(samples, sizes, a.k, a.rounds, command)
    write_report(a.out, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
