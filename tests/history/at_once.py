"""Several processes opening one history database, or adding one task to it, at the same
moment, as commands started together on a new database or a new task do."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

from history.store import HistoryStore


def _open(url: str) -> str:
    HistoryStore.open(url).close()
    return "opened"


def _ensure_and_record(url: str) -> tuple[int, int]:
    from orchestrator.testing import TOY_TASK, toy_results
    from orchestrator.testing.conformance import TOY_TARGET

    store = HistoryStore.open(url)
    try:
        task_id, target_id = store.ensure_task(TOY_TASK), store.ensure_target(TOY_TARGET)
        store.record(run_id=None, task_id=task_id, target_id=target_id, results=toy_results(n=3))
        return task_id, target_id
    finally:
        store.close()


def _at_once(work: Callable[[str], Any], url: str, start: Any, out: Any) -> None:
    start.wait()
    try:
        out.put(work(url))
    except Exception as exc:  # reported to the test, which names it
        out.put(f"{type(exc).__name__}: {exc}")


def run_at_once(work: Callable[[str], Any], url: str, n: int) -> list[Any]:
    """What ``work(url)`` returned (or an error's text) in each of ``n`` processes started
    together and released at one moment."""
    ctx = multiprocessing.get_context("fork")
    start, out = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_at_once, args=(work, url, start, out)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [out.get() for _ in range(out.qsize())]


def open_at_once(url: str, n: int = 4) -> list[str]:
    """Errors of ``n`` processes opening (creating) the history at ``url`` at one moment."""
    return [got for got in run_at_once(_open, url, n) if got != "opened"]


def ensure_at_once(url: str, n: int = 4) -> list[Any]:
    """What ``n`` processes got from ``ensure_task`` and ``ensure_target`` of the toy task
    and target on the history at ``url`` at one moment, each then recording the same three
    toy results: (task id, target id) each, or an error's text."""
    return run_at_once(_ensure_and_record, url, n)


def row_counts(url: str, *tables: str) -> list[int]:
    """How many rows each of ``tables`` of the history at ``url`` holds."""
    store = HistoryStore.open(url, create=False)
    try:
        with store.engine.connect() as conn:
            return [conn.exec_driver_sql(f"SELECT count(*) FROM {t}").scalar_one()
                    for t in tables]
    finally:
        store.close()
