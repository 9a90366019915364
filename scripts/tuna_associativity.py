"""Where cache associativity changes Tuna's data-movement features (no hardware needed).

For each workload, the configs reproduce_tuna.py samples (same seed, same draw) are
scheduled, and Algorithm 2 is run on their loop trees twice: with the cache as a
capacity only (the paper's model, feature version 4) and with the cache's sets
counted (version 5, ``plugins/tuna/datamove.py``). The report says how many configs'
L1 and L2 movements change and by how much, so a change of the model can be checked
against the workloads it actually touches. Code generation is not needed: only the
scheduled TIR is walked.

    python scripts/tuna_associativity.py --out docs/results/tuna-associativity.md
    python scripts/tuna_associativity.py --workloads 'dense:M=64,K=1024,N=1024' --sample 50
    python scripts/tuna_associativity.py --l1d 32K:8 --l2 1M:8   # another CPU's caches
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from machine import machine_header  # noqa: E402
from orchestrator.errors import InvalidConfigError, OrchestratorError  # noqa: E402
from orchestrator.manager import load_plugins  # noqa: E402
from orchestrator.target import TargetInfo, resolve_target  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from plugins.tuna.datamove import LINE_BYTES, data_movement  # noqa: E402
from plugins.tuna.features import scheduled_module  # noqa: E402
from plugins.tuna.looptree import loop_tree  # noqa: E402
from reproduce_tuna import (  # noqa: E402
    DEFAULT_WORKLOADS,
    draw_sample,
    make_space,
    parse_workloads,
)


@dataclass(frozen=True)
class Change:
    """One workload's sample: how many configs the set-aware counts change, per level."""

    task: Task
    configs: int
    changed: dict[str, int]
    ratios: dict[str, list[float]]  # set-aware / capacity-only, over the changed configs


def movements(tree: object, target: TargetInfo) -> dict[str, tuple[float, float]]:
    """(capacity only, sets counted) L1 and L2 movement of one loop tree."""
    out = {}
    for level, size in ((1, target.l1d_bytes), (2, target.l2_bytes)):
        lines = size / LINE_BYTES
        plain = data_movement(tree, lines, LINE_BYTES).total_movement
        sets = data_movement(tree, lines, LINE_BYTES, target.cache_sets(level)).total_movement
        out[f"l{level}"] = (plain, sets)
    return out


def study(task: Task, target: TargetInfo, plugins: object, sample: int, seed: int) -> Change:
    _, space = make_space(plugins, task, target)
    configs = draw_sample(space, sample, seed)
    changed = {"l1": 0, "l2": 0}
    ratios: dict[str, list[float]] = {"l1": [], "l2": []}
    counted = 0
    for config in configs:
        try:
            mod = scheduled_module(space.schedule_fn, task, config, target)
        except InvalidConfigError:
            continue
        counted += 1
        tree = loop_tree(mod["main"], max(1, int(target.cores)))
        for level, (plain, sets) in movements(tree, target).items():
            if sets != plain:
                changed[level] += 1
                ratios[level].append(sets / max(plain, 1.0))
    return Change(task, counted, changed, ratios)


def parse_cache(text: str) -> tuple[int, int]:
    """``SIZE:WAYS`` (``32K:8``, ``1M:16``) as (bytes, ways)."""
    try:
        size, ways = text.upper().split(":")
        unit = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        value = (int(size.rstrip("KM")) * unit, int(ways))
    except ValueError:
        value = (0, 0)
    if value[0] <= 0 or value[1] <= 0:
        raise OrchestratorError(f"cache {text!r}: expected SIZE:WAYS such as 32K:8 or 1M:16")
    return value


def _ratio_text(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def report(changes: list[Change], target: TargetInfo, args: argparse.Namespace,
           seconds: float) -> str:
    lines = [
        "# Tuna data movement: where counting cache sets changes the features",
        "",
        machine_header(),
        "",
        f"Command: `python scripts/tuna_associativity.py {' '.join(sys.argv[1:])}`".rstrip(),
        "",
        f"Target: {target.arch}{' (caches as given)' if args.l1d or args.l2 else ''}, L1d {target.l1d_bytes // 1024} KiB {target.l1d_ways}-way "
        f"({target.cache_sets(1)} sets), L2 {target.l2_bytes // 1024} KiB "
        f"{target.l2_ways}-way ({target.cache_sets(2)} sets), {target.cores} cores. "
        f"Configs: the sample reproduce_tuna.py draws (up to {args.sample} per workload, "
        f"seed {args.seed}). {seconds:.0f} s, no code generation, nothing run.",
        "",
        "A config is *changed* at a level when Algorithm 2 with the cache's sets counted "
        "moves a different number of lines than with the capacity alone; the ratio is "
        "set-aware / capacity-only over the changed configs (median, then range).",
        "",
        "| workload | configs | L1 changed | L1 ratio | L2 changed | L2 ratio |",
        "|---|---:|---:|---|---:|---|",
    ]
    for c in changes:
        lines.append(f"| {c.task.name} | {c.configs} | {c.changed['l1']} | "
                     f"{_ratio_text(c.ratios['l1'])} | {c.changed['l2']} | "
                     f"{_ratio_text(c.ratios['l2'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", help="suite names or ';'-separated op:K=V,... shapes "
                                       "[default: reproduce_tuna.py's 10 workloads]")
    p.add_argument("--sample", type=int, default=500, help="configs per workload")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="markdown report [default: print it]")
    p.add_argument("--l1d", help="L1d as SIZE:WAYS instead of this CPU's (e.g. 32K:8)")
    p.add_argument("--l2", help="L2 as SIZE:WAYS instead of this CPU's (e.g. 1M:8)")
    p.add_argument("--cores", type=int, help="cores the kernels run on [default: every core]")
    args = p.parse_args(argv)
    target = resolve_target("host")
    if args.l1d:
        size, ways = parse_cache(args.l1d)
        target = dataclasses.replace(target, l1d_bytes=size, l1d_ways=ways)
    if args.l2:
        size, ways = parse_cache(args.l2)
        target = dataclasses.replace(target, l2_bytes=size, l2_ways=ways)
    if args.cores:
        target = target.with_cores(args.cores)
    tasks = parse_workloads(args.workloads or ",".join(DEFAULT_WORKLOADS))
    plugins = load_plugins()
    start = time.perf_counter()
    changes = []
    for task in tasks:
        c = study(task, target, plugins, args.sample, args.seed)
        print(f"{task.name}: {c.configs} configs, L1 changed {c.changed['l1']}, "
              f"L2 changed {c.changed['l2']}", file=sys.stderr, flush=True)
        changes.append(c)
    text = report(changes, target, args, time.perf_counter() - start)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
