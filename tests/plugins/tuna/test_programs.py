"""Counts of a lowered program are shared between configs that lower to the same TIR."""

from __future__ import annotations

import pytest

from plugins.tuna import features
from plugins.tuna.programs import ProgramCache
from tests.plugins.tuna.helpers import ZNVER4, dense_task, scheduled


def test_the_same_lowered_program_is_generated_once(tmp_path, monkeypatch):
    programs = ProgramCache(tmp_path / "programs")
    first = features.analyze_module(scheduled(dense_task()), ZNVER4, programs)
    assert len(list((tmp_path / "programs").glob("*.json"))) == 1
    assert first.values == features.analyze_module(scheduled(dense_task()), ZNVER4).values

    def no_codegen(*_args, **_kwargs):
        raise AssertionError("code generated again for a program already counted")

    monkeypatch.setattr(features, "codegen", no_codegen)
    again = features.analyze_module(scheduled(dense_task()), ZNVER4, programs)
    assert again.values == first.values
    with pytest.raises(AssertionError, match="generated again"):
        features.analyze_module(scheduled(dense_task(), vec=False), ZNVER4, programs)


def test_a_damaged_entry_is_computed_again(tmp_path):
    programs = ProgramCache(tmp_path)
    first = features.analyze_module(scheduled(dense_task()), ZNVER4, programs)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text("{not json")
    assert features.analyze_module(scheduled(dense_task()), ZNVER4, programs).values \
        == first.values
    assert programs.get(entry.stem) is not None
