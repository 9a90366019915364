"""Searchers over many seeds on a simulated machine: each left-out layer's speed comes from
a surrogate fitted on real measurements of it (``surrogate.py``), not from timing.

On the machine one seed per setting is what a session affords, and verdicts flip between
timing sessions. Here each searcher runs with many seeds, in trials: the history of the
other layers is the real one (``--db``), only the left-out layer's measurements are
simulated. Per seed, xgb's best after 500 trials sets the 95% mark and each searcher's trials to
reach it are counted, on the surrogate's exact speeds of what it measured (``--noise``
perturbs what the searchers are told, as timing noise does). The report says which
settings are worth a run on the machine; it measures nothing there.

    python scripts/gga_simulated.py --db /work/gga/base500.db \\
        --data '/work/gga/base-all.db' --data '/work/gga/turns500/{layer}/turns/gga*.db' \\
        --seeds 8 --out docs/results/gga-simulated --variant gga-x=gga:probe=0

Curves are kept in ``OUT/data/<layer>.json``; a second run computes only what is missing.
``--pair A:B`` adds a table of setting B against setting A seed by seed (the other tables
compare each setting with xgb and gga); with kept curves it only rewrites the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import glob
import itertools
import json
import shlex
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from script_main import exit_status  # noqa: E402

import reproduce_gga as rg  # noqa: E402
from history.store import HistoryStore  # noqa: E402
from orchestrator.loop import build_space, tune  # noqa: E402
from orchestrator.task import Task  # noqa: E402
from surrogate import NAME, Accuracy, Surrogate, SurrogateMeasurer, accuracy, layer_data  # noqa: E402

MIN_CONFIGS = 20  # fewer measured configs of a layer than this make no surrogate
BASE = (rg.Variant("xgb", "xgb", uses_history=False), rg.Variant("gga", "gga"))


@dataclass(frozen=True)
class LayerRuns:
    """One layer: the surrogate's accuracy and each searcher's best-so-far per seed
    (the surrogate's exact GFLOPS of the best config measured by each trial)."""

    task: Task
    configs: int
    records: int
    accuracy: Accuracy
    curves: dict[str, dict[int, list[float]]]  # searcher -> seed -> best-so-far


def best_so_far(values: Sequence[float]) -> list[float]:
    return list(itertools.accumulate(values, max))


def trials_to(curve: Sequence[float], mark: float) -> int | None:
    return next((i + 1 for i, v in enumerate(curve) if v >= mark), None)


def simulate(exp: rg.Experiment, task: Task, variant: rg.Variant, seed: int, model: Surrogate,
             history: Path, noise: float, work: Path) -> list[float]:
    """One simulated run (``exp.budget`` trials, batches of ``exp.batch_size``): its
    best-so-far by trial."""
    db = work / f"{variant.name}-{seed}.db"
    shutil.copy(history if variant.uses_history else history.with_name("empty.db"), db)
    measurer = SurrogateMeasurer({task.key: model}, noise, seed)
    options = dataclasses.replace(exp.options(variant), seed=seed, confirm=0)
    tune(task, target=exp.target, options=options, db=db, plugins=exp.plugins,
         shared_measurer=measurer)
    db.unlink()
    return best_so_far(model.gflops(measurer.measured).tolist()) if measurer.measured else []


def signature(exp: rg.Experiment, variant: rg.Variant) -> str:
    """What a kept curve was simulated with: a curve kept under the same name with
    other options, another budget or another batch size is simulated again (a curve
    kept before batch sizes were signed was of batches of 8)."""
    parts: list = [variant.searcher, exp.options(variant).searcher_options,
                   exp.budget(variant.name), variant.uses_history]
    if exp.batch_size != 8:
        parts.append(exp.batch_size)
    return json.dumps(parts, sort_keys=True)


def layer_runs(exp: rg.Experiment, task: Task, variants: Sequence[rg.Variant], seeds: int,
               data: Sequence[str], noise: float, oracle: str = "model") -> LayerRuns:
    path = exp.out / "data" / f"{task.name}.json"
    _, space = build_space(exp.plugins, task, exp.target,
                           exp.space_tune_options)
    dbs = sorted({Path(p) for pattern in data for p in glob.glob(pattern.format(layer=task.name))})
    ld = layer_data(task, exp.target, dbs)
    if len(ld.configs) < MIN_CONFIGS:
        raise SystemExit(f"{task.name}: {len(ld.configs)} measured configs in {', '.join(map(str, dbs))}; "
                         "give --data databases that hold this layer's tuning")
    measured = f"{ld.records} measurements of {len(ld.configs)} configs"
    kept = json.loads(path.read_text()) if path.exists() else {}
    if (kept.get("noise", noise), kept.get("oracle", "model"), kept.get("data")) != (
            noise, oracle, measured):
        kept = {}  # another surrogate: nothing kept holds
    signatures = {v.name: signature(exp, v) for v in variants}
    old = kept.get("signatures", {})
    curves: dict[str, dict[int, list[float]]] = {
        s: {int(k): v for k, v in c.items()} for s, c in kept.get("curves", {}).items()
        if s not in old or s not in signatures or old[s] == signatures[s]}
    acc = (Accuracy(**kept["accuracy"]) if "accuracy" in kept else accuracy(space, ld))
    model = Surrogate(space, measured_first=oracle == "mixed").fit(ld.configs, ld.gflops)
    todo = [(v, s) for v in variants for s in range(seeds) if s not in curves.get(v.name, {})]
    if todo:
        with tempfile.TemporaryDirectory(prefix="gga-sim-") as tmp:
            work = Path(tmp)
            others = [t for t in exp.history_layers or rg.resnet_layers() if t.key != task.key]
            base = HistoryStore.open(exp.db, create=False)
            try:
                rg.seed_history(base, work / "history.db", others, exp.target)
                rg.seed_history(base, work / "empty.db", [], exp.target)
            finally:
                base.close()
            for v, s in todo:
                exp.log(f"  {task.name}: {v.name} seed {s}")
                curves.setdefault(v.name, {})[s] = simulate(exp, task, v, s, model,
                                                             work / "history.db", noise, work)
                path.parent.mkdir(parents=True, exist_ok=True)
                old[v.name] = signatures[v.name]
                path.write_text(json.dumps({"task": task.to_dict(), "noise": noise, "oracle": oracle,
                                            "data": measured, "accuracy": acc.__dict__,
                                            "signatures": old, "curves": curves}))
    return LayerRuns(task, len(ld.configs), ld.records, acc, curves)


def speedups(runs: Sequence[LayerRuns], name: str, seed: int, over: str = "xgb"
             ) -> tuple[list[float], int]:
    """Per layer, ``over``'s trials to the seed's mark over ``name``'s (a run that never
    reached it counts at its budget + 1, so the figure is a bound); and how many never did."""
    out, never = [], 0
    for lr in runs:
        ref = lr.curves["xgb"][seed]
        mark = rg.MARK * ref[-1]
        a = trials_to(lr.curves[over][seed], mark)
        b = trials_to(lr.curves[name][seed], mark)
        if a is None:
            a = len(lr.curves[over][seed]) + 1
        if b is None:
            never += 1
            b = len(lr.curves[name][seed]) + 1
        out.append(a / b)
    return out, never


def paired_row(runs: Sequence[LayerRuns], seeds: int, over: str, name: str, label: str) -> str:
    """A table row: per seed, the geometric mean over layers of ``over``'s trials to the
    mark over ``name``'s; their median, range and the seeds where ``name`` was sooner."""
    geos = [statistics.geometric_mean(speedups(runs, name, s, over=over)[0]) for s in range(seeds)]
    return (f"| {label} | {statistics.median(geos):.2f}x [{min(geos):.2f}, {max(geos):.2f}] | "
            f"{sum(g > 1 for g in geos)} of {seeds} |")


def report(exp: rg.Experiment, runs: Sequence[LayerRuns], variants: Sequence[rg.Variant],
           seeds: int, noise: float, oracle: str, header: str, command: str,
           pairs: Sequence[tuple[str, str]] = ()) -> Path:
    names = [v.name for v in variants]
    lines = [
        "# Searchers on a simulated machine (surrogates of real measurements)", "", header, "",
        f"Command: `{command}`", "",
        f"**Simulated.** No config was built or timed for this report: each left-out layer's "
        f"speed is a boosted-tree model (`scripts/surrogate.py`, measurer name `{NAME}`) "
        "fitted on every real measurement of that layer the `--data` databases hold"
        + (" (`--oracle mixed`: a config measured there answers with its measured median, "
           "the model answers for the others)" if oracle == "mixed" else "") + ". The "
        f"history of the other layers is real (`--db {exp.db}`). Trials, not seconds. Each "
        f"seed's mark is {rg.MARK:.0%} of that seed's xgb best after {exp.budget('xgb')} trials; "
        "a searcher's "
        "curve is the surrogate's exact speed of the best config it had measured by each "
        f"trial. Searchers were told speeds with log-normal noise of spread {noise}. "
        f"{seeds} seeds per searcher.", "",
        "How well each surrogate ranks configs it was not fitted on (5 folds): Spearman's rho, "
        "the held-out best's share reached by the model's first pick, and the median error of "
        "a prediction.", "",
        "| layer | configs (measurements) | rho | first pick / best | median error |",
        "|---|---|---|---|---|"]
    for lr in runs:
        a = lr.accuracy
        lines.append(f"| {lr.task.name} | {lr.configs} ({lr.records}) | {a.spearman:.3f} | "
                     f"{a.top_share:.3f} | {a.median_error:.3f} |")
    lines += ["", "Trials to the mark, median over seeds (never: the seeds that never reached it):", "",
              "| layer | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for lr in runs:
        cells = []
        for n in names:
            got = [trials_to(lr.curves[n][s], rg.MARK * lr.curves["xgb"][s][-1]) for s in range(seeds)]
            reached = [g for g in got if g is not None]
            never = len(got) - len(reached)
            med = f"{statistics.median(reached):.0f}" if reached else "-"
            cells.append(med + (f" (never: {never})" if never else ""))
        lines.append(f"| {lr.task.name} | " + " | ".join(cells) + " |")
    lines += ["", "Over the layers, per seed: the geometric mean of xgb's trials to the mark over "
              "each searcher's (>= 5x is the issue's target in seconds), and the median over "
              "layers of its final best over xgb's (>= 0.98):", "",
              "| searcher | geometric mean over xgb, median of seeds [lowest, highest] | seeds >= 5x | "
              "final / xgb, median of seeds | layer runs that never reached the mark |",
              "|---|---|---|---|---|"]
    for n in names[1:]:
        geos, finals, nevers = [], [], 0
        for s in range(seeds):
            sp, never = speedups(runs, n, s)
            geos.append(statistics.geometric_mean(sp))
            nevers += never
            finals.append(statistics.median(lr.curves[n][s][-1] / lr.curves["xgb"][s][-1]
                                             for lr in runs))
        lines.append(f"| {n} | {statistics.median(geos):.2f}x [{min(geos):.2f}, {max(geos):.2f}] | "
                     f"{sum(g >= 5 for g in geos)} of {seeds} | {statistics.median(finals):.3f} | "
                     f"{nevers} of {seeds * len(runs)} |")
    if len(names) > 2:
        lines += ["", "Each setting against gga, per seed: the geometric mean over layers of gga's "
                  "trials to the mark over the setting's (> 1: sooner than gga):", "",
                  "| setting | median of seeds [lowest, highest] | seeds sooner than gga |",
                  "|---|---|---|"]
        lines += [paired_row(runs, seeds, "gga", n, n) for n in names[2:]]
    if pairs:
        lines += ["", "Paired (`--pair A:B`), per seed: the geometric mean over layers of A's "
                  "trials to the mark over B's, on the same seeds (> 1: B sooner than A):", "",
                  "| B against A | median of seeds [lowest, highest] | seeds B sooner |",
                  "|---|---|---|"]
        lines += [paired_row(runs, seeds, a, b, f"{b} against {a}") for a, b in pairs]
    path = exp.out / "gga-simulated.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def parse_pairs(ap: argparse.ArgumentParser, given: Sequence[str],
                names: Sequence[str]) -> list[tuple[str, str]]:
    """``A:B`` strings as (A, B) setting names; an unknown name or a malformed pair is a
    one-line usage error naming the settings there are."""
    pairs = []
    for text in given:
        a, sep, b = text.partition(":")
        if not sep or not a or not b or a == b:
            ap.error(f"--pair {text!r}: give two different settings as A:B, e.g. gga:gga-scr4")
        unknown = [n for n in (a, b) if n not in names]
        if unknown:
            ap.error(f"--pair {text!r}: unknown setting(s) {', '.join(unknown)}; "
                     f"known: {', '.join(names)}")
        pairs.append((a, b))
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    from machine import machine_header

    from orchestrator.manager import load_plugins
    from orchestrator.target import detect_host

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", required=True, help="history database of every layer (the real history)")
    ap.add_argument("--data", action="append", required=True,
                    help="databases holding each layer's measurements for its surrogate; "
                         "a glob, {layer} stands for the layer's name (repeatable)")
    ap.add_argument("--layers", help="comma-separated layers to leave out [all resnet18_conv]")
    ap.add_argument("--seeds", type=int, default=8, help="seeds per searcher [%(default)s]")
    ap.add_argument("--xgb-trials", type=int, default=500,
                    help="xgb's budget, whose best sets the mark [%(default)s]")
    ap.add_argument("--trials", type=int, default=300, help="every other budget [%(default)s]")
    ap.add_argument("--oracle", choices=("model", "mixed"), default="model",
                    help="model: every config's speed is the surrogate's; mixed: a config "
                         "measured on the machine is answered with its measured median "
                         "[%(default)s]")
    ap.add_argument("--batch-size", type=rg.batch_size_arg, default=8, metavar="N",
                    help="configs proposed and measured together [%(default)s]")
    ap.add_argument("--noise", type=float, default=0.05,
                    help="log-normal spread of the speeds searchers are told [%(default)s]")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=SEARCHER[:K=V,...]",
                    help="another setting to compare with xgb and gga (repeatable)")
    ap.add_argument("--pair", action="append", default=[], metavar="A:B",
                    help="also compare setting B with setting A seed by seed (repeatable)")
    ap.add_argument("--out", default="docs/results/gga-simulated", help="report directory")
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    if args.trials < 1 or args.xgb_trials < 1:
        ap.error("--trials and --xgb-trials must be >= 1")
    if args.noise < 0:
        ap.error("--noise must be >= 0")
    db = Path(args.db)
    if not db.exists():
        ap.error(f"{db} does not exist: give the history database the layers were tuned into")
    variants = [*BASE, *rg.parse_variants(ap, args.variant, taken={v.name for v in BASE})]
    pairs = parse_pairs(ap, args.pair, [v.name for v in variants])
    by_name = {t.name: t for t in rg.resnet_layers()}
    names = args.layers.split(",") if args.layers else list(by_name)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        ap.error(f"unknown layer(s) {', '.join(unknown)}; known: {', '.join(by_name)}")
    exp = rg.Experiment(layers=tuple(by_name[n] for n in names), history_layers=(),
                        trials=args.trials, batch_size=args.batch_size,
                        budgets={"xgb": args.xgb_trials}, db=db, work=db.parent,
                        out=Path(args.out), target=detect_host(), plugins=load_plugins())
    runs = [layer_runs(exp, t, variants, args.seeds, args.data, args.noise, args.oracle)
            for t in exp.layers]
    command = "python scripts/gga_simulated.py " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    path = report(exp, runs, variants, args.seeds, args.noise, args.oracle,
                  machine_header() + f"\n- Simulated on this machine's CPU: {stamp}", command.strip(),
                  pairs)
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
