"""The ``orchestrator`` command line: tune, plugins, history, ops."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from history.cli_similar import similar_command
from orchestrator.errors import OrchestratorError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Tune tensor programs on Apache TVM and keep every measurement.")
history_app = typer.Typer(no_args_is_help=True, help="Query, export and import the tuning history.")
app.add_typer(history_app, name="history")
out = Console()
err = Console(stderr=True)

DbOpt = Annotated[Optional[str], typer.Option(
    "--db", help="History database: a SQLite file path or a SQLAlchemy URL "
                 "[default: $ORCHESTRATOR_DB or ./tuning-history.db]")]


def _parse_options(items: list[str], flag: str) -> dict[str, Any]:
    opts: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise OrchestratorError(f"{flag} takes KEY=VALUE, got {item!r}")
        try:
            opts[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            opts[key.replace("-", "_")] = value
    return opts


def _pruner_options(items: list[str], pruners: list[str]) -> dict[str, dict[str, Any]]:
    """``--pruner-opt NAME:KEY=VALUE`` items by pruner name; ``KEY=VALUE`` alone when
    exactly one ``--pruner`` is given."""
    by_pruner: dict[str, dict[str, Any]] = {}
    for item in items:
        head, sep, _ = item.partition("=")
        name, colon, _ = head.partition(":")
        if colon:
            option = item[len(name) + 1:]
        elif len(set(pruners)) == 1:
            name, option = pruners[0], item
        else:
            example = f"{pruners[0] if pruners else 'psa'}:{item}"
            raise OrchestratorError(f"--pruner-opt {item!r}: say which pruner it is for, "
                                    f"as NAME:KEY=VALUE, e.g. --pruner-opt {example}")
        if not name or not sep:
            raise OrchestratorError(f"--pruner-opt takes NAME:KEY=VALUE, got {item!r}")
        by_pruner.setdefault(name, {}).update(_parse_options([option], "--pruner-opt"))
    return by_pruner


def _tasks(op: str | None, shape: str | None, suite: Path | None, only: list[str]) -> list:
    from orchestrator.suite import read_suite, select
    from orchestrator.task import Task, parse_shape

    if op is not None:
        if suite is not None or only:
            raise OrchestratorError("give either --op/--shape or --suite/--only, not both")
        if shape is None:
            from orchestrator.ops import get_operator
            raise OrchestratorError(f"--op {op} needs --shape, e.g. --shape {get_operator(op).example}")
        return [Task.create(op, parse_shape(shape))]
    if shape is not None:
        raise OrchestratorError("--shape needs --op")
    if suite is None and not only:
        raise OrchestratorError("nothing to tune: give --op and --shape, or --only NAME "
                                "(from the built-in suite) or --suite FILE")
    return select(read_suite(suite), only)


@app.command()
def tune(
    op: Annotated[Optional[str], typer.Option(help="Operator: dense, batch_matmul, conv2d, depthwise_conv2d")] = None,
    shape: Annotated[Optional[str], typer.Option(help="Shape, e.g. N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1")] = None,
    suite: Annotated[Optional[Path], typer.Option(help="Workload suite JSON file [default: built-in]")] = None,
    only: Annotated[list[str], typer.Option(help="Workload name(s) from the suite (repeatable)")] = [],
    trials: Annotated[int, typer.Option(help="Trial budget per workload")] = 200,
    seconds: Annotated[Optional[float], typer.Option(help="Time budget per workload")] = None,
    early_stop: Annotated[Optional[int], typer.Option(help="Stop after this many trials without improvement")] = None,
    seed: Annotated[int, typer.Option(help="Random seed")] = 0,
    searcher: Annotated[str, typer.Option(
        help="Searcher name (see `orchestrator plugins`); auto: gga where the history "
             "matches the workload, else tl")] = "auto",
    measurer: Annotated[str, typer.Option(help="Measurer name")] = "local",
    space: Annotated[Optional[str], typer.Option(help="Space generator name [default: first that supports the task]")] = None,
    pruner: Annotated[list[str], typer.Option(help="Pruner name(s), applied in order")] = [],
    cost_model: Annotated[Optional[str], typer.Option(help="Cost model name")] = None,
    batch_size: Annotated[int, typer.Option(help="Configs proposed and measured per round")] = 8,
    confirm: Annotated[int, typer.Option(help="Time each new best N times more; only those later timings count towards the best (a lucky first timing does not). 0: off")] = 0,
    runoff: Annotated[int, typer.Option(help="After each run, time its K fastest configs again side by side and report the fastest there as the best (a rerun of a finished run does just this). 0: off")] = 0,
    runoff_rounds: Annotated[int, typer.Option(help="Rounds of the run-off: each times every contender once, in turn")] = 5,
    searcher_opt: Annotated[list[str], typer.Option(help="Searcher option KEY=VALUE")] = [],
    measurer_opt: Annotated[list[str], typer.Option(help="Measurer option KEY=VALUE")] = [],
    cost_model_opt: Annotated[list[str], typer.Option(help="Option KEY=VALUE of the cost model --cost-model names")] = [],
    pruner_opt: Annotated[list[str], typer.Option(help="Option NAME:KEY=VALUE of the pruner NAME (KEY=VALUE alone when one --pruner is given)")] = [],
    space_opt: Annotated[list[str], typer.Option(help="Option KEY=VALUE of the space generator --space names")] = [],
    target: Annotated[str, typer.Option(help="Target: host (this machine's CPU), cuda (this machine's GPU) or cuda:<gpu> (h100, h200, a100, v100, t4, rtx2080ti)")] = "host",
    verify_top: Annotated[int, typer.Option(help="After tuning with a static measurer, measure the K best on this machine (distinct kernels: configs that compile to the same code count once)")] = 0,
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable results")] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Log each batch")] = False,
) -> None:
    """Tune workloads and record every measurement in the history database."""
    from history.store import HistoryStore
    from orchestrator.loop import TuneOptions, check_components, make_measurer, tune as run_tune
    from orchestrator.manager import load_plugins
    from orchestrator.target import resolve_target
    from plugins.observers.progress import ProgressBar

    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    tasks = _tasks(op, shape, suite, only)
    if verify_top < 0:
        raise OrchestratorError(f"--verify-top must be 0 (off) or more, got {verify_top}")
    if seconds is not None and not seconds > 0:
        raise OrchestratorError(f"--seconds must be positive, got {seconds:g}")
    options = TuneOptions(
        searcher=searcher, measurer=measurer, space_generator=space, pruners=tuple(pruner),
        cost_model=cost_model, trials=trials, seconds=seconds, early_stop=early_stop, seed=seed,
        batch_size=batch_size, confirm=confirm, runoff=runoff, runoff_rounds=runoff_rounds,
        searcher_options=_parse_options(searcher_opt, "--searcher-opt"),
        measurer_options=_parse_options(measurer_opt, "--measurer-opt"),
        cost_model_options=_parse_options(cost_model_opt, "--cost-model-opt"),
        pruner_options=_pruner_options(pruner_opt, pruner),
        space_options=_parse_options(space_opt, "--space-opt"))
    plugins = load_plugins(extra=[("progress", ProgressBar(enabled=not as_json))])
    check_components(plugins, options)
    store = HistoryStore.open(db)
    tgt = resolve_target(target)
    summaries = []
    verified: dict[int, Any] = {}
    measurer_for_all = None
    try:
        # One measurer for every task: its workers (a TVM import each) start once.
        measurer_for_all = make_measurer(options, plugins)
        for task in tasks:
            summary = run_tune(task, target=tgt, options=options, db=store, plugins=plugins,
                               shared_measurer=measurer_for_all)
            summaries.append(summary)
            if verify_top > 0:
                verified[summary.run.run_id] = _verify(store, summary, verify_top, plugins)
    except KeyboardInterrupt:
        err.print("interrupted: every result so far is in the history; run the same command to resume")
        raise typer.Exit(130) from None
    finally:
        if measurer_for_all is not None:
            measurer_for_all.close()
        store.close()
    predicted = bool(getattr(plugins.registry("measurer").get(measurer).factory, "predicts",
                             False))
    if as_json:
        print(json.dumps([{**_summary_dict(s), "predicted": predicted,
                           **_verified_dict(s, verified.get(s.run.run_id))}
                          for s in summaries], indent=1))
    else:
        _print_summaries(summaries, tgt, predicted=predicted, measurer=measurer)
        for s in summaries:
            v = _verified_dict(s, verified.get(s.run.run_id)).get("verified")
            if v:
                out.print(f"{s.run.task.label()}: measured the top {v['measured']} static picks; "
                          f"best {v['latency_ms']:.4f} ms, {v['gflops']:.1f} GFLOPS")


def _verify(store: Any, summary: Any, k: int, plugins: Any) -> list[Any]:
    """Measure the ``k`` best statically scored configs of a run on the real device."""
    from plugins.tuna.verify import verify_top

    task_id = store.find_task(summary.run.task)
    target_id = store.find_target(summary.run.target)
    space = summary.run.space
    results = store.results(task_id, target_id, templates=space.reusable_templates)
    real = verify_top(space, summary.run.target, results, k, plugins=plugins)
    store.record(run_id=summary.run.run_id, task_id=task_id, target_id=target_id, results=real,
                 template=space.template)
    return real


def _verified_dict(s: Any, real: list[Any] | None) -> dict[str, Any]:
    if not real:
        return {}
    ok = [r for r in real if r.ok]
    best = min(ok, key=lambda r: r.latency) if ok else None
    return {"verified": {"measured": len(real),
                         "latency_ms": best.latency * 1e3 if best else None,
                         "gflops": best.gflops(s.run.task.flops) if best else 0.0,
                         "config": best.config.to_dict() if best else None}}


def _summary_dict(s: Any) -> dict[str, Any]:
    flops = s.run.task.flops
    return {
        "task": s.run.task.to_dict(), "run_id": s.run.run_id, "trials": s.trials,
        "measured": s.measured, "reused": s.reused, "retimed": s.retimed,
        "stop_reason": s.stop_reason,
        "seconds": round(s.seconds, 3), "statuses": s.statuses, "space_size": s.run.space.size,
        "best": None if s.best is None else {
            "latency_ms": s.best.latency * 1e3, "gflops": s.best.gflops(flops),
            "percent_of_peak": 100 * s.best.gflops(flops) / s.run.target.peak_gflops,
            "config": s.best.config.to_dict()},
        "first_ok_latency_ms": s.first_ok.latency * 1e3 if s.first_ok else None,
        "measurer_counts": s.measurer_counts,
        "runoff": None if s.runoff is None else _runoff_dict(s.runoff),
        "searcher_note": s.searcher_note or None,
    }


def _runoff_dict(r: Any) -> dict[str, Any]:
    def ms(x: float | None) -> float | None:
        return None if x is None or x == float("inf") else x * 1e3

    return {"run_id": r.run_id, "changed": r.changed, "contenders": [
        {"config": e.config.to_dict(), "estimate_ms": ms(e.estimate), "median_ms": ms(e.median),
         "rounds_ms": [ms(x) for x in e.rounds]} for e in r.entries]}


def _workload_name(s: Any) -> str:
    """How the lines under the table name a summary's workload."""
    return s.run.task.name or s.run.task.label()


def _runoff_line(s: Any) -> str | None:
    """What the run-off after a run found, in words; None without one."""
    r = s.runoff
    if r is None:
        return None
    w = r.winner
    name = _workload_name(s)
    if w.median == float("inf"):
        return (f"{name}: run-off of {len(r.entries)} configs (run {r.run_id}): "
                "every timing failed; the run's own best stands")
    kept = ("another config than the run's own best won" if r.changed
            else "the run's own best won")
    return (f"{name}: run-off of {len(r.entries)} configs, {len(w.rounds)} rounds "
            f"side by side (run {r.run_id}): {kept}, {w.median * 1e3:.4f} ms there "
            f"(the run had {w.estimate * 1e3:.4f} ms for it)")


_COUNT_WORDS = {
    "guard_retimed": "timing(s) taken again because the machine was slowed",
    "guard_slowed": "slowed timing(s) kept (the machine stayed slow)",
}


def _counts_line(summaries: list[Any]) -> str | None:
    """The measurers' non-zero counts summed over the runs, in words; None when all are
    zero."""
    total: dict[str, int] = {}
    for s in summaries:
        for k, v in s.measurer_counts.items():
            total[k] = total.get(k, 0) + int(v)
    if not any(total.values()):
        return None
    words = ", ".join(f"{v} {_COUNT_WORDS.get(k, k)}" for k, v in total.items() if v)
    guard = " (contention guard, see README)" if any(k.startswith("guard_") for k in total) else ""
    return f"Measurer: {words}{guard}"


def _print_summaries(summaries: list[Any], tgt: Any, *, predicted: bool = False,
                     measurer: str = "") -> None:
    title = (f"Best kernels on {tgt.arch} ({tgt.cores} cores, nominal peak "
             f"{tgt.peak_gflops:.0f} GFLOPS at {tgt.clock_ghz:.2f} GHz; turbo can exceed it)")
    if predicted:
        title += (f"\nPREDICTED by the {measurer} measurer, nothing was run: use --verify-top K "
                  "to measure the best K")
    table = Table(title=title)
    prefix = "predicted " if predicted else ""
    for col in ("workload", f"{prefix}best ms", f"{prefix}GFLOPS", "% peak", "vs first",
                "trials", "scored" if predicted else "measured", "errors", "run"):
        table.add_column(col, justify="left" if col in ("workload", "errors") else "right")
    for s in summaries:
        d = _summary_dict(s)
        errors = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()) if k != "ok") or "none"
        b = d["best"]
        speedup = (f"{d['first_ok_latency_ms'] / b['latency_ms']:.2f}x"
                   if b and d["first_ok_latency_ms"] else "-")
        measured = f"{s.measured} + {s.retimed} again" if s.retimed else str(s.measured)
        table.add_row(s.run.task.label(), f"{b['latency_ms']:.4f}" if b else "-",
                      f"{b['gflops']:.1f}" if b else "-",
                      f"{b['percent_of_peak']:.0f}%" if b else "-", speedup, str(s.trials),
                      measured, errors, str(s.run.run_id))
    out.print(table)
    notes = [f"{_workload_name(s)}: {s.searcher_note}" for s in summaries if s.searcher_note]
    for line in [_runoff_line(s) for s in summaries] + notes + [_counts_line(summaries)]:
        if line:
            out.print(line)


@app.command()
def build(
    op: Annotated[Optional[str], typer.Option(help="Operator")] = None,
    shape: Annotated[Optional[str], typer.Option(help="Shape, as for tune")] = None,
    suite: Annotated[Optional[Path], typer.Option(help="Workload suite JSON file [default: built-in]")] = None,
    only: Annotated[list[str], typer.Option(help="Workload name(s) from the suite (repeatable)")] = [],
    target: Annotated[str, typer.Option(help="Target whose measurements count, as for tune")] = "host",
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the libraries and their notes")] = Path("kernels"),
    check: Annotated[bool, typer.Option(help="Run each library here once: compare its output with the NumPy reference and time it (CPU targets)")] = False,
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable results")] = False,
) -> None:
    """Build each workload's best recorded config into a TVM library (.so) with a JSON note."""
    from history.store import HistoryStore
    from orchestrator.export import export_best, find_best
    from orchestrator.manager import load_plugins
    from orchestrator.target import cpu_cores, resolve_target

    # TVM reads it when it is first imported: run the check on every core, as the
    # local measurer times configs (TVM on x86 would assume hyper-threading otherwise).
    os.environ.setdefault("TVM_NUM_THREADS", str(cpu_cores()))
    tasks = _tasks(op, shape, suite, only)
    tgt = resolve_target(target)
    if check and tgt.kind != "llvm":
        raise OrchestratorError(f"--check runs the library on this machine's CPU; the target "
                                f"is {tgt.kind}: build without --check")
    plugins = load_plugins()
    store = HistoryStore.open(db, create=False)
    try:
        bests = [find_best(store, plugins, task, tgt) for task in tasks]  # all found, or none built
        source = store.engine.url.render_as_string(hide_password=True)
    finally:
        store.close()
    built = [export_best(b, tgt, out_dir, check=check, source=source) for b in bests]
    if as_json:
        print(json.dumps([json.loads(k.note.read_text()) | {"library": str(k.library)}
                          for k in built], indent=1))
    else:
        table = Table(title=f"Best configs built for {tgt.kind} {tgt.arch}")
        for col in ("workload", "recorded ms", "GFLOPS", *(("checked ms",) if check else ()),
                    "template", "library"):
            table.add_column(col)
        for k in built:
            rec = k.best.record.result
            checked = () if k.check is None else (
                (f"{k.check.latency * 1e3:.4f}" if k.check.ok else "FAILED"),)
            table.add_row(k.best.task.label(), f"{rec.latency * 1e3:.4f}",
                          f"{rec.gflops(k.best.task.flops):.1f}", *checked, k.best.space.template,
                          escape(str(k.library)))
        out.print(table)
        out.print("Load one with tvm.runtime.load_module(PATH)[\"main\"](*inputs, output); "
                  "each .json beside it says which config and measurement it is.", markup=False)
    wrong = [k for k in built if k.check is not None and not k.check.ok]
    if wrong:
        err.print(escape(f"error: {wrong[0].best.task.label()}: the library's check failed: "
                         f"{wrong[0].check.mismatch}"))
        raise typer.Exit(1)


@app.command()
def plan(
    model: Annotated[Optional[str], typer.Option(help="Built-in model: resnet18, resnet50, vgg19, alexnet, mobilenet")] = None,
    onnx: Annotated[Optional[Path], typer.Option(help="An ONNX model file (needs the onnx extra)")] = None,
    accelerator: Annotated[str, typer.Option(help="Accelerator description: a name (mlu100) or a JSON file")] = "mlu100",
    strategy: Annotated[str, typer.Option(help="Planning strategy (see --compare for all)")] = "dlfusion",
    compare: Annotated[bool, typer.Option(help="Print every strategy side by side")] = False,
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print machine-readable output")] = False,
) -> None:
    """Plan layer fusion and cores per block for a model (DLFusion) on a SIMULATED accelerator."""
    from history.store import HistoryStore
    from plugins.dlfusion.cli import make_report, print_report

    from orchestrator.manager import load_plugins

    report = make_report(model, onnx, accelerator, strategy, compare,
                         load_plugins().registry("planner"))
    data = report.to_dict()
    store = HistoryStore.open(db)
    try:
        for result in data["results"]:  # type: ignore[union-attr]
            store.record_plan(model=str(data["model"]), model_source=str(data["model_source"]),
                              accelerator=data["accelerator"], simulated=True,  # type: ignore[arg-type]
                              strategy=str(result["plan"]["strategy"]), plan=result,
                              latency=float(result["latency_s"]), fps=float(result["fps"]))
    finally:
        store.close()
    if as_json:
        print(json.dumps(data, indent=1))
    else:
        print_report(report, out)


@app.command()
def plugins(
    show: Annotated[Optional[str], typer.Option(
        help="Describe this component (e.g. gga, local) and list its options with defaults")
    ] = None,
) -> None:
    """List plugins, their distributions and the components they contribute."""
    from orchestrator.manager import load_plugins

    loaded = load_plugins()
    if show is not None:
        _show_component(loaded, show)
        return
    table = Table(title="Plugins")
    for col in ("plugin", "distribution", "version", "components"):
        table.add_column(col)
    for info in loaded.info.values():
        comps = ", ".join(f"{kind.replace('_', ' ')} {name}"
                          for kind, name in loaded.components_of(info.name)) or "(observer hooks)"
        table.add_row(info.name + (" (built-in)" if info.builtin else ""), info.distribution,
                      info.version, comps)
    out.print(table)


def _show_component(loaded: Any, name: str) -> None:
    """Print every component called ``name`` (a searcher and a cost model may share one)
    with its description and the options ``--searcher-opt`` / ``--measurer-opt`` /
    ``--cost-model-opt`` / ``--pruner-opt`` / ``--space-opt`` take."""
    import inspect

    from orchestrator.options import describe_options
    from orchestrator.registry import KINDS

    found = [(kind, loaded.registries[kind].get(name)) for kind in KINDS
             if name in loaded.registries[kind]]
    if not found:
        known = sorted({c.name for kind in KINDS for c in loaded.registries[kind]})
        raise OrchestratorError(f"no component named {name!r}; known: {', '.join(known)}")
    flags = {"searcher": "--searcher-opt KEY=VALUE", "measurer": "--measurer-opt KEY=VALUE",
             "cost_model": f"--cost-model {name} --cost-model-opt KEY=VALUE",
             "pruner": f"--pruner {name} --pruner-opt {name}:KEY=VALUE",
             "space_generator": f"--space {name} --space-opt KEY=VALUE"}
    for kind, comp in found:
        out.print(f"[bold]{kind.replace('_', ' ')} {comp.name}[/bold] (plugin {comp.plugin})")
        doc = inspect.cleandoc(comp.factory.__doc__ or comp.description or "")
        # the first paragraph, its lines joined so that the terminal's width wraps it
        # (the rest is in its docstring)
        out.print(" ".join(doc.split("\n\n")[0].split()), markup=False)
        rows, more = describe_options(comp.factory)
        how = flags.get(kind, f"Python only: plugins.create({kind!r}, {comp.name!r}, **options)")
        if rows:
            table = Table(title=f"options of {kind.replace('_', ' ')} {comp.name}")
            for col in ("option", "takes", "default"):
                table.add_column(col)
            for row in rows:
                table.add_row(*row)
            out.print(table)
            out.print(f"Set with: {how}", markup=False)
        elif not more:
            out.print("It takes no options.")
        if more:
            out.print("Options not listed here are checked by the component when it is made.")
        out.print()


@app.command()
def ops() -> None:
    """List the operators and their shape parameters."""
    from orchestrator.ops import OPERATORS

    table = Table(title="Operators")
    table.add_column("op")
    table.add_column("shape parameters")
    table.add_column("example")
    for op in OPERATORS.values():
        table.add_row(op.name, ", ".join(op.param_names()), op.example)
    out.print(table)


@history_app.command("runs")
def history_runs(
    op: Annotated[Optional[str], typer.Option(help="Only runs of this operator")] = None,
    limit: Annotated[int, typer.Option(help="At most this many runs")] = 20,
    db: DbOpt = None,
) -> None:
    """List tuning runs, newest first."""
    from history.models import RunRow, TaskRow
    from history.store import HistoryStore

    if limit < 1:
        raise OrchestratorError(f"--limit must be positive, got {limit}")
    op = _known_op(op)
    store = HistoryStore.open(db, create=False)
    where = [TaskRow.op == op] if op else []
    table = Table(title=f"Runs in {store.url}")
    for col in ("run", "workload", "searcher", "status", "trials", "measured", "best ms", "started"):
        table.add_column(col)
    for r in store.runs(where=where, limit=limit):
        table.add_row(str(r.id), r.task.label(), r.searcher,
                      escape(f"{r.status} ({r.stop_reason})"),  # may name an imported file
                      f"{r.trials}/{r.max_trials}", str(r.measured),
                      f"{r.best_latency * 1e3:.4f}" if r.best_latency else "-", r.started_at)
    out.print(table)
    del RunRow


@history_app.command("best")
def history_best(
    op: Annotated[Optional[str], typer.Option(help="Operator")] = None,
    shape: Annotated[Optional[str], typer.Option(help="Shape, as for tune")] = None,
    suite: Annotated[Optional[Path], typer.Option(help="Suite file")] = None,
    only: Annotated[list[str], typer.Option(help="Workload name(s)")] = [],
    k: Annotated[int, typer.Option(help="How many configs")] = 5,
    template: Annotated[Optional[str], typer.Option(
        help="Only configs timed with this template, e.g. cpu@2 ('-': those stored before "
             "templates were recorded) [default: every template]")] = None,
    db: DbOpt = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Show a task's best configs, each once per target at its fastest timing."""
    from history.io import record_to_dict
    from history.store import HistoryStore
    from orchestrator.space import LEGACY_TEMPLATE

    if k < 1:
        raise OrchestratorError(f"--k must be positive, got {k}")
    store = HistoryStore.open(db, create=False)
    templates = None if template is None else [LEGACY_TEMPLATE if template == "-" else template]
    rows = []
    for task in _tasks(op, shape, suite, only):
        task_id = store.find_task(task)
        records = (store.best(task_id, k=k, templates=templates) if task_id is not None
                   else [])
        if not records:
            built = "" if template is None else f" built by template {template}"
            err.print(escape(f"no successful measurement of {task.label()}{built} in {store.url}"))
        rows.extend((task, rec) for rec in records)
    if as_json:
        print(json.dumps([record_to_dict(rec) for _, rec in rows], indent=1))
        return
    table = Table(title="Best configs")
    for col in ("workload", "latency ms", "GFLOPS", "target", "template", "config"):
        table.add_column(col)
    for task, rec in rows:
        target = json.loads(rec.target_key)
        table.add_row(task.label(), f"{rec.result.latency * 1e3:.4f}",
                      f"{rec.result.gflops(task.flops):.1f}",
                      f"{target.get('kind')} {target.get('mcpu', '')}",
                      rec.template or "-",  # "-": stored before templates were recorded
                      json.dumps(rec.result.config.to_dict()))
    out.print(table)


history_app.command("similar")(similar_command)


@history_app.command("export")
def history_export(
    path: Annotated[Path, typer.Argument(help="Output file (.jsonl or .csv)")],
    fmt: Annotated[Optional[str], typer.Option("--format", help="jsonl or csv [default: from the suffix]")] = None,
    op: Annotated[Optional[str], typer.Option(help="Only this operator")] = None,
    status: Annotated[Optional[str], typer.Option(help="Only this status (ok, build_error, ...)")] = None,
    db: DbOpt = None,
) -> None:
    """Export measurements as JSON lines or CSV."""
    from history.io import export_records
    from history.models import MeasurementRow, TaskRow
    from history.store import HistoryStore
    from orchestrator.result import MeasureStatus

    fmt = _format(path, fmt)
    op = _known_op(op)
    if status and status not in {s.value for s in MeasureStatus}:
        raise OrchestratorError(f"unknown status {status!r}; known: "
                                f"{', '.join(s.value for s in MeasureStatus)}")
    store = HistoryStore.open(db, create=False)
    where = [TaskRow.op == op] if op else []
    if status:
        where.append(MeasurementRow.status == status)
    try:
        n = export_records(store, path, fmt, where)
    except OSError as exc:
        raise OrchestratorError(f"cannot write {path}: {exc.strerror or exc}") from None
    err.print(escape(f"exported {n} measurements to {path}"))


@history_app.command("import")
def history_import(
    path: Annotated[Path, typer.Argument(help="A .jsonl or .csv file written by export")],
    fmt: Annotated[Optional[str], typer.Option("--format", help="jsonl or csv")] = None,
    db: DbOpt = None,
) -> None:
    """Import measurements (the whole file is checked before anything is written)."""
    from history.io import import_records
    from history.store import HistoryStore

    fmt = _format(path, fmt)
    store = HistoryStore.open(db)
    imported, skipped = import_records(store, path, fmt)
    err.print(escape(f"imported {imported} measurements from {path} ({skipped} already present)"))


@app.command()
def calibrate(
    cost_model: Annotated[str, typer.Option(help="Cost model whose coefficients to fit")] = "tuna",
    target: Annotated[str, typer.Option(help="Target: host (this machine's CPU), cuda (this machine's GPU) or cuda:<gpu> (h100, h200, a100, v100, t4, rtx2080ti)")] = "host",
    out: Annotated[Optional[Path], typer.Option(help="Where to write the coefficients [default: user config dir]")] = None,
    db: DbOpt = None,
) -> None:
    """Fit a static cost model's coefficients to the real measurements in history."""
    from plugins.tuna.calibrate import calibrate_command

    raise typer.Exit(calibrate_command(cost_model, db, target, out))


@app.command()
def train(
    cost_model: Annotated[str, typer.Option(help="Cost model to train: cnnopt-hybrid or cnnopt-ml")] = "cnnopt-hybrid",
    target: Annotated[str, typer.Option(help="Target GPU: cuda (this machine's) or cuda:<gpu>, e.g. cuda:h100")] = "cuda",
    out: Annotated[Optional[Path], typer.Option(help="Where to write the model [default: user config dir]")] = None,
    db: DbOpt = None,
) -> None:
    """Train an offline cost model on the real measurements in history."""
    from plugins.cnnopt.training import train_command

    raise typer.Exit(train_command(cost_model, db, target, out))


def _known_op(op: str | None) -> str | None:
    """``op`` by its canonical name (an unknown one is an error, not an empty answer)."""
    from orchestrator.ops import get_operator

    return None if op is None else get_operator(op).name


def _format(path: Path, fmt: str | None) -> str:
    fmt = fmt or {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv"}.get(path.suffix.lower())
    if fmt not in ("jsonl", "csv"):
        raise OrchestratorError(f"unknown format for {path}; use --format jsonl or --format csv")
    return fmt


def main(argv: list[str] | None = None) -> None:
    """Console entry point: one-line errors, exit code 2, no traceback.

    Usage errors are reported by Typer itself (also exit code 2).
    """
    try:
        app(args=argv, prog_name="orchestrator")
    except OrchestratorError as exc:
        # escaped: a message may hold brackets (an extra such as [onnx], a path)
        err.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)


if __name__ == "__main__":
    main()
