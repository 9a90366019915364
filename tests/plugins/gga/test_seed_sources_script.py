"""scripts/gga_seed_sources.py on the synthetic conv space of the reproduce_gga tests (no
TVM): each history layer's first candidate in gga's order, timed beside the left-out
layer's own best, the report, and a second run that reads the kept timings."""

from __future__ import annotations

import dataclasses

import pytest

from history.similarity import iter_candidates, rank_history
from history.store import HistoryStore
from orchestrator.loop import TuneOptions, build_space
from tests.plugins.gga.test_reproduce_script import conv_latency, toy_experiment
from tests.scripts_under_test import load_script


def _three_layers(tmp_path):
    """The script, and r18_l4ds left out of a database of it, r18_l3ds and r18_l4a."""
    rg = load_script("reproduce_gga")
    ss = load_script("gga_seed_sources")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4a", "r18_l4ds"),
                         budgets={"xgb": 6})
    rg.run_all(exp, history_only=True)
    return ss, exp


def test_each_history_layer_gives_its_first_candidate_in_ggas_order(tmp_path):
    ss, exp = _three_layers(tmp_path)
    task = exp.layers[0]
    _, space = build_space(exp.plugins, task, exp.target,
                           TuneOptions(space_generator=exp.space_generator))
    store = HistoryStore.open(exp.db, create=False)
    try:
        ranked = rank_history(store.reader(), space, exp.target)
    finally:
        store.close()
    found = ss.sources(ranked, space)
    assert sorted(s.task.name for s in found) == ["r18_l3ds", "r18_l4a"]  # not the left-out one
    order = [cfg.key for cfg, _ in iter_candidates(ranked, space)]
    assert found[0].position == 1 and found[0].config.key == order[0]
    for s in found:  # the place is the config's place in gga's order, and it is its layer's first
        assert order[s.position - 1] == s.config.key
        earlier = [rec.task.key for _, rec in list(iter_candidates(ranked, space))[:s.position - 1]]
        assert s.task.key not in earlier
    assert [s.position for s in found] == sorted(s.position for s in found)
    kernels = {s.task.name: ss.kernel(s.task) for s in found}
    assert ss.kernel(task) == "1x1/2" and kernels == {"r18_l3ds": "1x1/2", "r18_l4a": "3x3/2"}


def test_sources_are_timed_beside_the_own_best_and_reported_then_read_back(tmp_path, monkeypatch):
    ss, exp = _three_layers(tmp_path)
    task = exp.layers[0]
    ls = ss.measure_layer(exp, task, 3)
    assert ls is not None and len(ls.sources) == 2
    for s in ls.sources:  # the synthetic measurer is exact: every round gives the same ratio
        p = ls.ratios[s.task.key]
        expected = conv_latency(task, ls.own) / conv_latency(task, s.config)
        assert p.rounds == 3 and p.median == pytest.approx(expected)
        assert p.low == pytest.approx(expected) and p.high == pytest.approx(expected)
        assert ls.gflops[s.task.key] == pytest.approx(task.flops / conv_latency(task, s.config) / 1e9)
    path = ss.report(exp, [ls], 3, "header", "cmd")
    text = path.read_text()
    assert "| r18_l4ds | 1x1/2 | r18_l3ds | 1x1/2 |" in text
    assert "| r18_l4ds (1x1/2) |" in text and "Of 1 layers:" in text
    pairs = {row.split(" | ")[0]: row for row in ss.kernel_pairs([ls])}
    assert set(pairs) == {"| 1x1/2", "| 3x3/2"} and pairs["| 1x1/2"].startswith("| 1x1/2 | 1x1/2 | 1 |")

    def no_measuring(*args, **kwargs):
        raise AssertionError("measured again although the timings were kept")

    monkeypatch.setattr(ss, "measure_interleaved", no_measuring)
    again = ss.measure_layer(exp, task, 2)  # fewer rounds: the kept timings cover them
    assert again is not None and all(p.rounds == 2 for p in again.ratios.values())
    with pytest.raises(AssertionError, match="measured again"):
        ss.measure_layer(exp, task, 4)  # more rounds than kept: measured again


def test_a_layer_without_its_own_best_is_skipped(tmp_path):
    rg = load_script("reproduce_gga")
    ss = load_script("gga_seed_sources")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds",), budgets={"xgb": 4})
    rg.run_all(exp, history_only=True)  # r18_l3ds and r18_l4ds only
    store = HistoryStore.open(exp.db, create=False)
    names = {t.name for _, t in store.tasks()}
    store.close()
    layers = {t.name: t for t in rg.resnet_layers()}
    assert "r18_l2" not in names
    assert ss.measure_layer(exp, layers["r18_l2"], 2) is None
    assert "No layer had an own best" in ss.report(exp, [], 2, "header", "cmd").read_text()


def test_the_report_says_when_the_timings_were_taken(tmp_path):
    ss, exp = _three_layers(tmp_path)
    ls = ss.measure_layer(exp, exp.layers[0], 2)
    assert ls is not None and ls.measured_at.startswith("20")
    kept = ss.measure_layer(exp, exp.layers[0], 2)
    assert kept is not None and kept.measured_at == ls.measured_at  # read back, not measured
    text = ss.report(exp, [ls], 2, "header", "cmd").read_text()
    assert f"Timings finished from {ls.measured_at} to {ls.measured_at} UTC" in text


def test_a_failed_first_pick_is_shown_as_failed_not_replaced(tmp_path):
    ss, exp = _three_layers(tmp_path)
    ls = ss.measure_layer(exp, exp.layers[0], 2)
    assert ls is not None
    first = min(ls.sources, key=lambda s: s.position)
    failed = dataclasses.replace(ls, ratios={k: v for k, v in ls.ratios.items()
                                             if k != first.task.key})
    row, counts = ss.summary_row(failed)
    assert f"{first.task.name} (" in row and "failed" in row.split(" | ")[2]
    assert row.count(" | ") == 4 and not counts["first is best"] and not counts["first near"]
    none, nothing = ss.summary_row(dataclasses.replace(ls, ratios={}))
    assert none.count(" | ") == 4 and nothing == {}


def test_the_report_names_the_space_the_candidates_were_timed_on(tmp_path):
    ss, exp = _three_layers(tmp_path)
    ls = ss.measure_layer(exp, exp.layers[0], 2)
    assert ls is not None
    text = ss.report(exp, [ls], 2, "header", "cmd").read_text()
    assert "; space: `conv-toy` (its defaults)." in text
    wide = dataclasses.replace(exp, space_generator="cpu", space_options={"check": "relaxed"})
    assert ss.space_words(wide) == "`cpu` (check=relaxed)"
    assert ss.space_words(dataclasses.replace(exp, space_generator=None)) == (
        "the first that supports conv2d (its defaults)")


@pytest.mark.parametrize("argv, says", [
    (["--space-opt", "check=relaxed"], "--space-opt sets options of the space generator"),
    (["--space", "cpu", "--space-opt", "check=loose"],
     "check must be one of full, relaxed, off, got 'loose'"),
    (["--space", "nosuch"], "nosuch"),
])
def test_a_wrong_space_is_one_line_and_status_2(tmp_path, capsys, argv, says):
    ss = load_script("gga_seed_sources")
    db = tmp_path / "h.db"
    db.write_bytes(b"")
    with pytest.raises(SystemExit) as exit_:
        ss.main(["--db", str(db), "--out", str(tmp_path / "o"), *argv])
    assert exit_.value.code == 2
    assert says in capsys.readouterr().err.strip().splitlines()[-1]
