"""Several processes opening one history database at the same moment, as commands
started together on a new database do."""

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
