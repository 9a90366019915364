"""``orchestrator history similar``: the history records closest to a task (eqs. 1-3).

Mounted by ``orchestrator/cli.py`` as ``history_app.command("similar")(similar_command)``.
"""

from __future__ import annotations

import itertools
import json
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from history.ranking import RankedHistory
from history.similarity import DEFAULT_OMEGA, ScoredRecord, adapt_config
from orchestrator.errors import OrchestratorError
from orchestrator.space import Space
from orchestrator.task import Task


def input_space(task: Task) -> Space:
    """The space the first installed space generator makes for ``task`` on this host."""
    from orchestrator.loop import choose_space_generator
    from orchestrator.manager import load_plugins
    from orchestrator.target import detect_host

    target = detect_host()
    _, gen = choose_space_generator(load_plugins(), task, target, None)
    return gen.generate(task, target)


def scored_to_dict(rec: ScoredRecord, space: Space) -> dict[str, Any]:
    adapted = adapt_config(rec.result.config, space)
    return {
        "task": rec.task.to_dict(), "gflops": rec.gflops, "latency_ms": rec.result.latency * 1e3,
        "match_score": rec.match, "utilization": rec.gamma, "metric": rec.metric,
        "config": rec.result.config.to_dict(),
        "adapted_config": adapted.to_dict() if adapted is not None else None,
    }


def similar_command(
    op: Annotated[str, typer.Option(help="Operator of the input task")],
    shape: Annotated[str, typer.Option(help="Shape of the input task, as for tune")],
    k: Annotated[int, typer.Option(help="How many records")] = 10,
    db: Annotated[Optional[str], typer.Option(
        "--db", help="History database [default: $ORCHESTRATOR_DB or ./tuning-history.db]")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable results")] = False,
) -> None:
    """List the history records of other tasks that best fit a task, best first.

    Ranked by the filtering metric m = GFLOPS x utilization x match_score^2 (Mu et al.,
    eqs. 1-3)."""
    from history.store import HistoryStore
    from orchestrator.task import parse_shape

    if k < 1:
        raise OrchestratorError(f"--k must be positive, got {k}")
    task = Task.create(op, parse_shape(shape))
    space = input_space(task)
    store = HistoryStore.open(db, create=False)
    try:
        ranking = RankedHistory(store.reader(), space, None, DEFAULT_OMEGA)
        ranked = list(itertools.islice(ranking, max(k, 0)))
    finally:
        store.close()
    rows = [scored_to_dict(rec, space) for rec in ranked]
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    console = Console()
    if not rows:
        Console(stderr=True).print(f"no successful {task.op} measurement of another task in history")
        return
    table = Table(title=f"History records closest to {task.label()}")
    for col in ("workload", "GFLOPS", "match s", "gamma", "metric m", "adapted config"):
        table.add_column(col, justify="left" if col in ("workload", "adapted config") else "right")
    for rec, row in zip(ranked, rows):
        adapted = row["adapted_config"]
        table.add_row(rec.task.label(), f"{rec.gflops:.1f}", f"{rec.match:.3f}", f"{rec.gamma:.3f}",
                      f"{rec.metric:.1f}", json.dumps(adapted, separators=(",", ":")) if adapted
                      else "(not adaptable)")
    console.print(table)
