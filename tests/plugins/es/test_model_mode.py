"""With a cost model, the population searchers evolve on predictions and propose the best."""

from __future__ import annotations

from orchestrator.testing import toy_latency
from plugins.es.deap_ga import DeapGA
from plugins.es.tuna_es import TunaES
from tests.plugins.es.helpers import ToyModel, context, random_search_best, run


def test_model_guided_tuna_es_finds_the_optimum_in_the_first_batches() -> None:
    # The toy model is exact, so a few batches should reach the landscape's minimum
    # (1e-4) that random search rarely finds in 16 trials.
    for seed in range(3):
        results = run(TunaES(), 16, seed=seed, cost_model=ToyModel())
        assert min(r.latency for r in results) <= 1.05e-4
        assert random_search_best(16, seed) > 1.05e-4


def test_proposals_are_the_best_predicted_unseen_configs_in_order() -> None:
    searcher = TunaES()
    searcher.start(context(seed=1, cost_model=ToyModel()))
    latencies = [toy_latency(c) for c in searcher.propose(8)]
    assert latencies == sorted(latencies)


def test_parallel_evaluation_matches_serial_evaluation() -> None:
    serial, parallel = ToyModel(), ToyModel()
    a = [r.config.key for r in run(TunaES(workers=1), 24, seed=5, cost_model=serial)]
    b = [r.config.key for r in run(TunaES(workers=3), 24, seed=5, cost_model=parallel)]
    assert a == b
    assert len(parallel.threads) > 1 and serial.threads == {"MainThread"}
    assert sum(parallel.calls) == sum(serial.calls)


def test_use_model_false_ignores_the_model() -> None:
    model = ToyModel()
    run(DeapGA(use_model="false"), 16, cost_model=model)
    assert model.calls == []
