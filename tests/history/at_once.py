"""Several processes opening one history database, or adding one task to it, at the same
moment, as commands started together on a new database or a new task do."""

from __future__ import annotations

import multiprocessing

from history.store import HistoryStore


def _open_at_once(url: str, start, errors) -> None:
    start.wait()
    try:
        HistoryStore.open(url).close()
    except Exception as exc:  # reported to the test, which names it
        errors.put(f"{type(exc).__name__}: {exc}")


def open_at_once(url: str, n: int = 4) -> list[str]:
    """Errors of ``n`` processes opening (creating) the history at ``url`` at one moment."""
    ctx = multiprocessing.get_context("fork")
    start, errors = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_open_at_once, args=(url, start, errors)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [errors.get() for _ in range(errors.qsize())]


def _ensure_at_once(url: str, start, ids) -> None:
    from orchestrator.testing import TOY_TASK, toy_results
    from orchestrator.testing.conformance import TOY_TARGET

    store = HistoryStore.open(url)
    start.wait()
    try:
        task_id, target_id = store.ensure_task(TOY_TASK), store.ensure_target(TOY_TARGET)
        store.record(run_id=None, task_id=task_id, target_id=target_id, results=toy_results(n=3))
        ids.put((task_id, target_id))
    except Exception as exc:  # reported to the test, which names it
        ids.put(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()


def ensure_at_once(url: str, n: int = 4) -> list:
    """What ``n`` processes got from ``ensure_task`` and ``ensure_target`` of the toy task
    and target, called at one moment on the open history at ``url``, each then recording
    the same three toy results: (task id, target id) each, or an error's text."""
    ctx = multiprocessing.get_context("fork")
    start, ids = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_ensure_at_once, args=(url, start, ids)) for _ in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    return [ids.get() for _ in range(ids.qsize())]
