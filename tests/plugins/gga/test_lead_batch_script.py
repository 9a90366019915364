"""scripts/gga_lead_batch.py on the synthetic conv space of the reproduce_gga tests (no
TVM): each variant's lead batch, timed beside the left-out layer's own best, the report,
a second run that reads the kept timings, and the command line's errors."""

from __future__ import annotations

import pytest

from tests.plugins.gga.test_reproduce_script import conv_latency, toy_experiment
from tests.scripts_under_test import load_script

VARIANTS = [("gga", {"lead": 2}), ("gga-lt", {"lead": 2, "lead_seeding": "tasks"})]


def _three_layers(tmp_path):
    """The script, and r18_l4ds left out of a database of it, r18_l3ds and r18_l4a."""
    rg = load_script("reproduce_gga")
    lb = load_script("gga_lead_batch")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l3ds", "r18_l4a", "r18_l4ds"),
                         budgets={"xgb": 6})
    rg.run_all(exp, history_only=True)
    return lb, exp


def test_lead_batches_are_timed_beside_the_own_best_and_reported(tmp_path, monkeypatch):
    lb, exp = _three_layers(tmp_path)
    task = exp.layers[0]
    found = lb.measure_task(exp, task, VARIANTS, [], rounds=3, batch=4)
    assert found is not None
    leads = {lead.variant: lead for lead in found.leads}
    assert all(len(lead.configs) == 2 for lead in leads.values())  # the lead, not the batch
    assert leads["gga"].configs[0] == leads["gga-lt"].configs[0]  # the best candidate first
    assert len(set(leads["gga-lt"].sources)) == 2  # one from each task
    assert set(leads["gga-lt"].sources) == {"r18_l3ds", "r18_l4a"}  # never the left-out one
    for name, lead in leads.items():  # the synthetic measurer is exact: one ratio every round
        p = found.ratios[name]
        fastest = min(conv_latency(task, c) for c in lead.configs)
        assert p.rounds == 3 and p.median == pytest.approx(conv_latency(task, found.own) / fastest)
        assert p.low == pytest.approx(p.median) and p.high == pytest.approx(p.median)
    text = lb.report(exp, [found], ["gga", "gga-lt"], 3, 4, "header", "cmd").read_text()
    assert "| task | own best (GFLOPS, median) | gga | gga-lt |" in text
    assert f"| r18_l4ds | {found.own_gflops:.1f} | " in text
    assert "- gga-lt: the lead batch at >= 0.95 of the own best on " in text
    assert f"| r18_l4ds | gga-lt | {', '.join(leads['gga-lt'].sources)} |" in text

    def no_measuring(*args, **kwargs):
        raise AssertionError("measured again although the timings were kept")

    monkeypatch.setattr(lb.ss, "measure_interleaved", no_measuring)
    again = lb.measure_task(exp, task, VARIANTS, [], rounds=2, batch=4)
    assert again is not None and again.measured_at == found.measured_at
    assert all(p.rounds == 2 for p in again.ratios.values())
    with pytest.raises(AssertionError, match="measured again"):
        lb.measure_task(exp, task, VARIANTS, [], rounds=4, batch=4)


def test_a_task_without_its_own_best_is_skipped(tmp_path):
    lb, exp = _three_layers(tmp_path)
    layers = {t.name: t for t in load_script("reproduce_gga").resnet_layers()}
    assert lb.measure_task(exp, layers["r18_l2"], VARIANTS, [], rounds=2, batch=2) is None
    assert lb.ss.fastest_record(exp, layers["r18_l2"], [exp.db]) is None


def test_fastest_per_round_skips_failed_timings():
    lb = load_script("gga_lead_batch")
    from orchestrator.space import Config

    a, b = Config.of({"x": 1}), Config.of({"x": 2})
    lat = {a.key: [2.0, None, None], b.key: [3.0, 1.0, None]}
    assert lb.fastest_per_round(lat, [a, b], 3) == [2.0, 1.0, None]


@pytest.mark.parametrize("argv, message", [
    (["--db", "{tmp}/missing.db"], "does not exist"),
    (["--db", "{db}", "--variant", "x=ga"], "give a new name and the searcher gga"),
    (["--db", "{db}", "--variant", "gga=gga:lead=1"], "give a new name and the searcher gga"),
    (["--db", "{db}", "--variant", "nonsense"], "--variant takes NAME=SEARCHER"),
    (["--db", "{db}", "--layers", "r18_x"], "unknown layer(s) r18_x"),
    (["--db", "{db}", "--rounds", "0"], "must be >= 1"),
])
def test_bad_command_lines_are_one_line_errors(tmp_path, capsys, argv, message):
    lb = load_script("gga_lead_batch")
    db = tmp_path / "h.db"
    db.write_bytes(b"")
    argv = [a.format(tmp=tmp_path, db=db) for a in argv]
    with pytest.raises(SystemExit) as exc:
        lb.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err
