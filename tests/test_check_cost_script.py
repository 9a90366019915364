"""scripts/check_cost.py: what a space generator's default check costs, on a toy space
whose default check rejects the fastest configs (exact timings), and in a small real run."""

from __future__ import annotations

import json

import pytest

from orchestrator.hookspecs import hookimpl
from orchestrator.loop import TuneOptions, tune
from orchestrator.manager import load_plugins
from orchestrator.options import one_of
from orchestrator.testing.conformance import TOY_TARGET
from tests.plugins.gga.test_reproduce_script import ConvToy, conv_latency, conv_space
from tests.scripts_under_test import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("check_cost")


class CheckedToy:
    """``conv-checked``: the toy conv space, whose default check (``full``) rejects every
    unrolled config, the faster ones; ``relaxed`` keeps them."""

    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        class Gen:
            def __init__(self, check: str = "full") -> None:
                self.check = one_of("space generator 'conv-checked'", "check", check,
                                    ("full", "relaxed"))

            def supports(self, task, target):
                return task.op == "conv2d" and target.arch == "toy"

            def generate(self, task, target):
                space = conv_space(task)
                if self.check == "relaxed":
                    return space
                return space.with_check(
                    lambda c: f"unrolled by {c['unroll']}" if c["unroll"] else None,
                    "full check")

        registry.add("conv-checked", Gen)


class _Counting:
    def __init__(self, plugins):
        self.inner = plugins.create("measurer", "conv-synthetic")
        self.calls = 0

    def measure(self, space, target, configs):
        self.calls += 1
        return self.inner.measure(space, target, configs)


def _experiment(tmp_path, rg):
    plugins = load_plugins(extra=[("conv-toy", ConvToy()), ("checked", CheckedToy())],
                           autoload=False)
    task = {t.name: t for t in rg.resnet_layers()}["r18_l4ds"]
    exp = rg.Experiment(layers=(task,), history_layers=(), trials=0, budgets={},
                        db=tmp_path / "wide.db", work=tmp_path, out=tmp_path / "out",
                        target=TOY_TARGET, plugins=plugins, measurer="conv-synthetic",
                        space_generator="conv-checked", space_options={"check": "relaxed"},
                        log=lambda _: None)
    tune(task, target=TOY_TARGET, db=str(exp.db), plugins=plugins,
         options=TuneOptions(searcher="random", measurer="conv-synthetic", trials=40,
                             batch_size=8, seed=1, space_generator="conv-checked",
                             space_options={"check": "relaxed"}))
    return exp, task


def test_the_fastest_of_each_side_are_timed_again_and_compared(script, tmp_path):
    rg = load_script("reproduce_gga")
    exp, task = _experiment(tmp_path, rg)
    measurer = _Counting(exp.plugins)
    cost = script.time_task(exp, task, [exp.db], 2, 3, measurer)
    assert cost is not None and measurer.calls == 3  # one call per round
    lat = [p.latency for p in cost.picks]
    assert lat == sorted(lat) and len(cost.picks) == len({p.config.key for p in cost.picks})
    rejected = [p for p in cost.picks if p.rejected]
    accepted = [p for p in cost.picks if not p.rejected]
    assert rejected and accepted and cost.rejected == len(rejected)
    assert all(p.rejected == f"unrolled by {p.config['unroll']}" for p in rejected)
    assert not any(p.config["unroll"] for p in accepted)
    assert set(cost.timed) == {p.config.key for p in [*rejected[:2], *accepted[:2]]}
    assert all(len(v) == 3 for v in cost.timed.values())
    # exact timings: the fastest of each side is its fastest record
    expect = conv_latency(task, rejected[0].config) / conv_latency(task, accepted[0].config)
    assert expect < 1 and cost.kept == pytest.approx(expect)
    assert cost.rounds_kept() == pytest.approx([expect] * 3)
    # read back from the kept timings: nothing measured again
    again = script.time_task(exp, task, [exp.db], 2, 3, measurer)
    assert measurer.calls == 3 and again.timed == cost.timed
    data = json.loads((exp.out / "data" / "r18_l4ds.json").read_text())
    assert data["rounds"] == 3 and len(data["configs"]) == 4
    path = script.report(exp, [cost], [exp.db], 2, 3, "header", "cmd")
    text = path.read_text()
    row = (f"| r18_l4ds | {len(cost.picks)} | {len(rejected)} | ")
    assert row in text and f"| {cost.kept:.3f} [" in text
    assert f"keeps {cost.kept:.3f} [" in text and "over 1 tasks" in text
    assert "tasks: unrolled by N (1)." in text
    assert "at least 5% faster than every accepted one timed: 1 of 1" in text


def test_nothing_rejected_keeps_everything_and_times_nothing(script, tmp_path):
    rg = load_script("reproduce_gga")
    exp, task = _experiment(tmp_path, rg)
    picks = script.read_picks(task, exp.target, [exp.db], conv_space(task))  # no check
    assert picks and not any(p.rejected for p in picks)
    assert script.chosen(picks, 2) == []  # one side only: nothing to time
    cost = script.TaskCost(task, (), tuple(picks), {})
    assert cost.kept == 1.0  # the check rejects nothing recorded: nothing lost
    assert "keeps 1.000 [1.000, 1.000]" in script.summary([cost])[0]
    only_rejected = script.TaskCost(task, (), tuple(script.Pick(p.config, p.latency, "no")
                                                    for p in picks), {})
    assert only_rejected.kept is None  # nothing accepted to compare with
    assert "nothing to compare" in script.summary([only_rejected])[0]


def test_smoke_run_times_real_configs(script, tmp_path):
    assert script.main(["--smoke", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "check-cost.md").read_text()
    assert "Smoke run (CI)" in text and "apache-tvm" in text
    row = next(line for line in text.splitlines() if line.startswith("| smoke |"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    read, rejected = int(cells[1]), int(cells[2])
    assert 1 <= read <= 12 and 0 <= rejected <= read and float(cells[3]) > 0
    if 0 < rejected < read:  # both sides: one of each timed again in two rounds
        data = json.loads((tmp_path / "data" / "smoke.json").read_text())
        assert data["rounds"] == 2 and len(data["configs"]) == 2
        assert 0 < float(cells[8].split()[0]) <= 1 and "keeps" in text
    else:
        assert cells[8] in ("-", "1.000")


def test_bad_input_is_one_line(script, tmp_path, capsys):
    for argv, says in ((["--db", str(tmp_path / "none.db")], "none.db: no such file"),
                       ([], "give --db, a history database"),
                       (["--smoke", "--rounds", "0"], "--rounds must be >= 1, got 0"),
                       (["--smoke", "--layers", "r18_x"], "unknown layer(s) r18_x"),
                       (["--smoke", "--space-opt", "check=loose"],
                        "check must be one of full, relaxed, off, got 'loose'")):
        with pytest.raises(SystemExit) as exit_:
            script.main([*argv, "--out", str(tmp_path / "o")])
        assert exit_.value.code == 2
        assert says in capsys.readouterr().err.strip().splitlines()[-1]
