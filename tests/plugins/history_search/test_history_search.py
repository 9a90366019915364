"""auto (dispatch both ways), fallback (one adapted history config) and ga (DEAP GA)."""

from __future__ import annotations

import functools
import logging
import random

import pytest

from history.similarity import candidate_configs, rank_history
from orchestrator.errors import OptionError, OrchestratorError
from orchestrator.hookspecs import hookimpl
from orchestrator.loop import tune
from orchestrator.manager import load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config
from orchestrator.testing import TOY_TASK, SearcherConformance, toy_latency, toy_results, toy_space
from plugins.gga.searcher import GuidedGA
from plugins.history_search.auto import DEFAULT_THRESHOLD, AutoSearch
from plugins.history_search.fallback import FallbackSearch
from plugins.history_search.ga import GeneticSearch
from plugins.tl.searcher import TransferSearcher, XGBSearcher
from tests.plugins.gga.fake_history import FAR, NEAR, context, toy_history

TL_FAST = {"plan_size": 16, "sa_chains": 16, "sa_iters": 30, "rounds": 10}


class TestAutoConformance(SearcherConformance):
    def create_searcher(self):
        return AutoSearch(tl=TL_FAST)


class TestFallbackConformance(SearcherConformance):
    def create_searcher(self):
        return FallbackSearch()


class TestGAConformance(SearcherConformance):
    def create_searcher(self):
        return GeneticSearch(population=16)


def test_auto_runs_gga_when_history_matches_the_task():
    s = AutoSearch(tl=TL_FAST)
    s.start(context(toy_history(NEAR)))
    assert s.match == 1.0 and s.chosen == "gga" and isinstance(s.delegate, GuidedGA)
    assert s.propose(4)


def test_auto_passes_confirmed_results_to_gga_and_not_to_tl():
    s = AutoSearch(tl=TL_FAST)
    s.start(context(toy_history(NEAR)))
    first = s.propose(4)
    s.tell([MeasureResult(c, MeasureStatus.OK, (toy_latency(c),)) for c in first])
    s.tell_confirmed([MeasureResult(first[0], MeasureStatus.OK, (10.0,))])
    assert s.delegate.perf[first[0].key] == pytest.approx(0.1)
    s = AutoSearch(tl={**TL_FAST, "filter": False})
    s.start(context(toy_history(FAR)))
    assert not hasattr(s.delegate, "tell_confirmed")
    s.tell_confirmed([MeasureResult(first[0], MeasureStatus.OK, (10.0,))])  # not passed on


def test_auto_runs_tl_when_history_does_not_match():
    s = AutoSearch(tl={**TL_FAST, "filter": False})
    s.start(context(toy_history(FAR)))
    assert s.match == 0.5 < DEFAULT_THRESHOLD and s.chosen == "tl"
    assert isinstance(s.delegate, TransferSearcher) and s.delegate.filter is False
    assert s.propose(4)


def test_auto_threshold_is_an_option_and_own_results_count_as_a_full_match():
    s = AutoSearch(threshold=0.4, tl=TL_FAST)
    s.start(context(toy_history(FAR)))
    assert s.chosen == "gga"
    s = AutoSearch(tl=TL_FAST)
    s.start(context(None, prior=tuple(toy_results(n=5))))
    assert s.match == 1.0 and s.chosen == "gga"
    assert s.note == "auto ran gga: the task has results of its own"
    s = AutoSearch(tl=TL_FAST)
    s.start(context(None))
    assert s.match == 0.0 and s.chosen == "tl"
    with pytest.raises(OrchestratorError):
        AutoSearch(gga="population=4")


@pytest.mark.parametrize("options,message", [
    ({"threshold": 1.5},
     r"^searcher 'auto': option threshold must be within \[0.0, 1.0\], got 1.5$"),
    ({"threshold": -0.1}, "threshold must be within"),
    ({"gga": {"popsize": 4}}, "^searcher 'auto': gga: unknown option 'popsize'; known: climb,"),
    ({"gga": {"population": 1}}, "^searcher 'gga': option population must be >= 2, got 1$"),
    ({"tl": {"keep": "most"}}, "^searcher 'auto': tl: option keep takes a number, got 'most'$"),
    ({"tl": {"rounds": 0}}, "^searcher 'tl': option rounds must be >= 1"),
])
def test_auto_checks_its_own_and_its_delegates_options_before_any_history_is_read(options,
                                                                                 message):
    with pytest.raises(OptionError, match=message):
        AutoSearch(**options)


def test_auto_passes_text_options_on_converted():
    s = AutoSearch(gga={"population": "8", "refit": "yes"}, tl={"filter": "off"})
    assert s.gga_options == {"population": 8, "refit": True}
    assert s.tl_options == {"filter": False}


@pytest.mark.parametrize("options,message", [
    ({"population": 1}, r"^searcher 'ga': option population must be >= 2, got 1$"),
    ({"population": 8, "elite": 8},
     r"^searcher 'ga': option elite must be within \[0, 7\], got 8$"),
    ({"mutation_prob": "often"},
     r"^searcher 'ga': option mutation_prob takes a number, got 'often'$"),
])
def test_ga_options_are_one_line_errors_naming_them(options, message):
    with pytest.raises(OptionError, match=message):
        GeneticSearch(**options)
    assert GeneticSearch(population="8", elite="2").elite == 2  # as from the command line


def test_fallback_omega_must_not_be_negative():
    with pytest.raises(OptionError, match="^searcher 'fallback': option omega must be >= 0"):
        FallbackSearch(omega=-1)


def test_fallback_applies_the_best_adapted_history_config_then_stops():
    history = toy_history([*NEAR, *FAR])
    s = FallbackSearch()
    s.start(context(history))
    best = candidate_configs(rank_history(history, toy_space()), toy_space(), 1)[0]
    assert s.propose(8) == [best[0]] and s.source.task in NEAR
    assert s.propose(8) == []


def test_fallback_skips_a_config_already_measured():
    history = toy_history(NEAR)
    first = candidate_configs(rank_history(history, toy_space()), toy_space(), 2)
    s = FallbackSearch()
    prior = tuple(r for r in toy_results() if r.config == first[0][0])
    s.start(context(history, prior=prior))
    assert s.propose(1) == [first[1][0]]


def test_fallback_says_so_when_it_has_nothing_to_apply(caplog):
    s = FallbackSearch()
    with caplog.at_level(logging.WARNING, logger="plugins.history_search.fallback"):
        s.start(context(None, prior=tuple(toy_results(n=3))))
    assert s.propose(8) == []
    [record] = caplog.records
    assert "nothing to apply" in record.getMessage() and "history best" in record.getMessage()


def test_ga_leaves_the_global_random_state_alone():
    random.seed(123)
    expected = random.random()
    random.seed(123)
    s = GeneticSearch(population=8)
    s.start(context(None))
    for _ in range(3):
        s.tell([MeasureResult(c, MeasureStatus.OK, (toy_latency(c),)) for c in s.propose(8)])
    assert random.random() == expected


class _SyntheticMeasurer:
    """Toy latencies for configs of any toy task (the replay fixture knows one task)."""

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        class Measurer:
            def measure(self, space, target, configs):
                return [MeasureResult(c, MeasureStatus.OK, (toy_latency(c),)) for c in configs]

            def close(self):
                pass

        registry.add("synthetic", Measurer)


def test_history_searchers_through_the_loop_with_a_real_history(toy_plugin, db, toy_target):
    plugins = load_plugins(extra=[("toy", toy_plugin), ("synthetic", _SyntheticMeasurer())],
                           autoload=False)
    for task in NEAR:
        tune(task, target=toy_target, db=db, plugins=plugins, measurer="synthetic",
             space_generator="toy", searcher="random", trials=24)
    for searcher, opts in (("gga", {}), ("auto", {"tl": TL_FAST}), ("fallback", {})):
        s = tune(TOY_TASK, target=toy_target, db=db, plugins=plugins, measurer="synthetic",
                 space_generator="toy", searcher=searcher, searcher_options=opts, trials=20,
                 seed=1)
        assert s.best is not None and s.trials == (1 if searcher == "fallback" else 20)


@functools.lru_cache(maxsize=1)
def _stale_prior() -> tuple[MeasureResult, ...]:
    results = toy_results()
    rng = random.Random(4)
    stale = [MeasureResult(Config.of({**r.config.to_dict(), "tile_k": (3, 21)}), MeasureStatus.OK,
                           (toy_latency(r.config) / 2,)) for r in rng.sample(results, 40)]
    return tuple(stale) + tuple(rng.sample(results, 20))


@pytest.mark.parametrize("make", [
    lambda: GuidedGA(), lambda: TransferSearcher(**TL_FAST), lambda: XGBSearcher(**TL_FAST),
    lambda: GeneticSearch(population=8), lambda: FallbackSearch(), lambda: AutoSearch(tl=TL_FAST),
], ids=["gga", "tl", "xgb", "ga", "fallback", "auto"])
def test_prior_results_from_an_older_version_of_the_space_are_tolerated(make):
    # A template change can leave configs in history that the space no longer offers.
    s = make()
    s.start(context(toy_history(NEAR), prior=_stale_prior()))
    for _ in range(3):
        configs = s.propose(8)
        assert all(toy_space().validate(c) is None for c in configs)
        s.tell([MeasureResult(c, MeasureStatus.OK, (toy_latency(c),)) for c in configs])
