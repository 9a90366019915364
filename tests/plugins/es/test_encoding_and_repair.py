"""Knob encodings, repair of invalid vectors, and spaces that reject most vectors."""

from __future__ import annotations

import random

import numpy as np
import pytest

from orchestrator.space import Config
from orchestrator.testing import toy_space
from plugins.es.encoding import KnobEncoding
from plugins.es.repair import Repairer
from tests.plugins.es.helpers import SEARCHERS, run


def test_positions_and_unit_points_round_trip() -> None:
    space = toy_space()
    enc = KnobEncoding(space)
    assert enc.names == ("tile_m", "tile_n", "tile_k", "unroll")
    for cfg in random.Random(0).sample(list(space), 50):
        positions = enc.positions(cfg)
        assert enc.config(positions) == cfg
        assert enc.from_unit(enc.to_unit(positions)) == positions
    assert enc.from_unit([-3.0, 2.0, 0.0, 1.0]) == (0, 27, 0, 2)


def test_split_knobs_are_ordered_by_inner_factor_first() -> None:
    enc = KnobEncoding(toy_space())
    tile_n = toy_space().knob("tile_n")
    inner = [tile_n.choices[i][-1] for i in enc.orders[1]]
    assert inner == sorted(inner)


def test_single_choice_knobs_get_no_axis() -> None:
    from orchestrator.space import ChoiceKnob, Space
    from orchestrator.testing.toy import TOY_TASK

    space = Space(TOY_TASK, "t", (ChoiceKnob("a", (1,)), ChoiceKnob("b", (1, 2, 3))), "x:y")
    enc = KnobEncoding(space)
    assert enc.dim == 1 and enc.config((2,)) == Config.of({"a": 1, "b": 3})


def test_repair_finds_a_nearby_valid_config() -> None:
    space = toy_space()
    enc = KnobEncoding(space)
    repairer = Repairer(space, enc)
    # Largest inner tiles on both m and n: 64 * 64 > 256 is rejected by the check.
    bad = (27, 27, 3, 1)
    assert space.check(enc.config(bad)) is not None
    positions, cfg = repairer.repair(bad)
    assert space.validate(cfg) is None and enc.positions(cfg) == positions
    assert sum(a != b for a, b in zip(positions, bad)) == 1


def test_repair_maps_to_the_nearest_candidate_of_a_pruned_space() -> None:
    base = toy_space()
    keep = list(base)[::500]
    space = base.with_candidates(keep, "every 500th")
    enc = KnobEncoding(space)
    repairer = Repairer(space, enc)
    for positions in [(0, 0, 0, 0), (27, 27, 6, 2), (13, 5, 2, 1)]:
        fixed, cfg = repairer.repair(positions)
        assert cfg in keep
        distance = np.abs(enc.to_unit(fixed) - enc.to_unit(positions)).sum()
        assert all(np.abs(enc.to_unit(enc.positions(c)) - enc.to_unit(positions)).sum()
                   >= distance - 1e-12 for c in keep)


def test_repair_gives_up_within_its_budget() -> None:
    space = toy_space().with_check(lambda cfg: "never", "rejects everything")
    assert Repairer(space, KnobEncoding(space)).repair((1, 2, 3, 1)) is None


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_a_space_that_rejects_almost_every_vector(name: str) -> None:
    # About 1 vector in 60 passes (inner k of 8, unroll 16, small m tile).
    def strict(cfg: Config) -> str | None:
        ok = cfg["tile_k"][-1] == 8 and cfg["unroll"] == 16 and cfg["tile_m"][-1] <= 4
        return None if ok else "strict"

    space = toy_space().with_check(strict, "strict")
    results = run(SEARCHERS[name](), 40, space=space, seed=2)
    assert len(results) == 40
    assert all(space.validate(r.config) is None for r in results)
    assert len({r.config.key for r in results}) == 40


@pytest.mark.parametrize("name", sorted(SEARCHERS))
def test_a_space_without_valid_configs_ends_the_search(name: str) -> None:
    space = toy_space().with_check(lambda cfg: "never", "rejects everything")
    assert run(SEARCHERS[name](), 16, space=space) == []
