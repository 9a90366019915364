"""How well one measurement of the Tuna reference sample predicts another.

``reproduce_tuna.py --rounds N`` measures each workload's sample N times, at different
times and in different orders. This script reads those rounds from the history
database (nothing is measured) and scores each round as if it were a cost model for each
other round, with the same top-k ratio and Spearman correlation that the reproduction
gives the static model. That is the ceiling a cost model can reach against a single
round on this machine: a model cannot rank the sample better than the measurement agrees
with itself. With three rounds or more it also scores each round against the best of
the others, the ground truth the reproduction uses.

    python scripts/tuna_measurement_noise.py --db /work/tuna-reference.db \\
        [--out docs/results/tuna-noise.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations, permutations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import machine_header  # noqa: E402

from history.models import MeasurementRow, RunRow  # noqa: E402
from history.store import HistoryStore, RunView  # noqa: E402
from plugins.tuna.metrics import spearman, top_k_ratio  # noqa: E402

SAMPLE_RUN = "uniform-sample"  # the searcher name reproduce_tuna.py gives its sample runs


@dataclass(frozen=True)
class Agreement:
    """The sample rounds of one workload scored against each other."""

    workload: str
    configs: int                     # measured successfully in every round
    rounds: tuple[tuple[str, str], ...]  # (started, finished) of each round's run
    ratio_quantiles: tuple[float, float, float]  # 5%, 50%, 95% of later / earlier round
    spearman: float                  # mean over pairs of rounds
    top10: float                     # mean over ordered pairs: one round ranks, the other scores
    top50: float
    rest10: float                    # one round ranking the best of the other rounds, mean
    rest50: float


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def agreement(store: HistoryStore, runs: Sequence[RunView]) -> Agreement | None:
    """The rounds' agreement over the configs measured successfully in all of them."""
    def latencies(run: RunView) -> dict[str, float]:
        return {r.result.config.key: r.result.latency
                for r in store.records(where=[MeasurementRow.run_id == run.id])
                if r.result.ok}

    measured = [latencies(run) for run in runs]
    keys = sorted(set.intersection(*(set(m) for m in measured)))
    if len(keys) < 2:
        return None
    rounds = [[m[k] for k in keys] for m in measured]
    pairs = list(combinations(range(len(rounds)), 2))
    ratios = [y / x for i, j in pairs for x, y in zip(rounds[i], rounds[j])]
    ordered = list(permutations(range(len(rounds)), 2))

    # per round, each config's best latency over the other rounds
    rests = [[min(lat) for lat in zip(*(r for j, r in enumerate(rounds) if j != i))]
             for i in range(len(rounds))]

    return Agreement(
        runs[0].task.name or runs[0].task.label(), len(keys),
        tuple((run.started_at, run.finished_at or "") for run in runs),
        (quantile(ratios, 0.05), quantile(ratios, 0.5), quantile(ratios, 0.95)),
        statistics.fmean(spearman(rounds[i], rounds[j]) for i, j in pairs),
        statistics.fmean(top_k_ratio(rounds[i], rounds[j], 10) for i, j in ordered),
        statistics.fmean(top_k_ratio(rounds[i], rounds[j], 50) for i, j in ordered),
        statistics.fmean(top_k_ratio(r, rest, 10) for r, rest in zip(rounds, rests)),
        statistics.fmean(top_k_ratio(r, rest, 50) for r, rest in zip(rounds, rests)))


def sample_rounds(store: HistoryStore) -> list[list[RunView]]:
    """The sample runs of every (task, target) that has two or more, oldest task first."""
    runs = sorted(store.runs(where=[RunRow.searcher == SAMPLE_RUN], limit=100_000),
                  key=lambda r: r.id)
    by_task: dict[tuple[str, str], list[RunView]] = {}
    for run in runs:
        by_task.setdefault((run.task.key, run.target_key), []).append(run)
    return [rs for rs in by_task.values() if len(rs) >= 2]


def report(rows: list[Agreement], db: str) -> str:
    def f(x: float) -> str:
        return f"{x:.3f}"

    most = max(len(r.rounds) for r in rows) if rows else 0
    lines = [
        "# Tuna reference sample: how well one measurement predicts another", "",
        machine_header(), "",
        f"Command: `python scripts/tuna_measurement_noise.py --db {db}` (reads the history "
        "database, measures nothing)", "",
        f"Each workload's uniform sample measured in up to {most} rounds by "
        f"`reproduce_tuna.py --rounds N` (each round after the first in a new random order, "
        "hours apart). Pairs: each round is scored as if it were a cost model for each other "
        "round, with the top-k ratio and Spearman correlation the reproduction uses (mean "
        "over the pairs): the ceiling for any model judged against one round. Best of the "
        "others: each round scored against the best of the other rounds for each config, "
        "the ground truth the reproduction uses when there are several rounds (mean over "
        "the rounds).", "",
        "| workload | configs | rounds (UTC) | later / earlier round: 5% / median / 95% | "
        "Spearman (pairs) | top-10 (pairs) | top-50 (pairs) | top-10 (best of the others) | "
        "top-50 (best of the others) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        when = "; ".join(f"{a[:16]}–{b[11:16]}" for a, b in r.rounds)
        lines.append(
            f"| {r.workload} | {r.configs} | {when} | "
            f"{' / '.join(f(q) for q in r.ratio_quantiles)} | {f(r.spearman)} | "
            f"{f(r.top10)} | {f(r.top50)} | {f(r.rest10)} | {f(r.rest50)} |")
    if rows:
        def mean(field: str) -> str:
            return f"**{f(statistics.fmean(getattr(r, field) for r in rows))}**"
        lines.append(f"| **mean** | | | | {mean('spearman')} | {mean('top10')} | "
                     f"{mean('top50')} | {mean('rest10')} | {mean('rest50')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, help="the reference history database")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs"
                                        / "results" / "tuna-noise.md"))
    args = p.parse_args(argv)
    store = HistoryStore.open(args.db, create=False)
    try:
        rows = [a for runs in sample_rounds(store) if (a := agreement(store, runs))]
    finally:
        store.close()
    if not rows:
        print(f"error: no workload in {args.db} has two sample rounds; measure them with "
              "`reproduce_tuna.py --rounds 2`", file=sys.stderr)
        return 2
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(report(rows, args.db))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
