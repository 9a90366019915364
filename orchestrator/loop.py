"""The core tuning loop: space -> pruners -> searcher <-> cost model -> measurer -> history."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator import runoff as runoffs
from orchestrator.components import Measurer, SearchContext
from orchestrator.confirm import confirmed, confirmed_best, split_retimings, tell_confirmed
from orchestrator.errors import OrchestratorError, UnknownComponentError
from orchestrator.jsonkey import canonical_json
from orchestrator.manager import Plugins, load_plugins
from orchestrator.options import coerce_options, owner_name
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.run_info import RunInfo, TuneSummary
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, detect_host
from orchestrator.task import Task


@dataclass(frozen=True)
class TuneOptions:
    """Everything that selects components and budgets for ``tune``."""

    searcher: str = "auto"
    measurer: str = "local"
    space_generator: str | None = None
    pruners: tuple[str, ...] = ()
    cost_model: str | None = None
    trials: int = 200
    seconds: float | None = None
    early_stop: int | None = None
    seed: int = 0
    batch_size: int = 8
    confirm: int = 0  # time a new best this many times more before it counts (orchestrator.confirm)
    # After the run, time its this many fastest configs again side by side and report the
    # fastest there (orchestrator.runoff); 0: off. Not in the resume key: a rerun of a
    # finished run with it holds only the run-off.
    runoff: int = 0
    runoff_rounds: int = 5
    searcher_options: dict[str, Any] = field(default_factory=dict)
    measurer_options: dict[str, Any] = field(default_factory=dict)
    cost_model_options: dict[str, Any] = field(default_factory=dict)
    # Options of each pruner, by the pruner's name (each must be in ``pruners``).
    pruner_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    space_options: dict[str, Any] = field(default_factory=dict)  # of ``space_generator``

    def resume_key(self, task: Task, target: TargetInfo, space_generator: str,
                   template_version: int = 1) -> str:
        """Runs with equal keys continue each other; budgets are left out on purpose so
        that a rerun with a larger ``--trials`` continues the same run, and a template's
        new version (``Space.template_version``) starts a new one."""
        key: dict[str, Any] = {
            "task": task.key, "target": target.key, "searcher": self.searcher,
            "searcher_options": self.searcher_options, "measurer": self.measurer,
            "space_generator": space_generator, "pruners": list(self.pruners),
            "cost_model": self.cost_model, "seed": self.seed,
        }
        # Each set of options is absent when empty, so that runs made before it still resume.
        for name in ("cost_model_options", "pruner_options", "space_options"):
            if getattr(self, name):
                key[name] = getattr(self, name)
        if self.confirm:  # absent when off, so that runs made before the option still resume
            key["confirm"] = self.confirm
        if template_version != 1:  # likewise: runs made before templates had versions
            key["template_version"] = template_version
        return canonical_json(key)


def check_components(plugins: Plugins, options: TuneOptions) -> None:
    """Resolve every component name, before anything expensive or persistent happens."""
    if options.trials <= 0:
        raise OrchestratorError(f"--trials must be positive, got {options.trials}")
    if options.batch_size <= 0:
        raise OrchestratorError(f"--batch-size must be positive, got {options.batch_size}")
    if options.confirm < 0:
        raise OrchestratorError(f"--confirm must be 0 (off) or more, got {options.confirm}")
    if options.runoff < 0:
        raise OrchestratorError(f"--runoff must be 0 (off) or more, got {options.runoff}")
    if options.runoff_rounds <= 0:
        raise OrchestratorError(f"--runoff-rounds must be positive, got {options.runoff_rounds}")
    if options.early_stop is not None and options.early_stop < 0:
        raise OrchestratorError(f"--early-stop must be 0 (off) or more, got {options.early_stop}")
    named = [("searcher", options.searcher), ("measurer", options.measurer),
             *(("pruner", p) for p in options.pruners)]
    if options.cost_model:
        named.append(("cost_model", options.cost_model))
    elif options.cost_model_options:
        raise OrchestratorError("--cost-model-opt sets options of the cost model that "
                                "--cost-model names; give --cost-model too")
    if options.space_generator:
        named.append(("space_generator", options.space_generator))
    elif options.space_options:
        raise OrchestratorError("--space-opt sets options of the space generator that "
                                "--space names; give --space too")
    stray = sorted(set(options.pruner_options) - set(options.pruners))
    if stray:
        raise OrchestratorError(f"--pruner-opt names pruner {stray[0]!r}, which is not among "
                                f"--pruner ({', '.join(options.pruners) or 'none given'}); "
                                f"add --pruner {stray[0]}")
    for kind, name in named:
        plugins.registry(kind).get(name)
    # Options of components made per task are checked now: a typo fails before any build.
    checks = [("pruner", name, opts) for name, opts in options.pruner_options.items()]
    if options.space_generator:
        checks.append(("space_generator", options.space_generator, options.space_options))
    for kind, name, opts in checks:
        factory = plugins.registry(kind).get(name).factory
        coerce_options(f"{kind.replace('_', ' ')} {name!r}", factory, opts)


def choose_space_generator(plugins: Plugins, task: Task, target: TargetInfo,
                           name: str | None, options: dict[str, Any] | None = None
                           ) -> tuple[str, Any]:
    """The space generator ``name`` (made with ``options``), or else the first installed
    one that supports ``task`` on ``target``."""
    registry = plugins.registry("space_generator")
    if name is not None:
        gen = registry.create(name, **(options or {}))
        if not gen.supports(task, target):
            raise UnknownComponentError(
                f"{owner_name('space_generator', name)} has no template for {task.op} on "
                f"{target.kind}")
        return name, gen
    for comp in registry:
        gen = comp.factory()
        if gen.supports(task, target):
            return comp.name, gen
    raise UnknownComponentError(
        f"no space generator supports {task.op} on target {target.kind}; "
        f"installed: {', '.join(registry.names()) or 'none'}")


def build_space(plugins: Plugins, task: Task, target: TargetInfo,
                options: TuneOptions) -> tuple[str, Space]:
    gen_name, gen = choose_space_generator(plugins, task, target, options.space_generator,
                                           options.space_options)
    space = gen.generate(task, target)
    for name in options.pruners:
        pruner = plugins.create("pruner", name, **options.pruner_options.get(name, {}))
        space = pruner.prune(space, target)
    return gen_name, space


def make_measurer(options: TuneOptions | None = None,
                  plugins: Plugins | None = None) -> Measurer:
    """The measurer ``options`` name (default: ``local``), made with their measurer
    options; the caller closes it."""
    options = options or TuneOptions()
    plugins = plugins or load_plugins()
    return plugins.create("measurer", options.measurer, **options.measurer_options)


def tune(task: Task, *, target: TargetInfo | None = None, options: TuneOptions | None = None,
         db: Any = None, plugins: Plugins | None = None,
         shared_measurer: Measurer | None = None,
         **overrides: Any) -> TuneSummary:
    """Tune ``task`` until the budget is spent, recording every result in history.

    ``db`` is a :class:`history.store.HistoryStore`, a URL or a path (default SQLite
    file). Keyword overrides set fields of :class:`TuneOptions`
    (``tune(task, searcher="grid", trials=50)``). Rerunning an interrupted call with the
    same settings resumes it: nothing recorded is measured again.

    ``shared_measurer``: a measurer the caller made (:func:`make_measurer`, same options)
    and closes; tasks tuned one after another with it keep its workers, instead of
    starting new ones (a TVM import each) for every task. Without it, ``tune`` makes
    its own and closes it when the task ends.
    """
    from history.store import HistoryStore  # history imports the orchestrator types

    options = options or TuneOptions()
    if overrides:
        options = TuneOptions(**{**options.__dict__, **overrides})
    plugins = plugins or load_plugins()
    check_components(plugins, options)
    target = target or detect_host()
    store = db if isinstance(db, HistoryStore) else HistoryStore.open(db)
    gen_name, space = build_space(plugins, task, target, options)
    searcher = plugins.create("searcher", options.searcher, **options.searcher_options)
    cost_model = (plugins.create("cost_model", options.cost_model, **options.cost_model_options)
                  if options.cost_model else None)
    measurer = shared_measurer if shared_measurer is not None else make_measurer(options, plugins)
    try:
        return _Loop(plugins, store, task, target, space, gen_name, options,
                     searcher, cost_model, measurer).run()
    finally:
        if shared_measurer is None:
            measurer.close()
        if store is not db:
            store.close()


class _Loop:
    def __init__(self, plugins: Plugins, store: Any, task: Task, target: TargetInfo,
                 space: Space, gen_name: str, options: TuneOptions, searcher: Any,
                 cost_model: Any, measurer: Any) -> None:
        self.plugins, self.store, self.task, self.target = plugins, store, task, target
        self.space, self.gen_name, self.options = space, gen_name, options
        self.searcher, self.cost_model, self.measurer = searcher, cost_model, measurer
        # Invalid configs are recorded under "space" whatever the measurer; the rest carry
        # the measurer's own name (a replayed or renamed measurer may differ from options).
        self.measurer_name = getattr(measurer, "name", options.measurer)

    def run(self) -> TuneSummary:
        o, store = self.options, self.store
        counts_before = _counts(self.measurer)
        task_id = store.ensure_task(self.task)
        target_id = store.ensure_target(self.target)
        resume_key = o.resume_key(self.task, self.target, self.gen_name,
                                  self.space.template_version)
        run_id = store.find_run(resume_key)
        own: list[MeasureResult] = []
        resumed, was_finished = run_id is not None, False
        if run_id is None:
            run_id = store.start_run(
                task_id=task_id, target_id=target_id, resume_key=resume_key,
                searcher=o.searcher, measurer=o.measurer, space_generator=self.gen_name,
                pruners=o.pruners, cost_model=o.cost_model, seed=o.seed, max_trials=o.trials,
                max_seconds=o.seconds, space_size=self.space.size)
            reused_before = 0
        else:
            own = store.results(task_id, target_id, run_id=run_id)
            status_before, reused_before = store.run_state(run_id)
            was_finished = status_before == "finished"
        # Only results of the same measurer and template stand in for a measurement: a
        # static score (measurer "static") must never be mistaken for a latency, nor the
        # reverse, nor a latency of code that an older version of the template built.
        history = [r for r in store.results(task_id, target_id,
                                            templates=self.space.reusable_templates)
                   if r.measurer == self.measurer_name]
        own_keys = {r.config.key for r in own}
        prior = own + [r for r in history if r.config.key not in own_keys]
        known: dict[str, MeasureResult] = {}
        _keep_fastest(known, prior)

        own_trials, own_retimings = split_retimings(own)
        trials = len(own_trials) + reused_before  # the run's trials so far (when resumed)
        prepare = getattr(self.measurer, "prepare", None)
        if prepare is not None and trials < o.trials:
            prepare(self.space, self.target)  # not for a finished run, rerun
        info = RunInfo(run_id, self.task, self.target, self.space, o.searcher, o.measurer,
                       self.gen_name, o.pruners, o.cost_model, o.seed, o.trials, o.seconds,
                       o.early_stop, resumed_trials=trials)
        if self.cost_model is not None and prior:
            self.cost_model.fit(self.space, prior)
        self.searcher.start(SearchContext(self.task, self.target, self.space, o.seed,
                                          self.cost_model, tuple(prior), dict(o.searcher_options),
                                          history=store.reader()))
        hook = self.plugins.hook
        hook.orchestrator_task_started(run=info)

        run_results: list[MeasureResult] = list(own_trials)
        measured = reused = 0
        retimed = retimed_before = sum(len(rs) for rs in own_retimings.values())
        if o.confirm:
            best = confirmed_best(own_retimings)
            # An interrupted run may have stopped between a batch and its re-timings; a
            # trial faster than the confirmed best was missed so (the best only improves).
            missed = [r for r in own_trials if r.config.key not in own_retimings]
            found = [c for rs in own_retimings.values() if (c := confirmed(rs)) is not None]
            best, n, more = self._confirm(missed, best, known, run_id, task_id, target_id)
            retimed += n
            tell_confirmed(self.searcher, found + more)
        else:
            best = min((r for r in own if r.ok), key=lambda r: r.latency, default=None)
        first_ok = next((r for r in own if r.ok), None)
        # A rerun of a finished run with nothing left to do leaves its record as it was
        # (status, stop reason, finished_at); anything else marks it running until it ends.
        untouched = was_finished and trials >= o.trials and retimed == retimed_before
        if resumed and not untouched:
            store.update_run(run_id, status="running", max_trials=o.trials, max_seconds=o.seconds)
        last_improvement = trials
        started = time.monotonic()
        stop_reason = "error"  # what a run that raised keeps: it is marked failed
        status = "failed"
        try:
            while True:
                if trials >= o.trials:
                    stop_reason = "trials"
                    break
                if o.seconds is not None and time.monotonic() - started >= o.seconds:
                    stop_reason = "seconds"
                    break
                if o.early_stop and trials - last_improvement >= o.early_stop:
                    stop_reason = "early_stop"
                    break
                proposals = _unique(self.searcher.propose(min(o.batch_size, o.trials - trials)))
                if not proposals:
                    # A searcher may be done before the space is (fallback after its one
                    # config, gga or tl with nothing left to try): say which. A space is
                    # exhausted too when history knew the configs this run did not try.
                    stop_reason = ("space_exhausted"
                                   if trials >= self.space.size or _covers(known, self.space)
                                   else "searcher_done")
                    break
                batch = self._evaluate(proposals, known, run_id, task_id, target_id)
                n_reused = sum(1 for _, was_reused in batch if was_reused)
                reused += n_reused
                measured += len(batch) - n_reused
                results = [r for r, _ in batch]
                trials += len(results)
                run_results.extend(results)
                for r in results:
                    if r.ok and first_ok is None:
                        first_ok = r
                    if r.ok and not o.confirm and (best is None or r.latency < best.latency):
                        best = r
                        last_improvement = trials
                told: list[MeasureResult] = []
                if o.confirm:
                    fresh = [r for r, was_reused in batch if not was_reused]
                    before = best
                    best, n, told = self._confirm(fresh, best, known, run_id, task_id, target_id)
                    retimed += n
                    if best is not before:
                        last_improvement = trials
                self.searcher.tell(results)
                tell_confirmed(self.searcher, told)
                if self.cost_model is not None:
                    self.cost_model.fit(self.space, list(known.values()))
                hook.orchestrator_results_measured(run=info, results=results,
                                                   trials_done=trials, best=best)
            status = "finished"
        except KeyboardInterrupt:
            status, stop_reason = "interrupted", "interrupted"
            raise
        finally:
            if not untouched:
                store.update_run(run_id, status=status, stop_reason=stop_reason)
        seconds = time.monotonic() - started  # the run's own; the run-off comes after it
        runoff = None
        if o.runoff:
            runoff = self._runoff(run_results, resume_key, run_id, task_id, target_id)
            if runoff is not None:
                best = runoff.best(self.measurer_name) or best
        summary = TuneSummary(
            run=info, trials=trials, measured=measured, reused=reused, best=best,
            statuses=TuneSummary.count_statuses(run_results),
            seconds=seconds, stop_reason=stop_reason, first_ok=first_ok,
            retimed=retimed, measurer_counts=_counts_since(counts_before, _counts(self.measurer)),
            runoff=runoff,
            # a finished run, rerun, searched nothing: its searcher's choice is not news
            searcher_note=(str(getattr(self.searcher, "note", "") or "")
                           if measured or reused else ""))
        hook.orchestrator_task_finished(run=info, summary=summary)
        return summary

    def _runoff(self, trials: Sequence[MeasureResult], resume_key: str, run_id: int,
                task_id: int, target_id: int) -> runoffs.Runoff | None:
        """The run-off of the run's ``runoff`` fastest configs (``trials``: the run's,
        reused ones included): read from history when a finished one of the same configs
        and rounds is there, else timed now and stored as a finished run of its own in one
        transaction once all its rounds are done (an interrupted run-off leaves nothing
        and is timed again on the next rerun). None when the run has no successful trial."""
        o, store = self.options, self.store
        retimings = split_retimings(store.results(task_id, target_id, run_id=run_id))[1]
        picked = runoffs.contenders(trials, retimings, o.runoff)
        if not picked:
            return None
        configs = [c for c, _ in picked]
        key = runoffs.resume_key(resume_key, configs, o.runoff_rounds)
        found = store.find_run(key, status="finished")
        if found is not None:
            stored = store.results(task_id, target_id, run_id=found)
            return runoffs.tally(found, picked, runoffs.by_config(stored))
        timings = runoffs.measure_interleaved(self.measurer, self.space, self.target, configs,
                                              o.runoff_rounds)
        ro_id = store.record_finished_run(
            task_id=task_id, target_id=target_id, resume_key=key, searcher=runoffs.SEARCHER,
            measurer=o.measurer, space_generator=self.gen_name, pruners=o.pruners,
            seed=o.seed, max_trials=len(configs) * o.runoff_rounds, space_size=self.space.size,
            stop_reason=f"run-off of run {run_id}, {len(configs)} configs, "
                        f"{o.runoff_rounds} rounds",
            results=[r for rs in timings.values() for r in rs], template=self.space.template)
        return runoffs.tally(ro_id, picked, timings)

    def _confirm(self, results: Sequence[MeasureResult], best: MeasureResult | None,
                 known: dict[str, MeasureResult], run_id: int, task_id: int, target_id: int
                 ) -> tuple[MeasureResult | None, int, list[MeasureResult]]:
        """Time again, fastest first, each of ``results`` whose timing beats the confirmed
        ``best``; returns the confirmed best after them, how many timings were made and
        the confirmed result of each config timed again."""
        n = 0
        found: list[MeasureResult] = []
        for r in sorted((r for r in results if r.ok), key=lambda r: r.latency):
            if best is not None and r.latency >= best.latency:
                break
            again = self._retime(r, known, run_id, task_id, target_id)
            n += len(again)
            c = confirmed(again)
            if c is not None:
                found.append(c)
                if best is None or c.latency < best.latency:
                    best = c
        return best, n, found

    def _retime(self, result: MeasureResult, known: dict[str, MeasureResult], run_id: int,
                task_id: int, target_id: int) -> list[MeasureResult]:
        """Time ``result``'s config ``confirm`` times more, one measurement each, and store
        them in the run (where they read as its re-timings). They go to the measurer as one
        batch of the same config, which a measurer may build once (``local`` does)."""
        again = self._measure([result.config] * self.options.confirm, run_id, task_id,
                              target_id)
        _keep_fastest(known, again)
        return again

    def _measure(self, configs: Sequence[Config], run_id: int, task_id: int,
                 target_id: int) -> list[MeasureResult]:
        """Measure ``configs`` (one result each, in order) and store the results in the run."""
        results = self.measurer.measure(self.space, self.target, list(configs))
        if len(results) != len(configs):
            raise OrchestratorError(
                f"{owner_name('measurer', self.options.measurer)} returned {len(results)} "
                f"results for {len(configs)} configs")
        self.store.record(run_id=run_id, task_id=task_id, target_id=target_id, results=results,
                          template=self.space.template)
        return results

    def _evaluate(self, proposals: Sequence[Config], known: dict[str, MeasureResult],
                  run_id: int, task_id: int, target_id: int) -> list[tuple[MeasureResult, bool]]:
        """Results in proposal order, each flagged True when answered from history."""
        out: list[tuple[MeasureResult, bool] | None] = [None] * len(proposals)
        to_measure: list[tuple[int, Config]] = []
        invalid: list[MeasureResult] = []
        for i, cfg in enumerate(proposals):
            if cfg.key in known:
                out[i] = (known[cfg.key], True)
                continue
            reason = self.space.validate(cfg)
            if reason:
                r = MeasureResult(cfg, MeasureStatus.INVALID_CONFIG, error=reason,
                                  measurer=self.measurer_name)
                invalid.append(r)
                out[i] = (r, False)
            else:
                to_measure.append((i, cfg))
        if invalid:
            self.store.record(run_id=run_id, task_id=task_id, target_id=target_id,
                              results=invalid, template=self.space.template)
        self.store.add_reused(run_id, sum(1 for x in out if x is not None and x[1]))
        if to_measure:
            results = self._measure([c for _, c in to_measure], run_id, task_id, target_id)
            for (i, _), r in zip(to_measure, results):
                out[i] = (r, False)
        done = [x for x in out if x is not None]
        _keep_fastest(known, [r for r, _ in done])
        return done


def _counts(measurer: Any) -> dict[str, int]:
    return dict(getattr(measurer, "counts", None) or {})


def _counts_since(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What a measurer counted during one task (a shared measurer's counts run on)."""
    return {k: v - before.get(k, 0) for k, v in after.items()}


def _keep_fastest(known: dict[str, MeasureResult], results: Iterable[MeasureResult]) -> None:
    """Remember each config's fastest result in ``known`` (a failure only where none is)."""
    for r in results:
        if r.config.key not in known or r.latency < known[r.config.key].latency:
            known[r.config.key] = r


def _covers(known: dict[str, MeasureResult], space: Space) -> bool:
    """Whether every config of ``space`` has a result in ``known``."""
    return len(known) >= space.size and all(c.key in known for c in space)


def _unique(configs: Iterable[Config]) -> list[Config]:
    seen: set[str] = set()
    out = []
    for c in configs:
        if c.key not in seen:
            seen.add(c.key)
            out.append(c)
    return out
