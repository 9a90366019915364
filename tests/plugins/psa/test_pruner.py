"""The psa pruner and cost model on a synthetic CUDA space whose plans are known.

The space's plan function (``synthetic_plan`` below) turns four knobs into penalties on
an H100 (132 SMs; 200 KiB of shared memory per block, so one block per SM: B* = 132):

- ``threads``: 64 (aligned), 48 (P_warp 0.75), 128 (rejected by ``check``), 2048 (no
  block fits: dropped);
- ``grid``: 264 blocks (2 full waves) or 277 (2.1 waves, P_kernel 277/396);
- ``run``: 128-byte load runs or 12 (P_mem 0.375);
- ``regs``: 64 or 300 (P_reg 300/255).

The only config with no penalty is threads 64, grid 264, run 128, regs 64.
"""

from __future__ import annotations

import math

import pytest

import plugins.psa
from orchestrator.errors import OrchestratorError
from orchestrator.gpus import resolve_gpu_target
from orchestrator.kernel_plan import KernelPlan
from orchestrator.manager import Plugins, load_plugins
from orchestrator.space import ChoiceKnob, Config, Space
from orchestrator.task import Task
from orchestrator.testing import toy_space
from plugins.psa.cost_model import FAILED_SCORE, PsaCostModel
from plugins.psa.pruner import PsaPruner, uniform_sample

H100 = resolve_gpu_target("cuda:h100")
TASK = Task.create("dense", {"M": 256, "K": 256, "N": 256}, name="synthetic")
BEST = Config.of({"threads": 64, "grid": 264, "run": 128, "regs": 64})


def synthetic_plan(task: Task, config: Config, target: object) -> KernelPlan:
    """Fixed work (1 GFLOP, 100 MB loaded) launched as the knobs say."""
    return KernelPlan(grid_blocks=config["grid"], threads_per_block=config["threads"],
                      regs_per_thread=config["regs"], smem_bytes_per_block=200 * 1024,
                      flops=1e9, useful_flops=1e9, global_load_bytes=1e8,
                      global_store_bytes=1e6, smem_load_bytes=4e8,
                      load_run_bytes=config["run"], reduction_steps=8)


def synthetic_space() -> Space:
    knobs = (ChoiceKnob("threads", (64, 48, 128, 2048)), ChoiceKnob("grid", (264, 277)),
             ChoiceKnob("run", (128, 12)), ChoiceKnob("regs", (64, 300)))

    def check(cfg: Config) -> str | None:
        return "128 threads rejected" if cfg["threads"] == 128 else None

    return Space(TASK, "synthetic-cuda", knobs, "orchestrator.testing.toy:no_schedule",
                 check=check, plan_fn=f"{__name__}:synthetic_plan")


def _penalised(cfg: Config) -> int:
    """How many of the four knobs carry a penalty."""
    return ((cfg["threads"] != 64) + (cfg["grid"] != 264) + (cfg["run"] != 128)
            + (cfg["regs"] != 64))


def test_keeps_the_unpenalised_config_first() -> None:
    pruned = PsaPruner(size=1, explore=0.0).prune(synthetic_space(), H100)
    assert pruned.candidates == (BEST,)
    assert "psa" in pruned.notes[-1] and "16 launchable configs" in pruned.notes[-1]


def test_ranks_best_first_and_drops_rejected_and_unlaunchable_configs() -> None:
    pruned = PsaPruner(size=100, explore=0.0).prune(synthetic_space(), H100)
    cands = pruned.candidates
    assert len(cands) == 16                                   # 2 x 2 x 2 x 2 launchable
    assert all(c["threads"] in (64, 48) for c in cands)
    lat = PsaCostModel(target=H100).latencies(pruned, list(cands))
    assert lat == sorted(lat)
    # Memory dominates (1e8 B at 3.35 TB/s = 30 us against 17 us of compute): the
    # misaligned run (x 1/0.375) costs more than the three compute penalties together,
    # so the first 4 are BEST and its three one-compute-penalty neighbours.
    assert cands[0] == BEST
    assert {_penalised(c) for c in cands[1:4]} == {1}
    assert all(c["run"] == 128 for c in cands[:8]) and all(c["run"] == 12 for c in cands[8:])
    # adding a penalty never moves a config up
    rank = {c: i for i, c in enumerate(cands)}
    for c in cands:
        for d in cands:
            if all(c[k] == d[k] or c[k] == BEST[k] for k in ("threads", "grid", "run", "regs")) \
                    and c != d:
                assert rank[c] < rank[d]


def test_size_and_explore_share() -> None:
    pruned = PsaPruner(size=4, explore=0.5, seed=1).prune(synthetic_space(), H100)
    cands = pruned.candidates
    assert len(cands) == 4 + 2
    ranked = PsaPruner(size=100, explore=0.0).prune(synthetic_space(), H100).candidates
    assert cands[:4] == ranked[:4]
    assert set(cands[4:]) <= set(ranked[4:])
    assert len(set(cands)) == len(cands)


def test_seed_makes_the_explored_share_reproducible() -> None:
    space = synthetic_space()
    draws = {s: PsaPruner(size=2, explore=0.5, seed=s).prune(space, H100).candidates
             for s in range(8)}
    again = PsaPruner(size=2, explore=0.5, seed=3).prune(space, H100).candidates
    assert again == draws[3]
    assert len({d[2:] for d in draws.values()}) > 1       # other seeds draw other configs
    assert all(d[:2] == draws[0][:2] for d in draws.values())


def test_huge_space_is_sampled_and_says_so() -> None:
    pruner = PsaPruner(size=3, explore=0.0, max_enumerate=10, sample_size=12)
    pruned = pruner.prune(synthetic_space(), H100)
    assert len(pruned.candidates) == 3
    assert "uniform sample" in pruned.notes[-1] and "too large to enumerate" in pruned.notes[-1]


def test_uniform_sample_is_distinct_and_valid() -> None:
    import random

    space = synthetic_space()
    got = uniform_sample(space, 30, random.Random(0))
    assert len(got) == len(set(got)) == 24          # every config that passes check
    assert len(uniform_sample(space, 5, random.Random(0))) == 5
    assert all(space.validate(c) is None for c in got)


def test_space_without_kernel_plan_is_refused_in_one_line() -> None:
    with pytest.raises(OrchestratorError, match="needs a GPU space with a kernel plan") as exc:
        PsaPruner().prune(toy_space(), H100)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("options, message", [
    ({"size": 0}, r"^pruner 'psa': option size must be >= 1, got 0$"),
    ({"size": 2.5}, r"^pruner 'psa': option size takes a whole number, got 2.5$"),
    ({"explore": 1.5}, r"^pruner 'psa': option explore must be within \[0.0, 1.0\], got 1.5$"),
    ({"seed": -1}, "option seed must be >= 0, got -1$"),
    ({"sample_size": 0}, "option sample_size must be >= 1, got 0$"),
    ({"max_enumerate": "many"}, "option max_enumerate takes a whole number, got 'many'$"),
])
def test_options_are_checked(options, message) -> None:
    with pytest.raises(OrchestratorError, match=message):
        PsaPruner(**options)
    assert PsaPruner(size="3", explore="0.5").size == 3  # text from the command line


def test_cost_model_scores_minus_latency() -> None:
    model = PsaCostModel(target="cuda:h100")
    space = synthetic_space()
    model.fit(space, [])                                      # documented no-op
    bad = Config.of({"threads": 2048, "grid": 264, "run": 128, "regs": 64})
    worse = Config.of({"threads": 48, "grid": 264, "run": 128, "regs": 64})
    scores = model.predict(space, [BEST, worse, bad])
    seconds = model.latencies(space, [BEST, worse, bad])
    assert scores[0] == -seconds[0] and scores[0] > scores[1] > scores[2] == FAILED_SCORE
    assert math.isinf(seconds[2])
    assert model.predict(space, []) == []


def test_cost_model_without_a_gpu_asks_for_a_target(monkeypatch) -> None:
    import orchestrator.gpus

    monkeypatch.setattr(orchestrator.gpus, "local_gpu_names", lambda: [])
    with pytest.raises(OrchestratorError, match="target='cuda:<h100") as exc:
        PsaCostModel().predict(synthetic_space(), [BEST])
    assert "\n" not in str(exc.value)


def with_psa() -> Plugins:
    """The plugin set with psa: registered in code unless an entry point already has it
    (registering the module twice would be refused)."""
    found = load_plugins()
    if "psa" in found.registry("pruner"):
        return found
    return load_plugins(extra=[("psa", plugins.psa)])


def test_registered_through_the_plugin_manager() -> None:
    found = with_psa()
    assert found.info["psa"].module == "plugins.psa"
    space = synthetic_space()
    pruned = found.create("pruner", "psa").prune(space, H100)
    assert pruned.candidates[0] == BEST and len(pruned.candidates) == 16
    big = found.create("pruner", "psa-512")
    assert big.size == 512
    model = found.create("cost_model", "psa", target="cuda:h100")
    assert model.predict(space, [BEST])[0] < 0
