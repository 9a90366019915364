"""How wide the top of a template's space is: the share of uniformly drawn configs at the
95% mark, timed side by side with the task's own best, and what that share leaves of
issue 4's time targets for any searcher.

xgb's first ``plan_size`` (64) proposals and ga's first generation are uniform draws
from the space, so on a task where a share ``p`` of the space is at the mark, xgb reaches
it after 1/p trials in expectation, before its model has been fitted. A searcher at the
mark with its first batch is then ``k`` times sooner, ``k`` being the batches xgb needed,
so 5x needs xgb to miss the mark in its first four batches, which in batches of ``b``
happens with chance (1-p)^(4b). This draws ``--samples`` distinct valid configs per task
with the space's own sampler (as xgb draws them) and times them against the task's
fastest record in ``--db`` (timed again in every chunk of ``--chunk`` configs, in the
same ``measure`` call; ``--db`` given once for each of several runs' databases, the
fastest record over them): ``p`` is the share of drawn configs that built, ran and were
at 95% of the own best's median, with a Wilson 95% interval. From it, per task and over the
tasks: the chance that a first batch of random configs is at the mark, the chance that
random draws leave room for 5x (3x over ga), and the expected ceiling, the geometric mean
over tasks of exp(E[log k]) with k capped at xgb's random phase (``plan_size / b``
batches), what a searcher at the mark with its first batch would show on average.

    python scripts/space_top.py --db /work/gga/base500.db --samples 128 --seeds 0,1 \\
        --out docs/results/space-top-znver4
    python scripts/space_top.py --db /work/gga/unseen-xgb.db --shapes scripts/unseen_convs.json \\
        --seeds 0,1 --out docs/results/space-top-znver4-unseen
    python scripts/space_top.py --shapes scripts/unseen_convs4.json --seeds 0,1 \\
        $(for f in /work/gga/unseen4-z4-c3b-s*/*/turns/xgb.db; do echo --db $f; done) \\
        --out docs/results/space-top-znver4-unseen4   # xgb's runs of gga_turns.py, pooled
    python scripts/space_top.py --smoke --out /tmp/space-top   # CI: a small real run

Each seed's draws are drawn and timed apart and pooled in the report. Timings are kept in
``OUT/data/<task>-seed<seed>.json``; a second run with the same draws reads them and only
writes the report again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import random
import shlex
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import gga_seed_sources as ss  # noqa: E402
import reproduce_gga as rg  # noqa: E402  (sets TVM_NUM_THREADS before TVM loads)
from orchestrator.loop import build_space  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.task import Task  # noqa: E402

NEAR = 0.95  # the share of the own best that the 95% mark asks for
PLAN_SIZE = 64  # xgb's random phase: its model is first fitted after this many trials
SAMPLES = 128
CHUNK = 16  # drawn configs per measurer call, beside the own best
SMOKE_SAMPLES = 6
TARGETS = (("5x over xgb", 5), ("3x over ga", 3))
BATCH_SIZES = (1, 2, 4, 8)  # the summary's expected ceilings by batch size
SMOKE_SHAPE = {"N": 1, "C": 16, "H": 14, "W": 14, "K": 16, "R": 3, "S": 3, "stride": 1,
               "pad": 1, "dilation": 1}


@dataclass(frozen=True)
class Draws:
    """One seed's draws on a task, timed beside the task's own best: the own best's
    GFLOPS at each timing and each drawn config's (None where it failed to build or run)."""

    seed: int
    best_gflops: tuple[float | None, ...]
    drawn: tuple[Config, ...]
    gflops: tuple[float | None, ...]
    measured_at: str
    chunk: int = CHUNK  # draws per measurer call: the own best's i-th timing is chunk i's

    @property
    def best_timed(self) -> list[float]:
        """The own best's successful timings."""
        return [g for g in self.best_gflops if g is not None]

    @property
    def own_best(self) -> float:
        """The own best's median GFLOPS over its timings (0 if none succeeded)."""
        return statistics.median(self.best_timed) if self.best_timed else 0.0

    @property
    def mark(self) -> float:
        """95% of the own best's median, timed beside these draws."""
        return NEAR * self.own_best if self.own_best > 0 else math.inf

    def _at(self, mark: float) -> int:
        return sum(g is not None and g >= mark for g in self.gflops)

    @property
    def hits(self) -> int:
        return self._at(self.mark)

    @property
    def strict_hits(self) -> int:
        """Draws at 95% of the own best's fastest timing, a stricter mark (closer to the
        runs' view, where the mark is xgb's fastest confirmed timing)."""
        return self._at(NEAR * max(self.best_timed) if self.best_timed else math.inf)

    @property
    def paired_hits(self) -> int:
        """Draws at 95% of the own best's timing in their own chunk (the same measurer
        call): a mark that follows the machine's speed from chunk to chunk, but rests on
        one timing of the own best instead of the median of all."""
        best = self.best_gflops
        return sum(g is not None and i // self.chunk < len(best)
                   and best[i // self.chunk] is not None and g >= NEAR * best[i // self.chunk]
                   for i, g in enumerate(self.gflops))

    @property
    def share(self) -> float:
        """This seed's p."""
        return self.hits / len(self.gflops) if self.gflops else 0.0


@dataclass(frozen=True)
class TaskTop:
    """A task's draws over one or more seeds; each seed's draws count against the mark
    timed beside them."""

    task: Task
    space_size: int
    best: Config
    draws: tuple[Draws, ...]

    @property
    def n(self) -> int:
        return sum(len(d.gflops) for d in self.draws)

    @property
    def ran(self) -> int:
        return sum(g is not None for d in self.draws for g in d.gflops)

    @property
    def hits(self) -> int:
        return sum(d.hits for d in self.draws)

    def _pooled(self, hits: int) -> float:
        return hits / self.n if self.n else 0.0

    @property
    def share(self) -> float:
        """p: the share of drawn configs that ran and were at the mark (failed draws
        count as misses: a searcher pays for them too)."""
        return self._pooled(self.hits)

    @property
    def strict_share(self) -> float:
        """p against the stricter mark (:attr:`Draws.strict_hits`)."""
        return self._pooled(sum(d.strict_hits for d in self.draws))

    @property
    def paired_share(self) -> float:
        """p against the own best's timing in each draw's chunk (:attr:`Draws.paired_hits`)."""
        return self._pooled(sum(d.paired_hits for d in self.draws))


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial share ``hits / n``."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def batch_hit(p: float, batch: int) -> float:
    """The chance that a batch of ``batch`` uniform draws holds a config at the mark."""
    return 1.0 - (1.0 - p) ** batch


def room(p: float, batch: int, factor: int) -> float:
    """The chance that random draws in batches of ``batch`` miss the mark in their first
    ``factor - 1`` batches, so that a searcher at the mark with its first batch is at
    least ``factor`` times sooner."""
    return (1.0 - p) ** (batch * (factor - 1))


def expected_log_batches(p: float, batch: int, cap: int) -> float:
    """E[log k], k the batches random draws need to the mark (geometric), capped at
    ``cap`` (past it the baseline is no longer random)."""
    q = batch_hit(p, batch)
    total, miss = 0.0, 1.0  # miss: the chance that the first j-1 batches all missed
    for j in range(1, cap):
        total += miss * q * math.log(j)
        miss *= 1.0 - q
    return total + miss * math.log(cap)


def expected_ceiling(shares: Sequence[float], batch: int) -> float:
    """The geometric mean over ``shares`` of exp(E[log k]), k capped at xgb's random
    phase (``PLAN_SIZE / batch`` batches): what a searcher at the mark with its first
    batch would show against random draws, in expectation."""
    cap = max(1, PLAN_SIZE // batch)
    return math.exp(statistics.fmean(expected_log_batches(p, batch, cap) for p in shares))


def largest_share(batch: int, factor: int) -> float:
    """The share p above which random draws leave room for ``factor`` on fewer than
    half of the runs: (1-p)^(batch*(factor-1)) = 1/2."""
    return 1.0 - 0.5 ** (1.0 / (batch * (factor - 1)))


def share_for_ceiling(batch: int, factor: float, cap: int) -> float:
    """The share p at which the expected ceiling exp(E[log k]) is ``factor`` (bisection;
    the ceiling falls as p grows)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if expected_log_batches(mid, batch, cap) > math.log(factor) \
            else (low, mid)
    return (low + high) / 2


def draw(space: Space, samples: int, seed: int, exclude: Config) -> list[Config]:
    """Up to ``samples`` distinct valid configs drawn uniformly (``Space.sample``), none
    of them ``exclude``; the same draws for the same task and seed."""
    rng = random.Random(f"{seed}:{space.task.key}")
    found: dict[str, Config] = {}
    for _ in range(samples * 20):
        cfg = space.sample(rng)
        if cfg is None:
            break
        if cfg.key != exclude.key:
            found.setdefault(cfg.key, cfg)
        if len(found) == samples:
            break
    return list(found.values())


def _gflops(task: Task, latency: float | None) -> float | None:
    return None if latency is None else task.flops / latency / 1e9


def _kept(path: Path, best: Config, drawn: Sequence[Config]) -> dict | None:
    """The timings kept at ``path`` if they are of these configs."""
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if data.get("best") != best.key or data.get("drawn") != [c.key for c in drawn]:
        return None
    data.setdefault("chunk", CHUNK)  # files written before the chunk was kept: the default
    if len(data["best_latencies"]) != -(-len(drawn) // data["chunk"]):
        return None
    return data


def time_task(exp: rg.Experiment, task: Task, samples: int, chunk: int, measurer: object,
              seeds: Sequence[int] = (0,), references: Sequence[Path] = ()) -> TaskTop | None:
    """Draw ``samples`` configs of ``task`` per seed and time them in chunks, each chunk
    beside the own best (its fastest record in ``exp.db`` and ``references``; first in
    even chunks, last in odd ones), or read the kept timings; None when no database holds
    a successful record of the task."""
    _, space = build_space(exp.plugins, task, exp.target,
                           exp.space_tune_options)
    dbs = [exp.db, *references]
    own = ss.fastest_record(exp, task, dbs)
    if own is None:
        exp.log(f"{task.name}: no successful record of its own in {_names(dbs)}; skipped")
        return None
    draws = tuple(_seed_draws(exp, space, own.config, samples, chunk, measurer, seed)
                  for seed in seeds)
    return TaskTop(task, space.size, own.config, draws)


def _seed_draws(exp: rg.Experiment, space: Space, best: Config, samples: int, chunk: int,
                measurer: object, seed: int) -> Draws:
    task = space.task
    drawn = draw(space, samples, seed, best)
    path = exp.out / "data" / f"{task.name or task.key_hash}-seed{seed}.json"
    data = _kept(path, best, drawn)
    if data is None:
        exp.log(f"{task.name}: the own best and {len(drawn)} configs drawn with seed {seed}, "
                f"in chunks of {chunk}")
        best_lat: list[float | None] = []
        lat: dict[str, float | None] = {}
        for i in range(0, len(drawn), chunk):
            part = drawn[i:i + chunk]
            order = [best, *part] if (i // chunk) % 2 == 0 else [*part, best]
            for r in measurer.measure(space, exp.target, order):  # type: ignore[attr-defined]
                value = r.latency if r.ok else None
                if r.config.key == best.key:
                    best_lat.append(value)
                else:
                    lat[r.config.key] = value
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        data = {"task": task.to_dict(), "seed": seed, "best": best.key,
                "drawn": [c.key for c in drawn], "measured_at": when, "chunk": chunk,
                "best_latencies": best_lat, "latencies": [lat.get(c.key) for c in drawn]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1))
    return Draws(seed, tuple(_gflops(task, x) for x in data["best_latencies"]), tuple(drawn),
                 tuple(_gflops(task, x) for x in data["latencies"]), data["measured_at"],
                 data["chunk"])


def _names(dbs: Sequence[Path]) -> str:
    return ", ".join(f"`{db}`" for db in dbs)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _trials(p: float, n: int) -> str:
    """1/p, the expected random trials to the mark (more than ``n`` draws if none hit)."""
    return f"{1 / p:.1f}" if p > 0 else f"> {n}"


def task_row(t: TaskTop, batch: int) -> str:
    p = t.share
    lo, hi = wilson(t.hits, t.n)
    trials = _trials(p, t.n)
    rooms = " | ".join(_pct(room(p, batch, f)) for _, f in TARGETS)
    bests = ", ".join(f"{d.own_best:.1f} ({len(d.best_timed)})" for d in t.draws)
    by_seed = ", ".join(_pct(d.share) if d.gflops else "-" for d in t.draws)
    return (f"| {t.task.name} | {t.space_size} | {bests} | {t.n} | {t.ran} | {t.hits} | "
            f"{_pct(p)} [{_pct(lo)}, {_pct(hi)}] | {by_seed} | {trials} | "
            f"{_pct(batch_hit(p, batch))} | {rooms} | "
            f"{expected_ceiling([p], batch):.2f}x | "
            f"{_pct(t.strict_share)} | {_pct(t.paired_share)} |")


def summary(tops: Sequence[TaskTop], batch: int) -> list[str]:
    """What the shares leave of the targets, over the tasks."""
    if not tops:
        return ["No task was timed."]
    cap = max(1, PLAN_SIZE // batch)
    shares = [t.share for t in tops]
    ceiling = expected_ceiling(shares, batch)
    p5, p3 = share_for_ceiling(batch, 5, cap), share_for_ceiling(batch, 3, cap)
    lines = [f"- The share of drawn configs at the mark: median {_pct(statistics.median(shares))} "
             f"over {len(tops)} tasks (lowest {_pct(min(shares))}, highest {_pct(max(shares))}).",
             f"- Expected ceiling in batches of {batch}, the geometric mean over the tasks of "
             f"what a searcher at the mark with its first batch would show against random "
             f"draws: {ceiling:.2f}x. A task's expected ceiling is 5x where p = "
             f"{_pct(p5)} and 3x where p = {_pct(p3)}: "
             f"{sum(p < p5 for p in shares)} and {sum(p < p3 for p in shares)} of "
             f"{len(tops)} tasks "
             f"have a p under those. At the median p random draws need "
             f"{_trials(statistics.median(shares), 0)} trials to the mark."]
    strict = [t.strict_share for t in tops]
    strict_ceiling = expected_ceiling(strict, batch)
    lines.append(
        f"- Against 95% of the own best's fastest timing instead of its median (a stricter "
        f"mark, closer to the runs' view): median p {_pct(statistics.median(strict))}, "
        f"expected ceiling {strict_ceiling:.2f}x.")
    paired = [t.paired_share for t in tops]
    lines.append(
        f"- Against 95% of the own best's timing in each draw's own chunk (a mark that "
        f"follows the machine's speed from one measurer call to the next, on one timing of "
        f"the own best): median p {_pct(statistics.median(paired))}, expected ceiling "
        f"{expected_ceiling(paired, batch):.2f}x.")
    lines.append(
        "- The expected ceiling by batch size, against the median mark (against the fastest "
        "timing's): " + ", ".join(
            f"{b}: {expected_ceiling(shares, b):.2f}x ({expected_ceiling(strict, b):.2f}x)"
            for b in BATCH_SIZES) + ". Larger batches leave less: a random hit anywhere in "
        "a batch counts at the batch's end, as does the searcher's.")
    seeds = sorted({d.seed for t in tops for d in t.draws})
    if len(seeds) > 1:
        apart = [expected_ceiling([d.share for t in tops for d in t.draws
                                   if d.seed == seed and d.gflops], batch) for seed in seeds]
        lines.append(f"- The expected ceiling by seed ({', '.join(map(str, seeds))}): "
                     + ", ".join(f"{c:.2f}x" for c in apart) + ".")
    for name, factor in TARGETS:
        top = largest_share(batch, factor)
        above = sum(wilson(t.hits, t.n)[0] > top for t in tops)
        mean_room = statistics.fmean(room(p, batch, factor) for p in shares)
        lines.append(
            f"- {name}: random draws leave room for it on fewer than half of the runs "
            f"where p > {_pct(top)}; the whole 95% interval of p is above that on {above} of "
            f"{len(tops)} tasks; averaged over the tasks, room on {_pct(mean_room)} of runs.")
    return lines


def report(exp: rg.Experiment, tops: Sequence[TaskTop], batch: int, samples: int,
           header: str, command: str, smoke: bool = False,
           references: Sequence[Path] = ()) -> Path:
    when = sorted(d.measured_at for t in tops for d in t.draws)
    seeds = sorted({d.seed for t in tops for d in t.draws})
    lines = ["# The top of the space: random configs at the 95% mark", "", header, "",
             f"Command: `{command}`", ""]
    if smoke:
        lines += ["Smoke run (CI): one small shape, its own best from a short random run, "
                  "a few draws; the figures say nothing of any real space.", ""]
    lines += [
        f"Each task's space is drawn from uniformly ({samples} distinct valid configs asked "
        f"for per seed, seeds {', '.join(map(str, seeds))}, `Space.sample` as xgb's random "
        f"phase draws), and each seed's draws are timed beside the task's fastest record in "
        f"{_names([exp.db, *references])}, timed again with every chunk of draws in the "
        "same measurer call. A "
        "seed's mark is 95% of the own best's median GFLOPS over the timings beside its "
        "draws (the number of timings in brackets), as in the turns reports' timed-again "
        "view; p is the share of all seeds' draws at their mark (a draw that failed counts "
        f"as a miss), with a Wilson 95% interval, and by seed. Batches of {batch}: a batch "
        "of random draws at the mark; room for 5x (3x), the chance that random draws miss "
        "the mark in their first 4 (2) batches, so that a searcher at the mark with its "
        "first batch is at least 5x (3x) sooner; expected ceiling, exp(E[log k]) for k the "
        f"batches random draws need, capped at {max(1, PLAN_SIZE // batch)} (xgb's "
        f"{PLAN_SIZE} random trials).", ""]
    if when:
        lines += [f"Each task's draws of each seed finished between {when[0]} and "
                  f"{when[-1]} UTC.", ""]
    lines += ["| task | space size | own best GFLOPS by seed (timings) | drawn | ran | "
              "at the mark | p [95% interval] | p by seed | random trials to the mark (1/p) | "
              "a first batch at the mark | room for 5x over xgb | room for 3x over ga | "
              "expected ceiling | p against the own best's fastest timing | "
              "p against the own best's timing in the same chunk |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [task_row(t, batch) for t in tops]
    lines += ["", *summary(tops, batch), ""]
    path = exp.out / "space-top.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))
    return path


def _smoke_history(exp: rg.Experiment, task: Task) -> None:
    from orchestrator.loop import tune

    tune(task, target=exp.target, db=str(exp.db), plugins=exp.plugins, searcher="random",
         trials=6, batch_size=2, seed=0)


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins
    from orchestrator.target import detect_host

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", action="append", default=[],
                    help="history database holding each task's own tuning; repeat it for "
                    "the databases of several runs, and each task's own best is its fastest "
                    "record over them")
    ap.add_argument("--layers", help="comma-separated ResNet-18 layers [all of resnet18_conv; "
                    "none with --shapes]")
    ap.add_argument("--shapes", action="append", default=[], metavar="FILE",
                    help="a suite file of conv2d shapes, each with its own tuning in --db "
                    "(then only the --layers named are timed too)")
    ap.add_argument("--samples", type=int,
                    help=f"distinct configs drawn per task [{SAMPLES}; {SMOKE_SAMPLES} with "
                    "--smoke]")
    ap.add_argument("--chunk", type=int, default=CHUNK,
                    help="drawn configs timed per measurer call, beside the own best "
                    "[%(default)s]")
    ap.add_argument("--batch-size", type=int, default=2,
                    help="the batches the figures are for [%(default)s]")
    ap.add_argument("--seeds", default="0",
                    help="comma-separated seeds of the draws, pooled [%(default)s]")
    ap.add_argument("--out", default="docs/results/space-top", help="report directory")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: one small shape, its own history made on the spot")
    args = ap.parse_args(argv)
    if args.samples is None:
        args.samples = SMOKE_SAMPLES if args.smoke else SAMPLES
    for name in ("samples", "chunk", "batch_size"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    try:
        seeds = sorted({int(x) for x in args.seeds.split(",")})
    except ValueError:
        ap.error(f"--seeds must be comma-separated integers, got {args.seeds!r}")
    layers, _ = rg.chosen_layers(ap, argparse.Namespace(
        smoke=False, layers=args.layers, history_layers=None, shapes=args.shapes))
    shapes = [t for f in args.shapes for t in rg.chosen_shapes(ap, argparse.Namespace(shapes=f))]
    if not args.smoke and not args.db:
        ap.error("give --db, a history database holding each task's own tuning (or --smoke)")
    missing = [db for db in args.db if not Path(db).exists()]
    if missing:
        ap.error(f"--db {missing[0]}: no such file; name an existing history database")
    references = [] if args.smoke else [Path(db) for db in args.db[1:]]
    with tempfile.TemporaryDirectory(prefix="space-top-") as scratch:
        tasks = ((*layers, *shapes) if not args.smoke
                 else (Task.create("conv2d", SMOKE_SHAPE, name="smoke"),))
        db = Path(scratch) / "smoke.db" if args.smoke else Path(args.db[0])
        exp = rg.Experiment(layers=tasks, history_layers=(), trials=0, budgets={}, db=db,
                            work=db.parent, out=Path(args.out), target=detect_host(),
                            plugins=load_plugins())
        if args.smoke:
            _smoke_history(exp, tasks[0])
        measurer = exp.plugins.create("measurer", exp.measurer, **exp.measurer_options)
        try:
            tops = [t for task in tasks
                    if (t := time_task(exp, task, args.samples, args.chunk, measurer, seeds,
                                       references))]
        finally:
            measurer.close()
        command = "python scripts/space_top.py " + " ".join(
            shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
        path = report(exp, tops, args.batch_size, args.samples, machine_header(),
                      command.strip(), smoke=args.smoke, references=references)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
