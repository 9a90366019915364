"""Every hookspec exercised through a registered plugin and a real tuning loop."""

from __future__ import annotations

import inspect

from orchestrator import hookspecs
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import tune
from orchestrator.manager import load_plugins
from orchestrator.testing import toy_space


class EveryHook:
    """A plugin implementing all five registration hooks and the three observer hooks."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.fitted = 0

    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        outer = self

        class Gen:
            def supports(self, task, target):
                return True

            def generate(self, task, target):
                outer.events.append("generate")
                return toy_space(task)

        registry.add("every-space", Gen)

    @hookimpl
    def orchestrator_add_pruners(self, registry):
        outer = self

        class OnlyUnroll16:
            def prune(self, space, target):
                outer.events.append("prune")
                return space.with_check(lambda c: None if c["unroll"] == 16 else "pruned", "u16")

        registry.add("every-pruner", OnlyUnroll16)

    @hookimpl
    def orchestrator_add_cost_models(self, registry):
        outer = self

        class Model:
            def fit(self, space, results):
                outer.fitted += 1

            def predict(self, space, configs):
                return [0.0] * len(configs)

        registry.add("every-model", Model)

    @hookimpl
    def orchestrator_add_searchers(self, registry):
        class FirstN:
            """Proposes configs in space order, ranked by the cost model."""

            def start(self, context):
                self.it = iter(context.space)
                self.model, self.space = context.cost_model, context.space

            def propose(self, n):
                configs = [c for _, c in zip(range(n), self.it)]
                assert len(self.model.predict(self.space, configs)) == len(configs)
                return configs

            def tell(self, results):
                pass

        registry.add("every-searcher", FirstN)

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        from orchestrator.testing import ReplayMeasurer, toy_results
        registry.add("every-measurer", lambda: ReplayMeasurer(results=toy_results()))

    @hookimpl
    def orchestrator_task_started(self, run):
        self.events.append(f"started {run.space_generator} {run.searcher}")

    @hookimpl
    def orchestrator_results_measured(self, run, results, trials_done, best):
        self.events.append(f"measured {len(results)} {trials_done} {best is not None}")

    @hookimpl
    def orchestrator_task_finished(self, run, summary):
        self.events.append(f"finished {summary.trials} {summary.stop_reason}")


def test_every_hookspec_is_called_through_a_registered_plugin(db, toy_target):
    plugin = EveryHook()
    plugins = load_plugins(extra=[("every", plugin)], autoload=False)
    tune(toy_space().task, target=toy_target, db=db, plugins=plugins,
         space_generator="every-space", pruners=("every-pruner",),
         cost_model="every-model", searcher="every-searcher",
         measurer="every-measurer", trials=10, batch_size=4)
    assert plugin.events == ["generate", "prune", "started every-space every-searcher",
                             "measured 4 4 True", "measured 4 8 True", "measured 2 10 True",
                             "finished 10 trials"]
    assert plugin.fitted == 3
    assert all(r.config["unroll"] == 16 for r in db.results(1, 1))


def test_every_hookspec_is_documented_and_prefixed():
    specs = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
             if name.startswith("orchestrator_")]
    assert len(specs) == 9
    for f in specs:
        doc = f.__doc__ or ""
        assert "Called" in doc and "implementations are called" in doc, f.__name__
