"""scripts/variant_pool.py: gga's variants against gga, pooled over reported turns."""

from __future__ import annotations

import math

import pytest

from tests.scripts_under_test import load_script

RUNS_HEADER = ("| layer | match | searcher | trials | best GFLOPS | / xgb | trials to 95% | own "
               "seconds to 95% | own seconds in all |")
AGAIN_HEADER = "| layer | searcher | final config again, over xgb's | own seconds to 95% |"


def _report(path, runs, again=None, paired=False, machine="AMD EPYC (znver3, AVX2)",
            date="2026-12-06 00:08 UTC", variants="--variant gga-l1=gga:lead=1,lead_tasks=2"):
    """``runs``: (layer, searcher, final over xgb, seconds to 95% or None, seconds in all);
    ``again``: (layer, searcher, final again over xgb's, seconds to 95% or None)."""
    lines = ["# GGA leave-one-out, searchers taking turns on the machine", "",
             "- Date: " + date, f"- Machine: {machine}, 2 cores available, x86_64", "",
             f"Command: `python scripts/gga_turns.py --seed 0 --variant auto=auto {variants}`",
             "", RUNS_HEADER, "|---|---|---|---|---|---|---|---|---|"]
    for layer, who, final, to_mark, in_all in runs:
        lines.append(f"| {layer} | 0.9 | {who} | 300 | 100.0 | {final:.3f} | 5 | "
                     f"{'-' if to_mark is None else to_mark} | {in_all} |")
    if again is not None:
        lines += ["", "## The configs the runs reported, timed again (`--deployed`)", ""]
        if paired:
            lines += ["Paired view (`--deployed-view paired`, the timings of the 9-round run).",
                      ""]
        lines += [AGAIN_HEADER, "|---|---|---|---|"]
        for layer, who, final, to_mark in again:
            lines.append(f"| {layer} | {who} | {final:.3f} | "
                         f"{'-' if to_mark is None else to_mark} |")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


RUNS = [("a", "xgb", 1.0, 40.0, 400.0), ("a", "gga", 0.99, 10.0, 250.0),
        ("a", "gga-l1", 1.01, 5.0, 240.0), ("a", "auto", 1.0, 8.0, 230.0),
        ("b", "xgb", 1.0, 20.0, 410.0), ("b", "gga", 1.0, 8.0, 260.0),
        ("b", "gga-l1", 0.97, None, 255.0)]
AGAIN = [("a", "xgb", 1.0, 30.0), ("a", "gga", 1.0, 3.0), ("a", "gga-l1", 1.02, 6.0),
         ("b", "xgb", 1.0, 9.0), ("b", "gga", 0.99, 3.0), ("b", "gga-l1", 0.95, 9.0)]


def test_a_report_is_read_into_its_gga_variants_and_each_layers_sides(tmp_path):
    vp = load_script("variant_pool")
    rep = vp.read_report(_report(tmp_path / "s0" / "gga-turns.md", RUNS, AGAIN, paired=True))
    assert rep.variants == {"gga-l1": "lead=1,lead_tasks=2"}  # auto=auto is no gga variant
    a, b = rep.layers
    assert (a.layer, a.machine, a.deployed_view) == ("a", "AMD EPYC (znver3, AVX2)", "paired")
    assert a.runs["gga-l1"] == vp.Side(5.0, 240.0, 1.01)
    assert b.runs["gga-l1"] == vp.Side(None, 255.0, 0.97)
    # timed again: the run's seconds in all, the final config's speed again
    assert a.again["gga"] == vp.Side(3.0, 250.0, 1.0)
    assert b.again["gga-l1"] == vp.Side(9.0, 255.0, 0.95)


def test_pooled_over_gga_in_each_view_with_a_never_reached_side_as_a_bound(tmp_path):
    vp = load_script("variant_pool")
    rep = vp.read_report(_report(tmp_path / "s0" / "gga-turns.md", RUNS, AGAIN))
    runs, again = vp.pool([rep])
    assert (runs.options, runs.view, again.view) == ("lead=1,lead_tasks=2", "runs", "timed again")
    # runs: a 10/5 = 2; b: the variant never reached it, its 255 s stand in: 8/255, a bound
    assert runs.over_gga.geometric == pytest.approx(math.sqrt(2 * 8 / 255))
    assert runs.over_gga.bound == "<="
    assert (runs.sooner, runs.later) == (1, 1)
    assert sorted(runs.finals) == pytest.approx([0.97, 1.01 / 0.99])
    # the same layer runs against xgb: gga 40/10 and 20/8, the variant 40/5 and 20/255
    assert runs.gga_over_xgb.geometric == pytest.approx(math.sqrt(4 * 2.5))
    assert runs.variant_over_xgb.geometric == pytest.approx(math.sqrt(8 * 20 / 255))
    # timed again: 3/6 and 3/9, both later
    assert again.over_gga.geometric == pytest.approx(math.sqrt(0.5 / 3))
    assert (again.sooner, again.later) == (0, 2)
    assert sorted(again.finals) == pytest.approx([0.95 / 0.99, 1.02])


def test_runs_read_by_two_reports_count_once_and_the_preferred_view_is_taken(tmp_path):
    vp = load_script("variant_pool")
    median = vp.read_report(_report(tmp_path / "s0" / "gga-turns.md", RUNS, AGAIN))
    paired_again = [(l, w, f, 2.0 if w == "gga-l1" else t) for l, w, f, t in AGAIN]
    paired = vp.read_report(_report(tmp_path / "s0-paired9" / "gga-turns.md", RUNS,
                                    paired_again, paired=True, date="2026-12-06 01:00 UTC"))
    for view, want in (("paired", [3 / 2, 3 / 2]), ("median", [3 / 6, 3 / 9])):
        runs, again = vp.pool([paired, median], deployed_view=view)
        assert runs.layer_runs == 2 and again.layer_runs == 2
        assert again.over_gga.geometric == pytest.approx(math.sqrt(want[0] * want[1]))
    assert runs.reports == ("s0",)  # the runs view reads each run once, from the first written


def test_seeds_of_a_layer_on_one_machine_count_once(tmp_path):
    vp = load_script("variant_pool")
    s0 = vp.read_report(_report(tmp_path / "s0" / "gga-turns.md", RUNS[:4]))
    seed1 = [("a", "xgb", 1.0, 40.0, 401.0), ("a", "gga", 1.0, 10.0, 251.0),
             ("a", "gga-l1", 1.0, 20.0, 241.0)]
    s1 = vp.read_report(_report(tmp_path / "s1" / "gga-turns.md", seed1))
    other = vp.read_report(_report(tmp_path / "x" / "gga-turns.md", seed1, machine="Xeon"))
    runs, _ = vp.pool([s0, s1, other])
    assert runs.layer_runs == 3
    assert runs.over_gga.layers == 2  # a on the znver3 (two seeds), a on the Xeon
    # the znver3's a: seeds 2x and 0.5x average to 1x; the Xeon's a 0.5x
    assert runs.over_gga.geometric == pytest.approx(math.sqrt(1.0 * 0.5))


def test_the_cli_writes_the_table_and_names_each_options_reports(tmp_path, capsys):
    vp = load_script("variant_pool")
    path = _report(tmp_path / "s0" / "gga-turns.md", RUNS, AGAIN)
    out = tmp_path / "pool.md"
    assert vp.main([str(path), "--out", str(out)]) == 0
    text = out.read_text()
    assert "| `lead=1,lead_tasks=2` | runs | 2 | 2 | <= 0.25x [" in text
    assert "| `lead=1,lead_tasks=2` | timed again | 2 | 2 | 0.41x [" in text
    assert "- `lead=1,lead_tasks=2`: s0" in text
    # two rows, one decided ("later" timed again: both layers' ratios under 1)
    assert "Verdicts decided: 1 of 2 rows" in text and "about 0.1 of 2" in text


def test_bad_input_is_a_one_line_error(tmp_path, capsys):
    vp = load_script("variant_pool")
    junk = tmp_path / "junk.md"
    junk.write_text("# some notes\n")
    assert vp.main([str(junk)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "gga_turns.py" in err and err.count("\n") == 1
    plain = _report(tmp_path / "p" / "gga-turns.md", [r for r in RUNS if r[1] != "gga-l1"],
                    variants="")
    assert vp.main([str(plain)]) == 2
    err = capsys.readouterr().err
    assert "ran a gga variant" in err and err.count("\n") == 1
    broken = _report(tmp_path / "b" / "gga-turns.md", RUNS, AGAIN)
    broken.write_text(broken.read_text().replace("| 240.0 |", "| n/a |"))
    assert vp.main([str(broken)]) == 2
    err = capsys.readouterr().err
    assert "is not a number" in err and err.count("\n") == 1
