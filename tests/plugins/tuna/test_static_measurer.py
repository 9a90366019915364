"""The ``static`` measurer end to end through the tuning loop, and --verify-top."""

from __future__ import annotations

import dataclasses

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import tune
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Config
from orchestrator.testing import ReplayMeasurer
import plugins.tuna
from plugins.tuna import features
from plugins.tuna.measurer import StaticMeasurer
from plugins.tuna.verify import top_static, verify_top
from tests.plugins.tuna.helpers import ZNVER4, config, dense_task, space

TASK = dense_task(32, 32, 32)


class SpacePlugin:
    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        class Gen:
            def supports(self, task, target):
                return task.op == "dense"

            def generate(self, task, target):
                return space(task)

        registry.add("tuna-test", Gen)


def test_tunes_end_to_end_without_hardware(db, tmp_path):
    # The tuna plugin under another name, so this works whether or not it is installed.
    loaded = load_plugins(extra=[("tuna-under-test", plugins.tuna), ("space", SpacePlugin())],
                          autoload=False, block=["tuna"])
    summary = tune(TASK, target=ZNVER4, db=db, plugins=loaded, searcher="grid",
                   measurer="static", space_generator="tuna-test", trials=12, batch_size=12,
                   measurer_options={"workers": 2, "cache_dir": str(tmp_path)})
    assert summary.trials == 12
    assert summary.statuses == {"ok": 4, "invalid_config": 4, "build_error": 4}
    task_id, target_id = db.find_task(TASK), db.find_target(ZNVER4)
    stored = db.results(task_id, target_id)
    assert {r.measurer for r in stored} == {"static"}
    ok = [r for r in stored if r.ok]
    assert all(len(r.latencies) == 1 and 0 < r.latency < 1 for r in ok)
    errors = [r for r in stored if r.status is MeasureStatus.BUILD_ERROR]
    assert all("meaningful last line" in r.error for r in errors)
    assert summary.best is not None and summary.best.measurer == "static"


def test_results_are_cached_per_config(tmp_path):
    sp = space(TASK)
    first = StaticMeasurer(workers=0, cache_dir=tmp_path)
    a = first.measure(sp, ZNVER4, [config()])
    assert first.scorer.engine.analyzed == 1
    second = StaticMeasurer(workers=0, cache_dir=tmp_path)  # a new process, same cache
    b = second.measure(sp, ZNVER4, [config(), config()])
    assert second.scorer.engine.analyzed == 0
    assert a[0].latency == b[0].latency == b[1].latency


def test_verify_top_measures_the_best_static_configs_for_real():
    sp = space(TASK)
    static = [MeasureResult(config(vec="yes"), MeasureStatus.OK, (1e-5,), measurer="static"),
              MeasureResult(config(vec="no"), MeasureStatus.OK, (3e-5,), measurer="static"),
              MeasureResult(config(vec="yes", par="yes"), MeasureStatus.OK, (2e-5,),
                            measurer="static"),
              MeasureResult(config(mode="error"), MeasureStatus.BUILD_ERROR, measurer="static")]
    assert top_static(static, 2) == [config(vec="yes"), config(vec="yes", par="yes")]
    truth = [MeasureResult(r.config, MeasureStatus.OK, (t,), measurer="local")
             for r, t in zip(static[:3], (5e-3, 1e-3, 2e-3))]
    real = ReplayMeasurer(results=truth)
    got = verify_top(sp, ZNVER4, static, 2, measurer=real)
    assert [r.config for r in got] == [config(vec="yes"), config(vec="yes", par="yes")]
    assert all(r.measurer == "replay" for r in got) and real.calls == 2
    # A config already measured for real is not measured again.
    again = verify_top(sp, ZNVER4, static + got, 2, measurer=real)
    assert again == [] and real.calls == 2


def test_verify_top_skips_configs_that_compile_to_the_same_kernel():
    # "spare" is a knob the schedule ignores: its two values lower to the same TIR.
    base = space(TASK)
    sp = dataclasses.replace(base, knobs=(*base.knobs, ChoiceKnob("spare", ("a", "b"))))

    def cfg(vec: str, spare: str) -> Config:
        return Config.of({**config(vec=vec).to_dict(), "spare": spare})

    static = [MeasureResult(cfg("yes", "a"), MeasureStatus.OK, (1e-5,), measurer="static"),
              MeasureResult(cfg("yes", "b"), MeasureStatus.OK, (1.5e-5,), measurer="static"),
              MeasureResult(cfg("no", "a"), MeasureStatus.OK, (3e-5,), measurer="static")]
    assert top_static(static, 2) == [cfg("yes", "a"), cfg("yes", "b")]
    truth = [MeasureResult(r.config, MeasureStatus.OK, (1e-3,), measurer="local")
             for r in static]
    real = ReplayMeasurer(results=truth)
    got = verify_top(sp, ZNVER4, static, 2, measurer=real)
    assert [r.config for r in got] == [cfg("yes", "a"), cfg("no", "a")]


def test_opt_level_generates_the_analyzed_code_at_that_llvm_level(tmp_path, monkeypatch):
    levels: list[str | None] = []
    real = features.codegen

    def spy(lowered, tvm_target):
        levels.append(tvm_target.attrs.get("opt-level"))
        return real(lowered, tvm_target)

    monkeypatch.setattr(features, "codegen", spy)
    sp = space(TASK)
    default = StaticMeasurer(workers=0, cache_dir=tmp_path)
    o2 = StaticMeasurer(workers=0, cache_dir=tmp_path, opt_level=2)
    a = default.measure(sp, ZNVER4, [config()])
    b = o2.measure(sp, ZNVER4, [config()])
    # the default leaves TVM's target alone; the option sets LLVM's level
    assert levels[0] is None and int(levels[1]) == 2
    # each level has its own cache entry: the second measurer analyzed, not reused
    assert o2.scorer.engine.analyzed == 1
    assert a[0].ok and b[0].ok and b[0].latency > 0
    again = StaticMeasurer(workers=0, cache_dir=tmp_path, opt_level=2)
    assert again.measure(sp, ZNVER4, [config()])[0].latency == b[0].latency
    assert again.scorer.engine.analyzed == 0


def test_an_unknown_opt_level_is_a_one_line_error():
    with pytest.raises(OrchestratorError, match=r"opt_level 'fast' is not an LLVM optimization "
                                                r"level; use one of 0, 1, 2, 3") as err:
        StaticMeasurer(workers=0, opt_level="fast")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("options, message", [
    ({"workers": 1.5}, "^measurer 'static': option workers takes a whole number, got 1.5$"),
    ({"workers": -1}, "^measurer 'static': option workers must be >= 0, got -1$"),
    ({"timeout": 0}, "^measurer 'static': option timeout must be > 0.0, got 0.0$"),
    ({"timeout": "soon"}, "option timeout takes a number, got 'soon'$"),
    ({"opt_level": 7}, "^measurer 'static': opt_level 7 is not an LLVM optimization level"),
    ({"opt_level": 2.5}, "opt_level 2.5 is not an LLVM optimization level"),
    ({"opt_level": True}, "opt_level True is not an LLVM optimization level"),
    ({"worker": 2}, "^measurer 'static': unknown option 'worker'; known: cache_dir, "),
])
def test_options_are_checked_not_truncated(options, message):
    with pytest.raises(OrchestratorError, match=message) as err:
        StaticMeasurer(**options)
    assert "\n" not in str(err.value)


def test_the_cost_model_names_itself_in_option_errors():
    from plugins.tuna.cost_model import TunaCostModel
    with pytest.raises(OrchestratorError, match="^cost model 'tuna': option workers must be >= 0"):
        TunaCostModel(workers=-2)
    made = StaticMeasurer(workers="0", timeout="5", opt_level="2")
    assert made.scorer.engine.timeout == 5.0 and made.scorer.engine.opt_level == 2
