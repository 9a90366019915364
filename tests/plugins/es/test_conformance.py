"""Every searcher of the plugin passes the searcher conformance suite, with and without a model."""

from __future__ import annotations

from typing import Any

from orchestrator.testing import SearcherConformance
from plugins.es.cmaes_search import CmaEs
from plugins.es.deap_es import DeapES
from plugins.es.deap_ga import DeapGA
from plugins.es.tuna_es import TunaES
from tests.plugins.es.helpers import ToyModel, WithModel


class TestTunaES(SearcherConformance):
    def create_searcher(self) -> Any:
        return TunaES()


class TestTunaESOnCostModel(SearcherConformance):
    def create_searcher(self) -> Any:
        return WithModel(TunaES(workers=2), ToyModel())


class TestCmaEs(SearcherConformance):
    def create_searcher(self) -> Any:
        return CmaEs()


class TestDeapGA(SearcherConformance):
    def create_searcher(self) -> Any:
        return DeapGA()


class TestDeapGAOnCostModel(SearcherConformance):
    def create_searcher(self) -> Any:
        return WithModel(DeapGA(), ToyModel())


class TestDeapES(SearcherConformance):
    def create_searcher(self) -> Any:
        return DeapES()


class TestDeapESComma(SearcherConformance):
    def create_searcher(self) -> Any:
        return DeapES(mode="comma", mu=4, lambda_=8)
