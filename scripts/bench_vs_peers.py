"""Benchmark our tuner against PyTorch CPU and TVM MetaSchedule, side by side.

For each workload (default ``r18_l2`` and ``bert_ffn1`` from the default suite) this
runs, in one process with one thread count:

* PyTorch (``torch.nn.functional.conv2d`` / ``torch.matmul``),
* TVM MetaSchedule with ``--trials`` trials (its best record re-applied and compiled),
* the orchestrator (``orchestrator.loop.tune``, random search over the ``cpu`` templates,
  ``--trials`` trials), its best config re-applied and compiled,

then times all three with the same routine, interleaved round by round, and writes a
markdown table to ``--out``. ``--smoke`` runs a tiny version (small shapes, a few trials,
no MetaSchedule unless ``--ms-trials`` is given) that a test can afford.

    python scripts/bench_vs_peers.py                       # the full comparison
    python scripts/bench_vs_peers.py --only bert_ffn1 --trials 64
    python scripts/bench_vs_peers.py --smoke --out /tmp/smoke.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WORKLOADS = ("r18_l2", "bert_ffn1")
SMOKE_WORKLOADS = {
    "smoke_conv": ("conv2d", dict(N=1, C=16, H=14, W=14, K=32, R=3, S=3, stride=1, pad=1)),
    "smoke_dense": ("dense", dict(M=32, K=64, N=64)),
}


def _threads() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


# TVM reads its thread count when it is first imported: set it before any tvm import.
os.environ.setdefault("TVM_NUM_THREADS", str(_threads()))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # ms_builder
from script_main import exit_status  # noqa: E402

from machine import cpu_model, write_report  # noqa: E402
from orchestrator.task import Task  # noqa: E402


@dataclass
class Entry:
    """One contender's result on one workload."""

    name: str
    latencies: list[float] = field(default_factory=list)
    note: str = ""
    run: Callable[[], None] | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None


def load_workloads(names: Sequence[str]) -> list[Task]:
    """Tasks for the named workloads of ``orchestrator/suites/default.json``."""
    suite = json.loads((ROOT / "orchestrator" / "suites" / "default.json").read_text())
    found: dict[str, dict[str, Any]] = {}
    for group in suite.values():
        if isinstance(group, list):
            for w in group:
                found[w["name"]] = w
    tasks = []
    for name in names:
        if name in SMOKE_WORKLOADS:
            op, shape = SMOKE_WORKLOADS[name]
            tasks.append(Task.create(op, shape, name=name))
            continue
        if name not in found:
            raise SystemExit(f"unknown workload {name!r}; known: {', '.join(sorted(found))}")
        w = dict(found[name])
        op = w.pop("op")
        w.pop("name")
        tasks.append(Task.create(op, w, name=name))
    return tasks


def one_repeat(fn: Callable[[], None], min_seconds: float) -> float:
    """Mean seconds per call of ``fn`` over a batch lasting at least ``min_seconds``."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / calls


def cpu_busy(interval: float = 0.1) -> float:
    """Share of the machine's CPU time used (by anyone) during ``interval`` seconds."""
    def snap() -> tuple[int, int]:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]

    try:
        t0, idle0 = snap()
        time.sleep(interval)
        t1, idle1 = snap()
    except OSError:
        return 0.0
    return 1.0 - (idle1 - idle0) / max(1, t1 - t0)


def wait_for_quiet(max_wait: float, threshold: float = 0.15) -> None:
    """Wait (at most ``max_wait`` s) until other processes leave the CPUs idle, so that
    each timed batch starts on a quiet machine when there is one."""
    deadline = time.monotonic() + max_wait
    while time.monotonic() < deadline and cpu_busy() > threshold:
        time.sleep(0.2)


def time_side_by_side(entries: Sequence[Entry], rounds: int, min_seconds: float,
                      quiet_wait: float = 10.0) -> None:
    """Time every runnable entry with the same routine, interleaved round by round so
    that load from other processes affects all of them alike.

    Each batch is preceded by a pause and an untimed warm-up batch: PyTorch's OpenMP
    workers and TVM's thread pool spin for a while after a call, and must not steal the
    cores from the next contender's timed batch. Other processes' load is waited out
    for up to ``quiet_wait`` seconds before each batch.
    """
    live = [e for e in entries if e.run is not None]
    for _ in range(rounds):
        for e in live:
            time.sleep(0.3)
            wait_for_quiet(quiet_wait)
            one_repeat(e.run, min_seconds / 2)
            e.latencies.append(one_repeat(e.run, min_seconds))


# -- contenders ----------------------------------------------------------------------

def torch_runner(task: Task, threads: int) -> tuple[Callable[[], None] | None, str]:
    """A closure calling PyTorch's CPU kernel for ``task``, or None and the reason."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None, "torch not installed"
    torch.set_num_threads(threads)
    p = task.params
    inputs = [torch.from_numpy(x) for x in task.operator.random_inputs(p)]
    if task.op in ("dense", "batch_matmul"):
        a, b = inputs
        fn = lambda: torch.matmul(a, b)  # noqa: E731
    elif task.op == "conv2d":
        x, w = inputs
        fn = lambda: F.conv2d(x, w, stride=p["stride"], padding=p["pad"],  # noqa: E731
                              dilation=p["dilation"])
    elif task.op == "depthwise_conv2d":
        x, w = inputs
        fn = lambda: F.conv2d(x, w, stride=p["stride"], padding=p["pad"],  # noqa: E731
                              dilation=p["dilation"], groups=p["C"])
    else:
        return None, f"no PyTorch equivalent for {task.op}"

    def run() -> None:
        with torch.no_grad():
            fn()

    return run, f"torch {torch.__version__}, {threads} threads"


def tvm_runner(task: Task, mod: Any, tvm_target: Any) -> Callable[[], None]:
    """Compile ``mod``, check it against NumPy, and return a closure that calls it."""
    import numpy as np
    import tvm

    ex = tvm.compile(mod, target=tvm_target)
    inputs = task.operator.random_inputs(task.params)
    expected = task.operator.reference(inputs, task.params)
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    args.append(tvm.runtime.empty(expected.shape, "float32", dev))
    func = ex.mod["main"]
    func(*args)
    np.testing.assert_allclose(args[-1].numpy(), expected, rtol=1e-3, atol=1e-3)
    return lambda: func(*args)


def metaschedule_module(task: Task, tvm_target: Any, trials: int, work_dir: str) -> Any:
    """The best module MetaSchedule finds for ``task`` within ``trials`` trials."""
    from tvm.s_tir import meta_schedule as ms

    func = task.operator.prim_func(task.params)
    from ms_builder import local_builder

    cores = _threads()
    builder = local_builder(cores)
    db = ms.tune_tir(mod=func, target=tvm_target, work_dir=work_dir,
                     max_trials_global=trials, num_trials_per_iter=min(32, trials),
                     num_tuning_cores=cores, seed=0, builder=builder)
    sch = ms.tir_integration.compile_tir(db, func, tvm_target)
    if sch is None:
        raise RuntimeError("MetaSchedule recorded no valid schedule")
    return sch.mod


def ours_module(task: Task, target: Any, trials: int, db_path: str) -> tuple[Any, str]:
    """Our best module after a random search of ``trials`` configs, and a note."""
    from orchestrator.loop import tune
    from plugins.templates.cpu import apply_config

    summary = tune(task, target=target, searcher="random", measurer="local",
                   space_generator="cpu", trials=trials, seed=0, db=db_path)
    if summary.best is None:
        raise RuntimeError(f"no valid config among {summary.trials} trials: {summary.statuses}")
    note = (f"random search, {summary.trials} trials, tuned latency "
            f"{summary.best.latency * 1e3:.3f} ms")
    return apply_config(task, summary.best.config, target), note


# -- report --------------------------------------------------------------------------

def machine_line() -> str:
    return f"{cpu_model()}, {_threads()} cores available ({platform.machine()})"


def render(rows: list[tuple[Task, list[Entry]]], trials: int, ms_trials: int,
           mcpu: str) -> str:
    import tvm

    now = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    out = [
        "# Orchestrator vs PyTorch and TVM MetaSchedule",
        "",
        f"- Machine: {machine_line()}, LLVM mcpu `{mcpu}`",
        f"- TVM {tvm.__version__}, TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS')}, "
        f"PyTorch threads = the same",
        f"- Date: {now}",
        f"- Budgets: ours = random search, {trials} trials; MetaSchedule = {ms_trials} trials",
        "- Latency: median over interleaved rounds of batches of calls (>= 50 ms each), "
        "all three timed by the same routine in one process.",
        "",
        "| workload | shape | PyTorch ms | MetaSchedule ms | ours ms | PyTorch GFLOPS "
        "| MetaSchedule GFLOPS | ours GFLOPS | ours/torch | ours/MetaSchedule |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for task, entries in rows:
        by = {e.name: e for e in entries}
        lat = {k: by[k].median for k in ("torch", "ms", "ours")}

        def ms_(v: float | None) -> str:
            return f"{v * 1e3:.3f}" if v else "n/a"

        def gf(v: float | None) -> str:
            return f"{task.flops / v / 1e9:.1f}" if v else "n/a"

        def ratio(a: float | None, b: float | None) -> str:
            # Latency ratio: below 1.00 means ours is faster.
            return f"{a / b:.2f}" if a and b else "n/a"

        shape = ",".join(f"{k}={v}" for k, v in task.shape)
        out.append(f"| {task.name} | {task.op} {shape} | {ms_(lat['torch'])} | {ms_(lat['ms'])} "
                   f"| {ms_(lat['ours'])} | {gf(lat['torch'])} | {gf(lat['ms'])} "
                   f"| {gf(lat['ours'])} | {ratio(lat['ours'], lat['torch'])} "
                   f"| {ratio(lat['ours'], lat['ms'])} |")
        notes.extend(f"- {task.name}, {e.name}: {e.note}" for e in entries if e.note)
    out += ["", "Ratios are latency ratios (ours / peer): below 1.00 means ours is faster.",
            "", "Notes:", *notes, ""]
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="workload names from the suite")
    ap.add_argument("--trials", type=int, default=None, help="our trials (default 200)")
    ap.add_argument("--ms-trials", type=int, default=None,
                    help="MetaSchedule trials (default: --trials; 0 skips MetaSchedule)")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "vs_peers.md"))
    ap.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds")
    ap.add_argument("--smoke", action="store_true",
                    help="small shapes, 4 trials, no MetaSchedule unless --ms-trials")
    args = ap.parse_args(argv)

    from orchestrator.target import detect_host

    if args.smoke:
        names = args.only or list(SMOKE_WORKLOADS)
        trials = args.trials or 4
        ms_trials = args.ms_trials if args.ms_trials is not None else 0
        rounds, min_seconds = min(args.rounds, 3), 0.01
    else:
        names = args.only or list(DEFAULT_WORKLOADS)
        trials = args.trials or 200
        ms_trials = args.ms_trials if args.ms_trials is not None else trials
        rounds, min_seconds = args.rounds, 0.05
    tasks = load_workloads(names)
    target = detect_host()
    tvm_target = target.tvm_target()
    threads = int(os.environ["TVM_NUM_THREADS"])

    rows: list[tuple[Task, list[Entry]]] = []
    with tempfile.TemporaryDirectory(prefix="bench_vs_peers_") as tmp:
        for task in tasks:
            print(f"== {task.label()}", flush=True)
            torch_e, ms_e, ours_e = Entry("torch"), Entry("ms"), Entry("ours")
            torch_e.run, torch_e.note = torch_runner(task, threads)
            if ms_trials > 0:
                t0 = time.time()
                try:
                    mod = metaschedule_module(task, tvm_target, ms_trials,
                                              os.path.join(tmp, f"ms_{task.name}"))
                    ms_e.run = tvm_runner(task, mod, tvm_target)
                    ms_e.note = f"{ms_trials} trials, tuned in {time.time() - t0:.0f} s"
                except Exception as exc:  # report the failure instead of dying
                    ms_e.note = f"failed: {type(exc).__name__}: {str(exc).splitlines()[-1:]}"
            else:
                ms_e.note = "skipped"
            t0 = time.time()
            try:
                mod, note = ours_module(task, target, trials, os.path.join(tmp, "history.db"))
                ours_e.run = tvm_runner(task, mod, tvm_target)
                ours_e.note = f"{note}, tuned in {time.time() - t0:.0f} s"
            except Exception as exc:
                ours_e.note = f"failed: {type(exc).__name__}: {exc}"
            entries = [torch_e, ms_e, ours_e]
            time_side_by_side(entries, rounds, min_seconds, 0.0 if args.smoke else 10.0)
            for e in entries:
                med = e.median
                print(f"   {e.name:6s} {med * 1e3:9.3f} ms" if med else f"   {e.name:6s}   n/a",
                      f"({e.note})" if e.note else "", flush=True)
            rows.append((task, entries))

    text = render(rows, trials, ms_trials, str(target.arch))
    write_report(Path(args.out), text)
    return 0 if all(e.median for _, es in rows for e in es if e.name == "ours") else 1


if __name__ == "__main__":
    raise SystemExit(exit_status(main))
