"""History records in filtering-metric order, scored only as far as a searcher reads them.

:func:`history.similarity.rank_history` loads and scores every record of every earlier
task, so a searcher's start grows with the history, before its first build
(``scripts/history_ranking.py`` times both; ``docs/results/history-ranking.md``). A
searcher that takes the first few candidates needs only the records that can still rank
among them.

The bound that makes this exact: the match score (eq. 1) of a record depends only on the
products of its split factors, and every successful config of a task splits that task's
loops exactly (``SplitKnob`` candidates are perfect tiles), so all records of one task
share one match score ``s``. Utilization is at most 1, so no record of a task not yet
read can have a metric above ``Th * s ** omega`` with ``Th`` the throughput of the next
record of that task, fastest first. Records are read task by task, fastest first
(``HistoryReader.fastest`` where the reader has it, a page at a time), and a record is
given out once no unread record of any task can rank above it.

A task whose records do not share one score (history written by another template version,
whose knobs differ) breaks the bound: from the first such record on, the rest of the
ranking is the full one (:func:`history.similarity.rank_history`), less the records
already given out, and a warning says so.
"""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterator

from history.similarity import (
    DEFAULT_OMEGA,
    ScoredRecord,
    fastest_per_config,
    match_score,
    rank_history,
    split_extents,
    utilization,
)
from orchestrator.components import HistoryReader
from orchestrator.result import MeasureResult
from orchestrator.space import Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task

log = logging.getLogger(__name__)


def fastest_first(history: HistoryReader, task: Task,
                  target: TargetInfo | None) -> Iterator[MeasureResult]:
    """``task``'s configs at their fastest ok timing, fastest first, each config once: from
    the reader's ``fastest`` (lazy) when it has one, else from all its results."""
    lazy = getattr(history, "fastest", None)
    if lazy is not None:
        yield from lazy(task, target)
        return
    yield from sorted(fastest_per_config(history.results(task, target, ok_only=True)),
                      key=lambda r: r.latency)


class _TaskStream:
    """One earlier task's records, fastest first, with the bound on the metric of the next."""

    def __init__(self, task: Task, results: Iterator[MeasureResult]) -> None:
        self.task = task
        self._results = results
        self.match: float | None = None  # the score every record of the task shares
        self.next: MeasureResult | None = next(results, None)
        self.first = self.next  # the task's fastest record

    def bound(self, omega: float) -> float:
        """No unread record of the task has a higher metric than this (-1: none is left)."""
        if self.next is None:
            return -1.0
        s = 1.0 if self.match is None else self.match
        return self.next.gflops(self.task.flops) * s ** omega

    def take(self) -> MeasureResult:
        r = self.next
        assert r is not None
        self.next = next(self._results, None)
        return r


def _order(rec: ScoredRecord) -> tuple[float, float, str]:
    """The order of :func:`history.similarity.score_records` (ties included)."""
    return (-rec.metric, -rec.match, rec.result.config.key)


class RankedHistory:
    """The records of :func:`history.similarity.rank_history` in the same order, read and
    scored lazily. Iterable any number of times (records read once are kept)."""

    def __init__(self, history: HistoryReader | None, space: Space,
                 target: TargetInfo | None = None, omega: float = DEFAULT_OMEGA) -> None:
        self._history, self._space, self._target = history, space, target
        self.omega = omega
        self._extents = split_extents(space)
        self._out: list[ScoredRecord] = []
        self._gen: Iterator[ScoredRecord] | None = None
        self.scored = 0  # records scored so far (what the ranking has cost)
        self._opened: list[_TaskStream] | None = None

    def __iter__(self) -> Iterator[ScoredRecord]:
        i = 0
        while True:
            if i < len(self._out):
                yield self._out[i]
                i += 1
                continue
            if self._gen is None:
                self._gen = self._ranked()
            rec = next(self._gen, None)
            if rec is None:
                return
            self._out.append(rec)

    def best_match(self) -> float:
        """The highest match score (eq. 1) of any record, 0 without history: what
        :func:`history.similarity.best_match_score` computes from every record, here from
        the fastest record of each task, since a task's records share one score."""
        return max((match_score(st.first.config, self._extents)
                    for st in self._streams() if st.first is not None), default=0.0)

    def _streams(self) -> list[_TaskStream]:
        """Every other task's stream, opened once (reading each one's first page)."""
        if self._opened is None:
            self._opened = self._open()
        return self._opened

    def _open(self) -> list[_TaskStream]:
        if self._history is None:
            return []
        me = self._space.task
        tasks = [t for t in self._history.tasks(me.op) if t.key != me.key]
        streams = [_TaskStream(t, fastest_first(self._history, t, self._target)) for t in tasks]
        if self._target is not None and all(s.next is None for s in streams):
            # as history_results: other machines' throughputs are better than nothing
            streams = [_TaskStream(t, fastest_first(self._history, t, None)) for t in tasks]
        return [s for s in streams if s.next is not None]

    def _score(self, stream: _TaskStream) -> ScoredRecord | None:
        r = stream.take()
        self.scored += 1
        s = match_score(r.config, self._extents)
        if stream.match is None:
            stream.match = s
        elif s != stream.match:
            return None
        g = utilization(r.config, self._extents)
        gflops = r.gflops(stream.task.flops)
        return ScoredRecord(stream.task, r, gflops, s, g, gflops * g * s ** self.omega)

    def _ranked(self) -> Iterator[ScoredRecord]:
        streams = self._streams()
        # the streams by their bound, highest first (a task is pushed back after each read)
        bounds = [(-st.bound(self.omega), i) for i, st in enumerate(streams)]
        heapq.heapify(bounds)
        ready: list[tuple[tuple[float, float, str], int, ScoredRecord]] = []
        n = 0
        while ready or bounds:
            top = -bounds[0][0] if bounds else -1.0
            if ready and (not bounds or -ready[0][0][0] > top):
                yield heapq.heappop(ready)[2]
                continue
            _, i = heapq.heappop(bounds)
            rec = self._score(streams[i])
            if rec is None:
                yield from self._rest(streams[i].task)
                return
            heapq.heappush(ready, (_order(rec), n, rec))
            n += 1
            if streams[i].next is not None:
                heapq.heappush(bounds, (-streams[i].bound(self.omega), i))

    def _rest(self, task: Task) -> Iterator[ScoredRecord]:
        log.warning("history: the records of %s do not share one match score (configs of "
                    "another template version?); ranking every record", task.label())
        assert self._history is not None
        given = {(r.task.key, r.result.config.key) for r in self._out}
        full = rank_history(self._history, self._space, self._target, self.omega)
        self.scored += len(full)
        yield from (r for r in full if (r.task.key, r.result.config.key) not in given)

