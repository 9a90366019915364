"""Options of pruners (by name) and of the space generator reach the components the loop
makes, are part of the resume key, and a wrong one fails before anything is recorded."""

from __future__ import annotations

import dataclasses

import pytest

from orchestrator.errors import OptionError, OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, tune
from orchestrator.manager import load_plugins
from orchestrator.testing import TOY_TASK, toy_space
from orchestrator.testing.conformance import TOY_TARGET


class _FirstN:
    """A pruner keeping the first ``n`` configs, and a space generator whose option
    ``stride`` keeps every stride-th config (both record what they were made with)."""

    made: list[tuple[str, dict]] = []

    @hookimpl
    def orchestrator_add_pruners(self, registry):
        made = self.made

        class FirstN:
            def __init__(self, *, n: int = 12) -> None:
                made.append(("first", {"n": n}))
                self.n = n

            def prune(self, space, target):
                return space.with_candidates(list(space)[:self.n], f"first {self.n}")
        registry.add("first", FirstN)
        registry.add("first-again", FirstN)

    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        made = self.made

        class Strided:
            def __init__(self, *, stride: int = 1) -> None:
                made.append(("strided", {"stride": stride}))
                self.stride = stride

            def supports(self, task, target):
                return target.arch == "toy"

            def generate(self, task, target):
                space = toy_space(task)
                kept = list(space)[::self.stride]
                return dataclasses.replace(space.with_candidates(kept, f"every {self.stride}"),
                                           generator="strided")
        registry.add("strided", Strided)


@pytest.fixture
def plugins(toy_plugin):
    _FirstN.made = []
    return load_plugins(extra=[("toy", toy_plugin), ("first", _FirstN())], autoload=False)


def run(plugins, db, target, **kw):
    kw.setdefault("measurer", "toy-replay")
    kw.setdefault("space_generator", "toy")
    kw.setdefault("searcher", "grid")
    kw.setdefault("trials", 10_000)
    return tune(TOY_TASK, target=target, db=db, plugins=plugins, **kw)


def test_pruner_options_reach_the_named_pruner_only(plugins, db, toy_target):
    s = run(plugins, db, toy_target, pruners=("first", "first-again"),
            pruner_options={"first": {"n": "7"}})  # text, as from the command line
    assert s.stop_reason == "space_exhausted" and s.trials == s.run.space.size == 7
    assert _FirstN.made == [("first", {"n": 7}), ("first", {"n": 12})]


def test_space_options_reach_the_named_space_generator(plugins, db, toy_target):
    whole = run(plugins, db, toy_target, space_generator="strided", trials=4)
    strided = run(plugins, db, toy_target, space_generator="strided", trials=4,
                  space_options={"stride": 3})
    assert _FirstN.made == [("strided", {"stride": 1}), ("strided", {"stride": 3})]
    assert strided.run.space.size == -(-whole.run.space.size // 3)
    assert strided.run.run_id != whole.run.run_id and strided.run.space_generator == "strided"


def test_options_are_in_the_resume_key_only_when_given():
    plain = TuneOptions(pruners=("first",)).resume_key(TOY_TASK, TOY_TARGET, "toy")
    assert "pruner_options" not in plain and "space_options" not in plain
    seven = TuneOptions(pruners=("first",), pruner_options={"first": {"n": 7}})
    three = TuneOptions(space_generator="toy", space_options={"stride": 3})
    assert '"pruner_options":{"first":{"n":7}}' in seven.resume_key(TOY_TASK, TOY_TARGET, "toy")
    assert '"space_options":{"stride":3}' in three.resume_key(TOY_TASK, TOY_TARGET, "toy")


def test_runs_with_other_pruner_options_do_not_resume_each_other(plugins, db, toy_target):
    a = run(plugins, db, toy_target, pruners=("first",), pruner_options={"first": {"n": 5}})
    b = run(plugins, db, toy_target, pruners=("first",), pruner_options={"first": {"n": 9}})
    again = run(plugins, db, toy_target, pruners=("first",), pruner_options={"first": {"n": 5}})
    assert a.run.run_id != b.run.run_id and again.run.run_id == a.run.run_id
    assert (a.run.space.size, b.run.space.size, again.measured) == (5, 9, 0)
    assert b.stop_reason == "space_exhausted"


@pytest.mark.parametrize("kw,error,needle", [
    ({"pruners": ("first",), "pruner_options": {"first": {"m": 1}}}, OptionError,
     "pruner 'first': unknown option 'm'; known: n"),
    ({"pruners": ("first",), "pruner_options": {"first": {"n": "many"}}}, OptionError,
     "pruner 'first': option n takes a whole number, got 'many'"),
    ({"pruner_options": {"first": {"n": 1}}}, OrchestratorError,
     "--pruner-opt names pruner 'first', which is not among --pruner (none given)"),
    ({"space_generator": None, "space_options": {"stride": 2}}, OrchestratorError,
     "--space-opt sets options of the space generator that --space names"),
    ({"space_generator": "strided", "space_options": {"step": 2}}, OptionError,
     "space generator 'strided': unknown option 'step'; known: stride"),
])
def test_wrong_options_fail_before_anything_is_recorded(plugins, db, toy_target, kw, error,
                                                        needle):
    with pytest.raises(error) as info:
        run(plugins, db, toy_target, **kw)
    assert needle in str(info.value)
    assert db.runs() == [] and _FirstN.made == []
