"""How well one measurement of the Tuna reference sample predicts another.

``reproduce_tuna.py --rounds 2`` measures each workload's sample twice, at different
times and in a different order. This script reads those rounds from the history
database (nothing is measured) and scores round 1 as if it were a cost model for round 2
and the other way round, with the same top-k ratio and Spearman correlation that the
reproduction gives the static model. That is the ceiling a cost model can reach against
a single round on this machine: a model cannot rank the sample better than the
measurement agrees with itself.

    python scripts/tuna_measurement_noise.py --db /work/tuna-reference.db \\
        [--out docs/results/tuna-noise.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import machine_header  # noqa: E402

from history.models import MeasurementRow, RunRow  # noqa: E402
from history.store import HistoryStore, RunView  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from plugins.tuna.metrics import spearman, top_k_ratio  # noqa: E402

SAMPLE_RUN = "uniform-sample"  # the searcher name reproduce_tuna.py gives its sample runs


@dataclass(frozen=True)
class Agreement:
    """Round 1 against round 2 of one workload's sample."""

    workload: str
    configs: int
    first: tuple[str, str]           # (started, finished) of each round's run
    second: tuple[str, str]
    ratio_quantiles: tuple[float, float, float]  # 5%, 50%, 95% of latency2 / latency1
    spearman: float
    top10: tuple[float, float]       # round 1 ranking scored on round 2, and the reverse
    top50: tuple[float, float]


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[round(q * (len(ordered) - 1))]


def agreement(store: HistoryStore, first: RunView, second: RunView) -> Agreement | None:
    """The two rounds' agreement over the configs measured successfully in both."""
    def latencies(run: RunView) -> dict[str, float]:
        return {r.result.config.key: r.result.latency
                for r in store.records(where=[MeasurementRow.run_id == run.id])
                if r.result.ok}

    a, b = latencies(first), latencies(second)
    keys = sorted(a.keys() & b.keys())
    if len(keys) < 2:
        return None
    one, two = [a[k] for k in keys], [b[k] for k in keys]
    ratios = [y / x for x, y in zip(one, two)]
    return Agreement(
        first.task.name or first.task.label(), len(keys),
        (first.started_at, first.finished_at or ""), (second.started_at, second.finished_at or ""),
        (quantile(ratios, 0.05), quantile(ratios, 0.5), quantile(ratios, 0.95)),
        spearman(one, two), (top_k_ratio(one, two, 10), top_k_ratio(two, one, 10)),
        (top_k_ratio(one, two, 50), top_k_ratio(two, one, 50)))


def sample_rounds(store: HistoryStore) -> list[tuple[RunView, RunView]]:
    """The first two sample runs of every (task, target) that has two, oldest task first."""
    runs = sorted(store.runs(where=[RunRow.searcher == SAMPLE_RUN], limit=100_000),
                  key=lambda r: r.id)
    by_task: dict[tuple[str, str], list[RunView]] = {}
    for run in runs:
        by_task.setdefault((run.task.key, run.target_key), []).append(run)
    return [(rs[0], rs[1]) for rs in by_task.values() if len(rs) >= 2]


def report(rows: list[Agreement], db: str) -> str:
    def f(x: float) -> str:
        return f"{x:.3f}"

    lines = [
        "# Tuna reference sample: how well one measurement predicts another", "",
        machine_header(), "",
        f"Command: `python scripts/tuna_measurement_noise.py --db {db}` (reads the history "
        "database, measures nothing)", "",
        "Each workload's uniform sample measured twice by `reproduce_tuna.py --rounds 2` "
        "(round 2 in a new random order, hours later). Round 1 is scored as if it were a "
        "cost model for round 2 and the other way round, with the top-k ratio and Spearman "
        "correlation the reproduction uses: the ceiling for any model judged against one "
        "round.", "",
        "| workload | configs | round 1 | round 2 | round 2 / round 1: 5% / median / 95% | "
        "Spearman | top-10 (1→2 / 2→1) | top-50 (1→2 / 2→1) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.workload} | {r.configs} | {r.first[0][:16]}–{r.first[1][11:16]} | "
            f"{r.second[0][:16]}–{r.second[1][11:16]} | "
            f"{' / '.join(f(q) for q in r.ratio_quantiles)} | {f(r.spearman)} | "
            f"{f(r.top10[0])} / {f(r.top10[1])} | {f(r.top50[0])} / {f(r.top50[1])} |")
    if rows:
        lines.append(
            f"| **mean** | | | | | **{f(statistics.fmean(r.spearman for r in rows))}** | "
            f"**{f(statistics.fmean(sum(r.top10) / 2 for r in rows))}** | "
            f"**{f(statistics.fmean(sum(r.top50) / 2 for r in rows))}** |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, help="the reference history database")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "docs"
                                        / "results" / "tuna-noise.md"))
    args = p.parse_args(argv)
    try:
        store = HistoryStore.open(args.db, create=False)
    except OrchestratorError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        rows = [a for pair in sample_rounds(store) if (a := agreement(store, *pair))]
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
    sys.exit(main())
