"""Seconds the re-timings of one config cost under ``tune --confirm N``, made as the loop
made them before stop 94 (``apart``: N measurements of the config, each built again) and
as it makes them now (``batch``: one measurement of the config N times, which the local
measurer builds once and times N times), side by side.

Under ``--confirm`` every new best is timed N more times before it counts, and a run's
first result is always a new best: these seconds come between its first batch and its
first result, the seconds issue 4's time targets are won or lost at. Each config of
each shape is re-timed both ways in one round, the order of the ways alternating from
config to config. Reported: median seconds per way, and the median of the per-config
ratios ``apart / batch`` with its distribution-free interval (``scripts/paired.py``);
and the medians of the two ways' latencies, which should agree (the same kernel).

    python scripts/retime_cost.py --shapes scripts/unseen_convs4.json --configs 8 \\
        --confirm 3 --out docs/results/retime-cost-znver3/retime-cost.md
    python scripts/retime_cost.py --smoke --out /tmp/retime.md   # CI: a small real run
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

from machine import machine_header, write_report  # noqa: E402
from paired import paired_ratio  # noqa: E402
from reproduce_tuna import draw_sample  # noqa: E402

from orchestrator.errors import OrchestratorError  # noqa: E402
from orchestrator.loop import TuneOptions, build_space  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.space import Config, Space  # noqa: E402
from orchestrator.suite import read_suite  # noqa: E402
from orchestrator.target import TargetInfo, detect_host  # noqa: E402
from orchestrator.task import Task  # noqa: E402

WAYS = ("apart", "batch")
SMOKE_SHAPE = {"N": 1, "C": 16, "H": 14, "W": 14, "K": 16, "R": 3, "S": 3, "stride": 1, "pad": 1}


@dataclass(frozen=True)
class Sample:
    """One config's re-timings made one way: wall seconds, and the median latency (s) of
    the timings that succeeded (None when none did)."""

    shape: str
    index: int
    way: str
    seconds: float
    latency: float | None


def retime(measurer, space: Space, target: TargetInfo, config: Config, times: int,
           way: str) -> tuple[float, float | None]:
    """Time ``config`` ``times`` times ``way``; (wall seconds, median latency)."""
    start = time.perf_counter()
    if way == "apart":
        results = [r for _ in range(times)
                   for r in measurer.measure(space, target, [config])]
    else:
        results = measurer.measure(space, target, [config] * times)
    seconds = time.perf_counter() - start
    ok = [r.latency for r in results if r.ok]
    return seconds, statistics.median(ok) if ok else None


def measure(tasks: list[Task], configs: int, times: int, seed: int) -> list[Sample]:
    """Both ways for ``configs`` configs of each task, on one local measurer."""
    plugins = load_plugins()
    target = detect_host()
    measurer = plugins.create("measurer", "local")
    samples: list[Sample] = []
    try:
        for task in tasks:
            _, space = build_space(plugins, task, target, TuneOptions())
            drawn = draw_sample(space, configs, seed)
            measurer.measure(space, target, drawn[:1])  # workers warm, task data made
            for i, config in enumerate(drawn):
                order = WAYS if i % 2 == 0 else WAYS[::-1]
                for way in order:
                    seconds, latency = retime(measurer, space, target, config, times, way)
                    samples.append(Sample(task.name or task.label(), i, way, seconds, latency))
                print(f"  {task.name}: config {i + 1} of {len(drawn)}", flush=True)
    finally:
        measurer.close()
    return samples


def report(samples: list[Sample], times: int, command: str, note: str = "") -> str:
    """The report: per shape and over all, the two ways' median seconds and the paired
    ratio ``apart / batch``."""
    by = {(s.shape, s.index, s.way): s for s in samples}
    shapes = list(dict.fromkeys(s.shape for s in samples))

    def column(shape: str | None, way: str) -> list[Sample]:
        keys = sorted({(s.shape, s.index) for s in samples if shape in (None, s.shape)})
        return [by[(sh, i, way)] for sh, i in keys if (sh, i, way) in by]

    def row(label: str, shape: str | None) -> str:
        apart, batch = column(shape, "apart"), column(shape, "batch")
        ratio = paired_ratio([s.seconds for s in batch], [s.seconds for s in apart])
        lat = [s.latency for s in apart if s.latency], [s.latency for s in batch if s.latency]
        lat_cells = " | ".join(f"{statistics.median(x) * 1e6:.1f}" if x else "-" for x in lat)
        return (f"| {label} | {len(apart)} | {statistics.median(s.seconds for s in apart):.2f} | "
                f"{statistics.median(s.seconds for s in batch):.2f} | "
                f"{ratio.text() + f' at {ratio.level:.1%}' if ratio else '-'} | {lat_cells} |")

    lines = [f"# Re-timing a config {times} times: built each time, or built once", "",
             machine_header(), "", f"Command: `{command}`", ""]
    if note:
        lines += [note, ""]
    lines += [
        f"Each config is timed {times} more times as `tune --confirm {times}` times a new "
        "best: `apart`, one measurement of the config at a time, each built again (the loop "
        f"before stop 94); `batch`, one measurement of the config {times} times, built once "
        "by the local measurer (the loop now). Seconds are wall seconds of the measurer's "
        "calls; the order of the two ways alternates from config to config. Configs are "
        "drawn with each space's own sampler.", "",
        "| shape | configs | median s, apart | median s, batch | apart / batch [interval] "
        "| median latency (us), apart | median latency (us), batch |",
        "|---|---|---|---|---|---|---|"]
    lines += [row(shape, shape) for shape in shapes]
    if len(shapes) > 1:
        lines.append(row("all", None))
    lines += ["", "All configs (seconds; latency in us):", "",
              "| shape | config | apart | batch | latency, apart | latency, batch |",
              "|---|---|---|---|---|---|"]
    for shape in shapes:
        for a, b in zip(column(shape, "apart"), column(shape, "batch"), strict=True):
            lat = [f"{s.latency * 1e6:.1f}" if s.latency else "-" for s in (a, b)]
            lines.append(f"| {shape} | {a.index + 1} | {a.seconds:.2f} | {b.seconds:.2f} | "
                         f"{lat[0]} | {lat[1]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="scripts/unseen_convs4.json", metavar="FILE",
                    help="a suite file of the shapes whose configs are re-timed")
    ap.add_argument("--configs", type=int, default=8, help="configs per shape [8]")
    ap.add_argument("--confirm", type=int, default=3, help="re-timings per config [3]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("docs/results/retime-cost.md"))
    ap.add_argument("--smoke", action="store_true",
                    help="CI: one small conv2d, 2 configs, 2 re-timings each")
    args = ap.parse_args(argv)
    if args.configs < 1 or args.confirm < 1:
        ap.error(f"--configs and --confirm must be >= 1, got {args.configs} and {args.confirm}")
    if args.smoke:
        tasks = [Task.create("conv2d", SMOKE_SHAPE, name="smoke_c16")]
        args.configs, args.confirm = 2, 2
    else:
        try:
            tasks = read_suite(args.shapes)
        except OrchestratorError as exc:
            ap.error(f"--shapes: {exc}")
    samples = measure(tasks, args.configs, args.confirm, args.seed)
    note = "Smoke run (CI): one small shape, 2 configs; not a measurement." if args.smoke else ""
    command = "python scripts/retime_cost.py " + " ".join(sys.argv[1:] if argv is None else argv)
    write_report(args.out, report(samples, args.confirm, command, note))
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
