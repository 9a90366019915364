"""Library baselines for a conv2d layer on this machine's GPU: PyTorch's cuDNN and TVM
MetaSchedule with a given trial budget. Used by ``reproduce_cnnopt.py --vendor``.

Both are timed in the calling process, beside our kernel's fresh measurement, so the
three figures of a row come from one run on one GPU.
"""

from __future__ import annotations

import os
import statistics
import tempfile
from dataclasses import dataclass
from typing import Any

from orchestrator.task import Task

# The CUDA C of a TVM module is compiled when the module is loaded; NVRTC needs a
# package we do not depend on, nvcc is on every machine that builds our kernels.
os.environ.setdefault("TVM_CUDA_COMPILE_MODE", "nvcc")


# MetaSchedule builds a CUDA candidate more slowly than its CPU ones (nvcc): give each
# up to 120 s instead of the builder's default 30 s.
BUILD_TIMEOUT = 120.0


@dataclass(frozen=True)
class VendorTiming:
    """Median seconds of one library's kernel, or why there is none."""

    seconds: float | None
    note: str = ""


def cudnn_seconds(task: Task, repeats: int = 7, min_ms: float = 10.0) -> VendorTiming:
    """PyTorch ``conv2d`` in FP32 (TF32 off, cuDNN autotuner on), median of ``repeats``
    timings of at least ``min_ms`` each, by CUDA events."""
    try:
        import torch
    except ImportError:
        return VendorTiming(None, "PyTorch is not installed")
    p = task.params
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    x = torch.randn(p["N"], p["C"], p["H"], p["W"], device=dev)
    w = torch.randn(p["K"], p["C"], p["R"], p["S"], device=dev)

    def run() -> Any:
        return torch.nn.functional.conv2d(x, w, stride=p["stride"], padding=p["pad"],
                                          dilation=p.get("dilation", 1))

    for _ in range(20):  # lets the autotuner pick its algorithm
        run()
    torch.cuda.synchronize()
    # Timed as a CUDA graph of `number` convolutions, so that PyTorch's per-call CPU
    # overhead (tens of microseconds) is not counted against a kernel of that order.
    number = 50
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(number):
            run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    graph.replay()
    torch.cuda.synchronize()
    start.record()
    graph.replay()
    end.record()
    torch.cuda.synchronize()
    replays = max(1, int(min_ms / max(start.elapsed_time(end), 1e-3)))
    times = []
    for _ in range(repeats):
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / (replays * number))
    return VendorTiming(statistics.median(times),
                        f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
                        "CUDA graph")


def metaschedule_seconds(task: Task, gpu_tag: str, trials: int,
                         workers: int | None = None) -> VendorTiming:
    """MetaSchedule's best kernel after ``trials`` measured trials (its default CUDA
    search space, cost model and evolutionary search), re-timed here like ours."""
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from ms_builder import local_builder
    from orchestrator.kernels import compare

    func = task.operator.prim_func(task.params)
    target = tvm.target.Target(gpu_tag)
    cores = workers or os.cpu_count() or 1
    builder = local_builder(cores, BUILD_TIMEOUT)
    with tempfile.TemporaryDirectory(prefix="ms-cuda-") as work_dir:
        db = ms.tune_tir(mod=func, target=target, work_dir=work_dir,
                         max_trials_global=trials, num_trials_per_iter=min(32, trials),
                         num_tuning_cores=cores, seed=0, builder=builder)
        sch = ms.tir_integration.compile_tir(db, func, target)
    if sch is None:
        return VendorTiming(None, "MetaSchedule recorded no valid schedule")
    ex = tvm.compile(sch.mod, target=target)
    dev = tvm.cuda(0)
    inputs = task.operator.random_inputs(task.params, 0)
    expected = task.operator.reference(inputs, task.params)
    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    args.append(tvm.runtime.tensor(np.zeros(expected.shape, "float32"), dev))
    ex.mod["main"](*args)
    mismatch = compare(args[-1].numpy(), np.asarray(expected, "float32"), 1e-3, 1e-3)
    if mismatch:
        return VendorTiming(None, f"MetaSchedule's best kernel is wrong: {mismatch}")
    timer = ex.mod.time_evaluator("main", dev, number=1, repeat=7, min_repeat_ms=10)
    return VendorTiming(statistics.median(float(s) for s in timer(*args).results),
                        f"{trials} trials")
