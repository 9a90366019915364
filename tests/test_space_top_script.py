"""scripts/space_top.py: the share of uniformly drawn configs at the 95% mark, what it
leaves of the time targets, on the synthetic conv space (exact timings) and in a small
real run."""

from __future__ import annotations

import json
import math

import pytest

from history.store import HistoryStore
from tests.plugins.gga.test_reproduce_script import conv_latency, toy_experiment
from tests.scripts_under_test import load_script


@pytest.fixture(scope="module")
def script():
    return load_script("space_top")


def test_the_chances_follow_from_the_share(script):
    lo, hi = script.wilson(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-4) and hi == pytest.approx(0.7634, abs=1e-4)
    assert script.wilson(0, 20)[0] == 0.0 and script.wilson(20, 20)[1] == 1.0
    assert script.batch_hit(0.5, 2) == pytest.approx(0.75)
    assert script.room(0.1, 2, 5) == pytest.approx(0.9 ** 8)  # four batches of two missed
    assert script.room(0.1, 2, 3) == pytest.approx(0.9 ** 4)
    # every first batch at the mark: no room at all; none within the cap: the cap
    assert script.expected_log_batches(1.0, 2, 32) == 0.0
    assert script.expected_log_batches(0.0, 2, 32) == pytest.approx(math.log(32))
    # q = 3/4 a batch: k = 1, 2, 3 (capped) with 3/4, 3/16, 1/16
    assert script.expected_log_batches(0.5, 2, 3) == pytest.approx(
        3 / 16 * math.log(2) + 1 / 16 * math.log(3))
    top = script.largest_share(2, 5)
    assert script.room(top, 2, 5) == pytest.approx(0.5)
    assert script.largest_share(2, 5) < script.largest_share(2, 3)
    p5 = script.share_for_ceiling(2, 5, 32)
    assert math.exp(script.expected_log_batches(p5, 2, 32)) == pytest.approx(5, rel=1e-6)
    assert script.share_for_ceiling(2, 3, 32) > p5


def _toy(tmp_path, seed=0):
    rg = load_script("reproduce_gga")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l4ds",), budgets={"xgb": 12},
                         seed=seed)
    rg.run_all(exp, history_only=True)
    return exp


class _Counting:
    """The experiment's measurer, counting its calls."""

    def __init__(self, exp):
        self.inner = exp.plugins.create("measurer", exp.measurer)
        self.calls = 0

    def measure(self, space, target, configs):
        self.calls += 1
        return self.inner.measure(space, target, configs)


def test_draws_are_timed_beside_the_own_best_and_counted_at_the_mark(script, tmp_path,
                                                                     monkeypatch):
    exp = _toy(tmp_path)
    task = exp.layers[0]
    measurer = _Counting(exp)
    top = script.time_task(exp, task, 20, 8, measurer)
    assert top is not None and len(top.draws) == 1 and measurer.calls == 3  # 8 + 8 + 4
    first = top.draws[0]
    assert len({c.key for c in first.drawn}) == 20 and top.best not in first.drawn
    assert len(first.best_gflops) == 3  # the own best once per chunk
    best = conv_latency(task, top.best)
    hits = sum(conv_latency(task, c) <= best / 0.95 * (1 + 1e-12) for c in first.drawn)
    assert top.hits == hits and top.share == pytest.approx(hits / 20) and top.ran == 20
    # the same draws for the same seed, read from the kept timings; others for another
    both = script.time_task(exp, task, 20, 8, measurer, seeds=(0, 1))
    assert both.draws[0].drawn == first.drawn and measurer.calls == 6
    assert set(both.draws[1].drawn) != set(first.drawn) and both.n == 40
    hits1 = sum(conv_latency(task, c) <= best / 0.95 * (1 + 1e-12) for c in both.draws[1].drawn)
    assert both.hits == hits + hits1 and both.share == pytest.approx((hits + hits1) / 40)
    text = script.report(exp, [both], 2, 20, "header", "cmd").read_text()
    row = (f"| r18_l4ds | {top.space_size} | {first.own_best:.1f} (3), "
           f"{both.draws[1].own_best:.1f} (3) | 40 | 40 | {hits + hits1} | ")
    assert row in text and "seeds 0, 1" in text
    apart = [math.exp(script.expected_log_batches(h / 20, 2, 32)) for h in (hits, hits1)]
    assert f"- The expected ceiling by seed (0, 1): {apart[0]:.2f}x, {apart[1]:.2f}x." in text
    # the synthetic timings are exact: the fastest timing is the median, the same mark
    assert both.strict_share == both.share == both.paired_share
    assert "- Against 95% of the own best's timing in each draw's own chunk" in text
    assert "- Against 95% of the own best's fastest timing instead of its median" in text
    assert "- Expected ceiling in batches of 2" in text
    assert (f"2: {script.expected_ceiling([both.share], 2):.2f}x "
            f"({script.expected_ceiling([both.strict_share], 2):.2f}x), 4: ") in text
    by_batch = [script.expected_ceiling([0.1], b) for b in script.BATCH_SIZES]
    assert by_batch == sorted(by_batch, reverse=True)  # larger batches leave less
    p5, p3 = script.share_for_ceiling(2, 5, 32), script.share_for_ceiling(2, 3, 32)
    shares = [both.share]
    assert (f"{sum(p < p5 for p in shares)} and {sum(p < p3 for p in shares)} of 1 tasks "
            "have a p under those") in text
    assert "- 5x over xgb: random draws leave room for it on fewer than half of the runs " \
           "where p > 8.3%" in text


def test_kept_timings_are_read_only_where_they_match_their_chunk(script, tmp_path):
    exp = _toy(tmp_path)
    task = exp.layers[0]
    measurer = _Counting(exp)
    first = script.time_task(exp, task, 20, 8, measurer)
    assert measurer.calls == 3
    path = next((exp.out / "data").glob("*-seed0.json"))
    data = json.loads(path.read_text())
    assert data["chunk"] == 8 and len(data["best_latencies"]) == 3
    # read back as kept, whatever --chunk asks for now
    assert script.time_task(exp, task, 20, 4, measurer).draws == first.draws
    assert measurer.calls == 3
    # a file from before the chunk was kept: the default, 16, wants two own-best timings
    # for 20 draws, not three, so the draws are timed again (in the chunk asked for)
    del data["chunk"]
    path.write_text(json.dumps(data))
    again = script.time_task(exp, task, 20, 8, measurer)
    assert measurer.calls == 6 and again.draws[0].chunk == 8
    # one that matches the default is read as chunks of 16
    data = json.loads(path.read_text())
    data["best_latencies"] = data["best_latencies"][:2]
    del data["chunk"]
    path.write_text(json.dumps(data))
    old = script.time_task(exp, task, 20, 8, measurer)
    assert measurer.calls == 6 and old.draws[0].chunk == script.CHUNK == 16
    assert old.draws[0].drawn == first.draws[0].drawn
    # a chunk that no longer fits its own-best timings: timed again
    data = json.loads(path.read_text())
    data["chunk"] = 4
    path.write_text(json.dumps(data))
    script.time_task(exp, task, 20, 8, measurer)
    assert measurer.calls == 9


def test_a_task_without_its_own_record_is_skipped(script, tmp_path):
    rg = load_script("reproduce_gga")
    exp = toy_experiment(rg, tmp_path, "r18_l4ds", ("r18_l4ds",), budgets={"xgb": 6})
    rg.run_all(exp, history_only=True)
    untuned = {t.name: t for t in rg.resnet_layers()}["r18_l3ds"]
    measurer = _Counting(exp)
    assert script.time_task(exp, untuned, 4, 4, measurer) is None and measurer.calls == 0
    assert script.summary([], 2) == ["No task was timed."]


def test_the_own_best_is_the_fastest_record_over_every_database(script, tmp_path):
    runs = [_toy(tmp_path / name, seed) for name, seed in (("a", 0), ("b", 1), ("c", 2))]
    exp, task = runs[0], runs[0].layers[0]
    dbs = [r.db for r in runs]
    bests = [script.ss.fastest_record(exp, task, [db]) for db in dbs]
    latencies = [conv_latency(task, b.config) for b in bests]
    assert len(set(latencies)) > 1  # the seeds' runs found different bests
    fastest = bests[latencies.index(min(latencies))]
    top = script.time_task(exp, task, 6, 6, _Counting(exp), references=dbs[1:])
    assert top.best == fastest.config
    # the order of the databases does not matter; a database without the task is passed over
    empty = HistoryStore.open(tmp_path / "empty.db")
    empty.close()
    assert script.ss.fastest_record(exp, task, [tmp_path / "empty.db", *reversed(dbs)]) \
        .config == fastest.config
    text = script.report(exp, [top], 2, 6, "header", "cmd", references=dbs[1:]).read_text()
    assert ", ".join(f"`{db}`" for db in dbs) in text


def test_bad_arguments_are_one_line_errors(script, tmp_path, capsys):
    for argv, says in ((["--smoke", "--samples", "0"], "--samples must be >= 1, got 0"),
                       (["--db", str(tmp_path / "none.db")], "none.db: no such file"),
                       ([], "give --db, a history database"),
                       (["--smoke", "--layers", "r18_x"], "unknown layer(s) r18_x"),
                       (["--smoke", "--seeds", "0,a"], "--seeds must be comma-separated"),
                       (["--smoke", "--shapes", str(tmp_path / "none.json")], "--shapes: ")):
        with pytest.raises(SystemExit) as exit_:
            script.main(argv)
        assert exit_.value.code == 2
        assert says in capsys.readouterr().err.strip().splitlines()[-1]


def test_smoke_run_times_real_draws(script, tmp_path):
    assert script.main(["--smoke", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "space-top.md").read_text()
    assert "Smoke run (CI)" in text
    row = next(line for line in text.splitlines() if line.startswith("| smoke |"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert int(cells[3]) == 6 and 0 <= int(cells[5]) <= int(cells[4]) <= 6
    assert float(cells[2].split()[0]) > 0  # the own best, timed again


def test_the_paired_mark_follows_each_chunk(script):
    # two chunks of two draws; the machine ran 20% slower during the second chunk
    d = script.Draws(0, (100.0, 80.0), (), (96.0, 90.0, 78.0, 77.0), "t", chunk=2)
    assert d.own_best == 90.0 and d.hits == 2  # one mark of 85.5 for both chunks
    assert d.paired_hits == 3  # 96 >= 95 in the first chunk, 78 and 77 >= 76 in the second
    assert d.strict_hits == 1  # 95% of the fastest timing, 100
    gap = script.Draws(0, (None, 80.0), (), (96.0, 90.0, 78.0, 77.0), "t", chunk=2)
    assert gap.paired_hits == 2  # a chunk whose own best failed has no mark
