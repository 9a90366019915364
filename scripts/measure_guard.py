"""Does the local measurer's contention guard make a config's timings agree with each other?

On a shared VM a neighbour sometimes slows the whole machine for seconds (about 0.6x on
the 2-core EPYC VMs), and a config timed meanwhile looks worse than it is. This times the
same configs several rounds over with two local measurers side by side: ``plain`` (no
guard) and ``guarded`` (``guard``, see ``plugins/measure/sentinel.py``), alternating
which goes first in each round. For every config that both timed in every round, each
timing is divided by the median of all that config's timings (by both measurers); the
report gives, per measurer, how often a timing fell below 0.9x, 0.8x and 0.7x of that,
the spread of each config's timings (slowest / fastest round), and what the guard cost
in seconds.

    python scripts/measure_guard.py --layers r18_l1,r18_l3 --configs 24 --rounds 8 \\
        --out docs/results/measure-guard [--db history.db]

Configs are drawn from each layer's space (``--seed``), or with ``--db`` they are the
layer's best distinct configs in that history database, the ones a tuner cares about.
The raw timings go to ``measure-guard.json`` beside the report, which ``--report-only``
reads again.
"""

from __future__ import annotations

import argparse
import json
import random
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import machine_header  # noqa: E402
from tuna_measurement_noise import quantile  # noqa: E402

import reproduce_gga as rg  # noqa: E402
from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.loop import TuneOptions, build_space  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.target import detect_host  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from plugins.measure.local import LocalMeasurer  # noqa: E402

MEASURERS = ("plain", "guarded")
LOW = (0.9, 0.8, 0.7)
RAW = "measure-guard.json"


@dataclass(frozen=True)
class Timing:
    layer: str
    config: str     # the config's key
    measurer: str
    round: int
    gflops: float   # 0 for a failed measurement


@dataclass(frozen=True)
class Summary:
    """One measurer's timings, each against the median timing of its config."""

    measurer: str
    timings: int
    below: dict[float, int]   # timings below each LOW fraction of their config's median
    spread_median: float      # slowest / fastest round of a config, median over configs
    spread_p90: float
    seconds: float            # wall seconds the measurer took, builds included
    retimed: int
    slowed: int


def summarize(timings: Sequence[Timing], seconds: dict[str, float],
              counts: dict[str, dict[str, int]]) -> list[Summary]:
    """Per measurer, over the configs that every measurer timed successfully in every
    round (a failed timing drops its config from both)."""
    rounds = {t.round for t in timings}
    by_config: dict[tuple[str, str], list[Timing]] = {}
    for t in timings:
        by_config.setdefault((t.layer, t.config), []).append(t)
    kept = {k: ts for k, ts in by_config.items()
            if len(ts) == len(rounds) * len(MEASURERS) and all(t.gflops > 0 for t in ts)}
    out = []
    for m in MEASURERS:
        ratios, spreads = [], []
        for ts in kept.values():
            usual = statistics.median(t.gflops for t in ts)
            mine = [t.gflops for t in ts if t.measurer == m]
            ratios += [g / usual for g in mine]
            spreads.append(max(mine) / min(mine))
        out.append(Summary(
            m, len(ratios), {f: sum(r < f for r in ratios) for f in LOW},
            statistics.median(spreads) if spreads else float("nan"),
            quantile(spreads, 0.9) if spreads else float("nan"),
            seconds.get(m, 0.0), counts.get(m, {}).get("retimed", 0),
            counts.get(m, {}).get("slowed", 0)))
    return out


def report(raw: dict, header: str, command: str) -> str:
    timings = [Timing(**t) for t in raw["timings"]]
    summaries = summarize(timings, raw["seconds"], raw["counts"])
    configs = len({(t.layer, t.config) for t in timings})
    lines = [
        "# The contention guard: do a config's timings agree?", "", header, "",
        f"Command: `{command}`", "",
        f"Layers {', '.join(raw['layers'])}; {configs} configs ({raw['source']}), each timed "
        f"in {raw['rounds']} rounds by two local measurers side by side, `plain` (no guard) "
        f"and `guarded` (guard={raw['guard']}, guard_wait={raw['guard_wait']} s), which "
        "took turns going first. Each timing is divided by the median of all its config's "
        "timings (by both measurers); only configs that both timed successfully in every "
        "round count.",
        "", f"Measured from {raw['started']} to {raw['finished']} UTC.", "",
        "| measurer | timings | below 0.9x of the config's median | below 0.8x | below 0.7x | "
        "spread median | spread p90 | wall seconds | timings thrown away | "
        "slowed timings kept |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summaries:
        share = [f"{s.below[f]} ({s.below[f] / s.timings:.1%})" if s.timings else "-"
                 for f in LOW]
        lines.append(f"| {s.measurer} | {s.timings} | {' | '.join(share)} | "
                     f"{s.spread_median:.3f} | {s.spread_p90:.3f} | {s.seconds:.0f} | "
                     f"{s.retimed} | {s.slowed} |")
    plain, guarded = summaries
    if plain.seconds > 0:
        lines += ["", f"The guarded measurer took {guarded.seconds / plain.seconds:.2f}x the "
                  "plain one's wall seconds."]
    lines += ["", "Spread: a config's slowest round over its fastest round, by that measurer "
              "alone. A timing thrown away is one the guard took again after its sentinel "
              "was slowed; a slowed timing kept is one whose wait ran out."]
    return "\n".join(lines) + "\n"


def configs_for(space: Space, task: Task, count: int, seed: int, db: Path | None) -> list[Config]:
    """``count`` distinct configs: the best in ``db`` for ``task``, or drawn from ``space``."""
    if db is not None:
        from history.store import HistoryStore

        store = HistoryStore.open(db, create=False)
        try:
            task_id = store.find_task(task)
            records = store.best(task_id, k=count) if task_id is not None else []
        finally:
            store.close()
        if not records:
            raise OrchestratorError(f"{db} has no results of {task.name}; leave out --db to "
                                    "draw configs from the space")
        return [r.result.config for r in records]
    rng = random.Random(seed)
    out: dict[str, Config] = {}
    for _ in range(count * 50):
        cfg = space.sample(rng)
        if cfg is not None:
            out.setdefault(cfg.key, cfg)
        if len(out) >= count:
            break
    return list(out.values())


def measure(args: argparse.Namespace, tasks: Sequence[Task]) -> dict:
    target = detect_host()
    plugins = load_plugins()
    spaces = {t.name: build_space(plugins, t, target, TuneOptions())[1] for t in tasks}
    chosen = {t.name: configs_for(spaces[t.name], t, args.configs, args.seed, args.db)
              for t in tasks}
    measurers = {"plain": LocalMeasurer(guard=0),
                 "guarded": LocalMeasurer(guard=args.guard, guard_wait=args.guard_wait)}
    timings: list[Timing] = []
    seconds = {m: 0.0 for m in MEASURERS}
    started = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    try:
        for rnd in range(args.rounds):
            order = MEASURERS if rnd % 2 == 0 else MEASURERS[::-1]
            for task in tasks:
                for m in order:
                    t0 = time.perf_counter()
                    results = measurers[m].measure(spaces[task.name], target, chosen[task.name])
                    seconds[m] += time.perf_counter() - t0
                    timings += [Timing(task.name, r.config.key, m, rnd, r.gflops(task.flops))
                                for r in results]
            print(f"round {rnd + 1}/{args.rounds} done; thrown away so far: "
                  f"{measurers['guarded'].guard_counts['retimed']}", flush=True)
    finally:
        for m in measurers.values():
            m.close()
    return {"layers": [t.name for t in tasks], "rounds": args.rounds, "guard": args.guard,
            "guard_wait": args.guard_wait,
            "source": f"best in {args.db}" if args.db else f"drawn with seed {args.seed}",
            "started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
            "seconds": seconds,
            "counts": {m: dict(measurers[m].guard_counts) for m in MEASURERS},
            "timings": [t.__dict__ for t in timings]}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", default="r18_l1,r18_l3",
                    help="comma-separated ResNet-18 layer names of the suite")
    ap.add_argument("--configs", type=int, default=24, help="configs per layer")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--guard", type=float, default=0.25)
    ap.add_argument("--guard-wait", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--db", type=Path, help="take each layer's best configs from this history")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--report-only", action="store_true",
                    help=f"write the report from the {RAW} already in --out")
    args = ap.parse_args(argv)
    if args.configs < 1 or args.rounds < 2:
        ap.error("--configs must be >= 1 and --rounds >= 2 (a spread needs two rounds)")
    if args.guard <= 0 or args.guard_wait < 0:
        ap.error("--guard must be > 0 and --guard-wait >= 0")
    if args.db is not None and not args.db.exists():
        ap.error(f"--db {args.db} does not exist")
    layers = {t.name: t for t in rg.resnet_layers()}
    names = [n for n in args.layers.split(",") if n]
    unknown = [n for n in names if n not in layers]
    if unknown or not names:
        ap.error(f"unknown layer(s) {', '.join(unknown) or '(none given)'}; "
                 f"known: {', '.join(layers)}")
    raw_path = args.out / RAW
    if args.report_only:
        if not raw_path.exists():
            ap.error(f"{raw_path} does not exist; run without --report-only first")
        raw = json.loads(raw_path.read_text())
    else:
        raw = measure(args, [layers[n] for n in names])
        args.out.mkdir(parents=True, exist_ok=True)
        raw_path.write_text(json.dumps(raw, indent=1) + "\n")
    command = "python scripts/measure_guard.py " + shlex.join(sys.argv[1:] if argv is None
                                                              else list(argv))
    path = args.out / "measure-guard.md"
    path.write_text(report(raw, machine_header(), command))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
