"""A measurer that answers from recorded history instead of building anything.

Searchers and cost models can be tested (and compared) on real recorded data without
a compiler or hardware: the replay measurer looks each config up in the history of the
same task. A config that was never recorded comes back as ``run_error`` with the text
``not recorded``, so a test can count how often a searcher leaves the recorded set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from orchestrator.errors import OptionError
from orchestrator.options import owner_name
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo

NOT_RECORDED = "not recorded"


class ReplayMeasurer:
    """Replays results: from ``results`` given in code, or from the history at ``db``."""

    name = "replay"

    def __init__(self, db: str | None = None, results: Iterable[MeasureResult] = ()) -> None:
        self.db = db
        self._given = _results(results)
        self._by_task: dict[str, dict[str, MeasureResult]] = {}
        self.calls = 0

    def _table(self, space: Space) -> dict[str, MeasureResult]:
        key = space.task.key
        if key not in self._by_task:
            table: dict[str, MeasureResult] = {}
            for r in self._given or self._load(space):
                if r.config.key not in table or r.latency < table[r.config.key].latency:
                    table[r.config.key] = r
            self._by_task[key] = table
        return self._by_task[key]

    def _load(self, space: Space) -> list[MeasureResult]:
        from history.store import HistoryStore

        store = HistoryStore.open(self.db, create=False)
        try:
            task_id = store.find_task(space.task)
            if task_id is None:
                return []
            return [rec.result for rec in store.records(where=[_task_is(task_id)])]
        finally:
            store.close()

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        table = self._table(space)
        self.calls += len(configs)
        out = []
        for cfg in configs:
            r = table.get(cfg.key)
            out.append(MeasureResult(cfg, r.status, r.latencies, 0.0, 0.0, r.error, "replay")
                       if r else MeasureResult(cfg, MeasureStatus.RUN_ERROR,
                                               error=NOT_RECORDED, measurer="replay"))
        return out

    def close(self) -> None:
        pass


def _results(results: object) -> list[MeasureResult]:
    """``results`` as a list, or a one-line error: it must be an iterable of
    :class:`MeasureResult` (given in Python; the command line cannot)."""
    owner = owner_name("measurer", ReplayMeasurer.name)
    if isinstance(results, (str, bytes)) or not isinstance(results, Iterable):
        raise OptionError(f"{owner}: option results takes MeasureResult objects "
                          f"(from Python), got {results!r}; from the command line give "
                          "db=URL instead")
    given = list(results)
    wrong = next((r for r in given if not isinstance(r, MeasureResult)), None)
    if wrong is not None:
        raise OptionError(f"{owner}: option results takes MeasureResult objects, "
                          f"got an item {wrong!r}")
    return given


def _task_is(task_id: int):  # noqa: ANN202 - a SQLAlchemy expression
    from history.models import MeasurementRow

    return MeasurementRow.task_id == task_id
