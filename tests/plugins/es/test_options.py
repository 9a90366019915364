"""Searcher options arrive as keywords, possibly strings from ``--searcher-opt``."""

from __future__ import annotations

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.manager import load_plugins
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
    (TunaES, {"lr": "fast"}, "lr must be a number"),
    (TunaES, {"sigma": "0"}, "sigma must be in"),
    (TunaES, {"population": "2.5"}, "population must be an integer"),
    (TunaES, {"use_model": "maybe"}, "use_model must be true or false"),
    (TunaES, {"learning_rate": "0.1"}, "unknown option(s) learning_rate"),
    (CmaEs, {"popsize": "1"}, "popsize must be an integer >= 2"),
    (CmaEs, {"sigma0": "1"}, "unknown option(s) sigma0"),
    (DeapGA, {"cxpb": "1.5"}, "cxpb must be in"),
    (DeapES, {"mode": "both"}, "mode must be one of plus, comma"),
    (DeapES, {"cxpb": "0.6", "mutpb": "0.6"}, "cxpb + mutpb"),
    (DeapES, {"mode": "comma", "mu": "8", "lambda_": "4"}, "lambda >= mu"),
])
def test_bad_options_fail_with_one_clear_line(factory: type, options: dict, message: str) -> None:
    with pytest.raises(OrchestratorError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        factory(**options)
