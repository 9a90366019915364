from __future__ import annotations

import dataclasses
import random

import pytest

from orchestrator.errors import InvalidConfigError
from orchestrator.space import (
    LEGACY_TEMPLATE,
    ChoiceKnob,
    Config,
    Space,
    SplitKnob,
    divisors,
    factorizations,
)
from orchestrator.testing import TOY_TASK, toy_space


def test_factorizations_are_exact_and_complete():
    f = factorizations(12, 3)
    assert all(a * b * c == 12 for a, b, c in f)
    assert len(f) == len(set(f)) == 18
    assert factorizations(7, 2) == [(1, 7), (7, 1)]


def test_divisors_are_ascending_and_a_callers_list_is_its_own():
    d = divisors(12)
    assert d == [1, 2, 3, 4, 6, 12] and divisors(49) == [1, 7, 49] and divisors(1) == [1]
    d.append(99)  # the cache behind it must not see this
    assert divisors(12) == [1, 2, 3, 4, 6, 12]


def test_split_knob_keeps_only_filtered_candidates():
    k = SplitKnob.perfect("t", 16, 2, keep=lambda c: c[-1] >= 4)
    assert all(c[-1] >= 4 for c in k.choices) and k.extent == 16
    with pytest.raises(ValueError):
        SplitKnob.perfect("t", 7, 2, keep=lambda c: c[-1] == 2)


def test_config_key_is_stable_and_round_trips():
    a = Config.of({"b": (2, 4), "a": 1})
    b = Config.of({"a": 1, "b": [2, 4]})
    assert a == b and a.key == b.key == '{"a":1,"b":[2,4]}'
    space = Space(TOY_TASK, "t", (ChoiceKnob("a", (1, 2)), SplitKnob("b", 8, 2, ((2, 4), (4, 2)))), "m:f")
    assert space.config_from_dict(a.to_dict()) == a
    assert space.config_at(space.indices(a)) == a
    nested = Config.of({"order": [["i", 2], ["j", 1]], "flag": True, "t": [1, 2]})
    assert nested["order"] == (("i", 2), ("j", 1)) and nested["t"] == (1, 2)
    assert Config.of(nested.to_dict()) == nested


def test_a_config_from_its_stored_key_is_the_same_config_with_that_key():
    a = Config.of({"b": (2, 4), "a": 1, "order": [["k", 3]]})
    b = Config.from_key(a.key)
    assert b == a and b.key == a.key and hash(b) == hash(a)
    assert b.key_hash == a.key_hash


def test_validate_and_require_valid():
    space = toy_space()
    good = space.sample(random.Random(0))
    assert space.validate(good) is None
    bad = Config.of({**good.to_dict(), "unroll": 5})
    assert "not one of its choices" in space.validate(bad)
    assert "unknown knob" in space.validate(Config.of({**good.to_dict(), "zzz": 1}))
    too_big = Config.of({**good.to_dict(), "tile_m": [1, 1, 64], "tile_n": [1, 1, 64]})
    assert space.validate(too_big) == "inner tile too large"
    with pytest.raises(InvalidConfigError):
        space.require_valid(too_big)


def test_iteration_respects_check_and_pruning():
    space = toy_space()
    every = list(space)
    assert len(every) < space.size and all(space.validate(c) is None for c in every)
    narrowed = space.with_check(lambda c: None if c["unroll"] == 16 else "pruned", "unroll 16 only")
    assert {c["unroll"] for c in narrowed} == {16}
    assert narrowed.notes == ("unroll 16 only",)
    listed = space.with_candidates(every[:5], "top 5")
    assert list(listed) == every[:5] and listed.size == 5
    assert listed.validate(every[6]) == "not among the pruned candidates"


def test_sampling_is_seeded():
    space = toy_space()
    a = [space.sample(random.Random(3)) for _ in range(3)]
    b = [space.sample(random.Random(3)) for _ in range(3)]
    assert a == b


def test_the_template_names_generator_and_version_and_only_a_first_version_takes_legacy():
    space = toy_space()
    assert (space.template_version, space.template) == (1, "toy@1")
    assert space.reusable_templates == ("toy@1", LEGACY_TEMPLATE)
    bumped = dataclasses.replace(space, template_version=3)
    assert bumped.template == "toy@3" and bumped.reusable_templates == ("toy@3",)
