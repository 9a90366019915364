"""scripts/top_knobs.py: which knob values the trials at the mark hold, read from finished
turns of gga_turns.py on the synthetic conv space of the reproduce_gga tests (no TVM)."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from tests.scripts_under_test import load_script

exit_status = load_script("script_main").exit_status


@pytest.fixture(scope="module")
def tk():
    return load_script("top_knobs")


def _trial(number, gflops, changed):
    fc = load_script("first_configs")
    return fc.Trial(number, float(number), gflops, "ok" if gflops else "failed", 0.0, changed)


def _run(name, reference, first, trials):
    fc = load_script("first_configs")
    return fc.RunTrials("L", name, 1, 0, "llvm", reference,
                        tuple(_trial(i + 1, g, c) for i, (g, c) in enumerate(trials)),
                        (None, None), None, json.dumps(first, separators=(",", ":")))


def test_values_are_counted_over_every_runs_trials_with_their_share_at_the_mark(tk):
    first = {"pad": "inline", "unroll": 0}
    # mark 95 (of xgb's 100): trials at 96 and 100 are at it, 94 and a failure are not
    xgb = _run("xgb", 100.0, first, [(96.0, {}), (94.0, {"pad": "root"}),
                                         (100.0, {"unroll": 16})])
    gga = _run("gga", 100.0, first, [(90.0, {}), (None, {"pad": "root", "unroll": 16})])
    counts = {(c.knob, c.value): (c.trials, c.at_mark) for c in tk.count_values([xgb, gga])}
    assert counts == {("pad", '"inline"'): (3, 2), ("pad", '"root"'): (2, 0),
                      ("unroll", "0"): (3, 1), ("unroll", "16"): (2, 1)}


def test_a_split_knobs_innermost_factor_counts_as_a_knob_of_its_own(tk):
    first = {"tile_x": [1, 2, 14], "unroll": 0}
    run = _run("xgb", 100.0, first, [(100.0, {}), (99.0, {"tile_x": [2, 1, 14]}),
                                     (50.0, {"tile_x": [4, 1, 7]})])
    counts = {(c.knob, c.value): (c.trials, c.at_mark) for c in tk.count_values([run])}
    assert counts[("tile_x innermost", "14")] == (2, 2)
    assert counts[("tile_x innermost", "7")] == (1, 0)
    assert counts[("tile_x", "[1,2,14]")] == (1, 1) and ("unroll innermost", "0") not in counts


def test_a_leader_needs_enough_trials_and_the_table_says_how_many_sets_agree(tk):
    first = {"pad": "inline"}
    many = [(100.0, {})] * 5 + [(10.0, {"pad": "root"})] * 5
    flipped = [(10.0, {})] * 5 + [(100.0, {"pad": "root"})] * 5
    few_root = [(50.0, {})] * 5 + [(100.0, {"pad": "root"})] * 4  # root held by 4 only
    sets = [tk.Turns(name, (run,), tk.count_values([run]))
            for name, run in (("a", _run("xgb", 100.0, first, many)),
                              ("b", _run("xgb", 100.0, first, flipped)),
                              ("c", _run("xgb", 100.0, first, few_root)))]
    assert [s.leader("pad").value for s in sets] == ['"inline"', '"root"', '"inline"']
    assert sets[2].leader("pad").share == 0.0 and sets[0].leader("nope") is None
    table = tk.leaders_table(sets)
    assert table[0] == "| knob | a | b | c | sets led by one value |"
    assert table[2] == ('| pad | `"inline"` (1.00) | `"root"` (1.00) | `"inline"` (0.00) '
                        '| 2 of 3 |')


def test_real_turns_are_read_with_every_run_and_the_confirmed_mark(tk, turns, tmp_path, capsys):
    exp, res = turns
    read = tk.read_turns(exp.work, "r18_l4ds")
    assert read.confirmed  # the fixture's turns were made with --confirm 1
    assert [r.searcher for r in read.runs] == ["xgb", "ga", "gga"]
    assert read.reference == res.reference
    assert read.trials == sum(len(r.trials) for r in read.runs)
    knobs = {c.knob for c in read.counts}
    assert knobs and all(sum(c.trials for c in read.counts if c.knob == k) == read.trials
                         for k in knobs)  # every trial holds one value of every knob
    assert sum(c.at_mark for c in read.counts if c.knob == min(knobs)) == read.at_mark
    out = tmp_path / "top.md"
    assert tk.main(["r18_l4ds", str(exp.work), str(exp.work), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"report: {out}\n"  # the report goes to the file alone
    text = out.read_text()
    assert text.endswith("|\n") and not text.endswith("\n\n")
    assert tk.main(["r18_l4ds", str(exp.work), str(exp.work)]) == 0
    printed = capsys.readouterr().out  # without --out, printed; the same but the command

    def body(report: str) -> str:
        return report.split("\nCommand: ", 1)[1].split("\n", 1)[1]

    assert body(printed) == body(text) and "--out" not in printed
    assert "# Knob values at the mark: r18_l4ds" in text and "- Machine: " in text
    assert f"xgb's confirmed best {res.reference:.1f} GFLOPS" in text
    assert f"{read.at_mark} of {read.trials} trials at it" in text
    assert text.count(f"## {exp.work.name}") == 2 and "| 2 of 2 |" in text


def test_turns_without_confirm_read_the_runs_best(tk, turns, tmp_path):
    exp, _ = turns
    copy = tmp_path / "copy"
    shutil.copytree(exp.work / "r18_l4ds", copy / "r18_l4ds")
    con = sqlite3.connect(copy / "r18_l4ds" / "turns" / "xgb.db")
    key = json.loads(con.execute("select resume_key from runs").fetchone()[0])
    key["confirm"] = 0
    con.execute("update runs set resume_key = ?", (json.dumps(key),))
    con.commit()
    con.close()
    assert not tk.made_with_confirm(copy, "r18_l4ds")


@pytest.mark.parametrize("where, message", [
    ("nowhere", "nowhere/r18_l4ds/turns does not exist"),
    ("no-xgb", "r18_l4ds/turns/xgb.db does not exist"),
])
def test_missing_turns_are_a_one_line_error(tk, turns, tmp_path, capsys, where, message):
    exp, _ = turns
    work = tmp_path / where
    if where == "no-xgb":
        (work / "r18_l4ds" / "turns").mkdir(parents=True)
        shutil.copy(exp.work / "r18_l4ds" / "turns" / "gga.db", work / "r18_l4ds" / "turns")
    assert exit_status(tk.main, ["r18_l4ds", str(work)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
