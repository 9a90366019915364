"""Searcher options arrive as keywords, possibly strings from ``--searcher-opt``."""

from __future__ import annotations

import pytest

from orchestrator.errors import OptionError
from orchestrator.manager import load_plugins
from orchestrator.options import describe_options
from plugins.es.cmaes_search import CmaEs
from plugins.es.deap_es import DeapES
from plugins.es.deap_ga import DeapGA
from plugins.es.tuna_es import TunaES


def test_plugin_registers_the_four_searchers() -> None:
    plugins = load_plugins(autoload=False)
    names = {name for kind, name in plugins.components_of("es") if kind == "searcher"}
    assert names == {"tuna-es", "cmaes", "deap-ga", "deap-es"}


def test_string_options_are_parsed() -> None:
    es = load_plugins(autoload=False).create(
        "searcher", "tuna-es", lr="0.1", sigma="0.2", population="10", use_model="false",
        model_generations="3", workers="2")
    assert (es.lr, es.sigma, es.population) == (0.1, 0.2, 10)
    assert (es.use_model, es.model_generations, es.workers) == (False, 3, 2)
    ga = DeapGA(population="20", cxpb="0.5", mutpb="0.5", tournament="2")
    assert (ga.population, ga.cxpb, ga.mutpb, ga.tournament) == (20, 0.5, 0.5, 2)
    des = DeapES(mu="3", mode="COMMA", sigma="0.1", **{"lambda": "9"})
    assert (des.mu, des.lambda_, des.plus, des.sigma) == (3, 9, False, 0.1)
    assert CmaEs(popsize="12").popsize == 12


def test_json_numbers_are_accepted_too() -> None:
    es = TunaES(lr=0.05, population=8.0)
    assert es.lr == 0.05 and es.population == 8


@pytest.mark.parametrize(("factory", "options", "message"), [
    (TunaES, {"lr": "fast"}, "searcher 'tuna-es': option lr takes a number, got 'fast'"),
    (TunaES, {"sigma": "0"}, "searcher 'tuna-es': option sigma must be > 0.0"),
    (TunaES, {"population": "2.5"}, "option population takes a whole number, got '2.5'"),
    (TunaES, {"use_model": "maybe"}, "option use_model must be true or false"),
    (TunaES, {"learning_rate": "0.1"}, "unknown option 'learning_rate'; known: lr, "),
    (CmaEs, {"popsize": "1"}, "searcher 'cmaes': option popsize must be >= 2, got 1"),
    (CmaEs, {"sigma0": "1"}, "searcher 'cmaes': unknown option 'sigma0'; known: popsize"),
    (DeapGA, {"cxpb": "1.5"}, "option cxpb must be within [0.0, 1.0], got 1.5"),
    (DeapES, {"mode": "both"}, "option mode must be one of plus, comma, got 'both'"),
    (DeapES, {"cxpb": "0.6", "mutpb": "0.6"}, "cxpb + mutpb must be at most 1, got 0.6 + 0.6"),
    (DeapES, {"mode": "comma", "mu": "8", "lambda_": "4"}, "lambda >= mu, got lambda 4 and mu 8"),
    (DeapES, {"lamda": "4"}, "searcher 'deap-es': unknown option 'lamda'; known: cxpb, lambda, "),
])
def test_bad_options_fail_with_one_clear_line(factory: type, options: dict, message: str) -> None:
    """Made as the command line makes them: through the registry, which checks the
    options against the signature first."""
    with pytest.raises(OptionError) as info:
        load_plugins(autoload=False).create("searcher", factory.name, **options)
    assert message in str(info.value)


def test_plugins_show_lists_the_options_with_their_kinds() -> None:
    rows = {name: takes for name, takes, _ in describe_options(DeapES)[0]}
    assert rows["mu"] == "a whole number" and rows["sigma"] == "a number"
    assert rows["mode"] == "text" and rows["use_model"] == "true or false"
    assert describe_options(CmaEs) == ([("popsize", "a whole number or null", "null")], False)
