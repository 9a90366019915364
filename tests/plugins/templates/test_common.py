"""plugins/templates/common.py: the samplability test a template's space must pass."""

from __future__ import annotations

import math
import random

from orchestrator.space import ChoiceKnob, Space
from orchestrator.task import Task
from plugins.templates.common import MIN_ACCEPTANCE, samplable

TASK = Task.create("dense", {"M": 8, "N": 8, "K": 8})


def large_space(accept: float, calls: list[int]) -> Space:
    """A space of 40^3 configs whose check passes about ``accept`` of them (by a hash of
    the config), counting its calls in ``calls``."""
    def check(cfg):
        calls[0] += 1
        return None if random.Random(cfg.key).random() < accept else "rejected"

    knobs = tuple(ChoiceKnob(n, tuple(range(40))) for n in ("a", "b", "c"))
    return Space(TASK, "toy", knobs, "orchestrator.testing.toy:no_schedule", check=check)


def exhaustive(space: Space, draws: int) -> bool:
    """The answer after every draw, as samplable gave it before it stopped early."""
    rng = random.Random(0)
    passed = sum(space.check(space.config_at([rng.randrange(n) for n in space.knob_sizes]))
                 is None for _ in range(draws))
    return passed >= MIN_ACCEPTANCE * draws


def test_samplable_stops_once_the_answer_is_known_and_gives_the_same_answer():
    for accept in (0.0, 0.005, 0.015, 0.02, 0.025, 0.05, 0.3, 1.0):
        calls = [0]
        space = large_space(accept, calls)
        got = samplable(space, 3000)
        assert got == exhaustive(large_space(accept, [0]), 3000), accept
        assert calls[0] <= 3000
        if accept >= 0.3:  # usual acceptance: a small share of the draws
            assert got and calls[0] < 3000 * 4 * MIN_ACCEPTANCE / accept
        if accept == 0.0:  # nothing passes: stops once 60 can no longer be reached
            assert not got and calls[0] == 3000 - math.ceil(MIN_ACCEPTANCE * 3000) + 1


def test_a_small_space_needs_one_valid_config_and_no_check_needs_nothing():
    knobs = (ChoiceKnob("a", (1, 2, 3)),)
    schedule = "orchestrator.testing.toy:no_schedule"
    assert samplable(Space(TASK, "toy", knobs, schedule, check=lambda c: None if c["a"] == 3
                           else "no"), 3000)
    assert not samplable(Space(TASK, "toy", knobs, schedule, check=lambda c: "no"), 3000)
    assert samplable(Space(TASK, "toy", knobs, schedule), 3000)
