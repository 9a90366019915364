"""The five component kinds as Protocols: what plugins contribute and the core calls.

Components receive frozen data (Task, TargetInfo, Space, Config, MeasureResult) and
never ORM rows or database sessions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task


@runtime_checkable
class SpaceGenerator(Protocol):
    """Builds the search space of a task; called once when a task starts."""

    def supports(self, task: Task, target: TargetInfo) -> bool:
        """True if this generator has a template for ``task`` on ``target``."""

    def generate(self, task: Task, target: TargetInfo) -> Space:
        """The space of configs for ``task`` (its ``schedule_fn`` must be importable)."""


@runtime_checkable
class Pruner(Protocol):
    """Narrows a space after it is generated, before the search starts."""

    def prune(self, space: Space, target: TargetInfo) -> Space:
        """A smaller space (``Space.with_check``) or a ranked list (``Space.with_candidates``)."""


@runtime_checkable
class CostModel(Protocol):
    """Predicts how good configs are; searchers call it, the core refits it each round."""

    def fit(self, space: Space, results: Sequence[MeasureResult]) -> None:
        """Update the model with every result measured so far for this task."""

    def predict(self, space: Space, configs: Sequence[Config]) -> list[float]:
        """One score per config; higher is better (for example GFLOPS or -latency)."""


@runtime_checkable
class HistoryReader(Protocol):
    """Read-only access to the tuning history, for searchers that learn across tasks.

    Returns frozen data only; the database session never leaves the store.

    Optional method ``fastest(task, target=None)``: an iterator over the task's configs
    at their fastest ok timing, fastest first, each config once, read as it is consumed.
    ``history.ranking`` uses it to rank a large history without reading all of it;
    without it, the ranking reads ``results`` and sorts them.
    """

    def tasks(self, op: str | None = None) -> list[Task]:
        """Every task in history (of one operator, if given)."""

    def results(self, task: Task, target: TargetInfo | None = None,
                ok_only: bool = True) -> list[MeasureResult]:
        """A task's stored results (on one target, if given), oldest first."""


@dataclass(frozen=True)
class SearchContext:
    """What a searcher is given when a task starts."""

    task: Task
    target: TargetInfo
    space: Space
    seed: int
    cost_model: CostModel | None = None
    # Results already in history for this task and target (a resumed run's own results
    # first); searchers may learn from them. Configs among them are never measured again.
    prior: tuple[MeasureResult, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    # The whole history (other tasks too), for transfer across tasks; None without a store.
    history: HistoryReader | None = None


@runtime_checkable
class Searcher(Protocol):
    """Proposes configs to measure and learns from their results.

    Optional method ``tell_confirmed(results)``: called under ``tune --confirm`` after
    ``tell``, and once after ``start`` when a run resumes, with the confirmed result
    (:func:`orchestrator.confirm.confirmed`) of each config the loop timed again because
    its first timing beat the confirmed best. Its latency is a better estimate of that
    config's speed than the first timing the searcher was told, which was picked for
    being fast. A searcher without the method is not told.

    Optional attribute ``note``: one line that ``start`` sets about a choice the searcher
    made for the task (``auto``: the flow it runs, and the history match that chose it).
    The task's summary carries it as ``searcher_note`` and ``orchestrator tune`` prints it.
    """

    def start(self, context: SearchContext) -> None:
        """Called once before the first ``propose``."""

    def propose(self, n: int) -> list[Config]:
        """Up to ``n`` configs to measure next; an empty list means the search is over."""

    def tell(self, results: Sequence[MeasureResult]) -> None:
        """The results of the configs last proposed (also for configs answered from history)."""


@runtime_checkable
class Measurer(Protocol):
    """Builds and runs configs; failures are results with a status, not exceptions.

    The optional attribute ``name`` is what the measurer writes in
    ``MeasureResult.measurer``; the loop answers a config from history only with a
    result of the same measurer (a static score never stands in for a latency). The
    optional attribute ``counts`` (name -> number, running totals) says what the measurer
    did besides timing; the task's summary gets what it counted during the task, as
    ``measurer_counts``. Optional method ``prepare(space, target)``: called once when a
    task with trials to run starts (not for a finished run, rerun), before the
    searcher's ``start``; a measurer may start its workers there without waiting for
    them, so that their start-up overlaps the searcher's (reading history, fitting a
    model) instead of coming after it. Returns nothing. One measurer may serve several
    tasks in turn (``tune(shared_measurer=...)``, the CLI's tasks), so it keeps no state
    of one task that would be wrong for the next.
    """

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        """One result per config, in the same order. A config may come more than once
        (the loop's re-timings under ``tune --confirm``): each time is timed apart."""

    def close(self) -> None:
        """Release worker processes; called by whoever made the measurer, once it is done
        (``tune`` for its own, when the task finishes)."""
