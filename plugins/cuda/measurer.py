"""The ``cuda`` measurer: parallel CPU builds (TVM + nvcc), then serial timed GPU runs.

It works like the ``local`` measurer (same statuses, isolation, timeouts and NumPy
checks; see ``plugins.measure.local``) with CUDA workers (``plugins.cuda.worker``).
Without a GPU it refuses at the first ``measure`` with one error, rather than failing
config by config.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.errors import OptionError, OrchestratorError
from orchestrator.gpus import local_gpu_names, spec_for_name
from orchestrator.options import option_names, owner_name, unknown_options, whole
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.cuda.worker import DEVICE_ENV, CudaPool
from plugins.measure.local import LocalMeasurer
from plugins.measure.workerpool import Outcome, WorkerPool

NAME = "cuda"
NO_GPU_HINT = ("use --measurer static to score CUDA configs without running them, or run "
               "on a machine with an NVIDIA GPU")


class NoGpuError(OrchestratorError):
    """The ``cuda`` measurer found no usable GPU on this machine."""


class CudaMeasurer(LocalMeasurer):
    """Builds CUDA kernels in parallel worker processes (no GPU needed), then times each
    alone on this machine's GPU in an isolated runner."""

    name = NAME

    def __init__(self, *, device: int = 0, **options: Any) -> None:
        owner = owner_name("measurer", NAME)
        known = option_names(LocalMeasurer)
        if unknown := set(options) - set(known):
            raise unknown_options(owner, unknown, [*known, "device"])
        options.setdefault("build_timeout", 120.0)
        # GPU kernels take microseconds: 3 repeats of at least 10 ms each spread by 0.06%
        # (median; 0.18% at the 90th percentile) over 1,206 kernels on an H100
        # (docs/results/data/cnnopt-psa-h100.jsonl), at a fifth of the CPU defaults' cost.
        options.setdefault("repeat", 3)
        options.setdefault("min_repeat_ms", 10)
        options.setdefault("guard", 0.0)
        super().__init__(**options)
        # The local measurer's contention guard times a CPU sentinel: it says nothing of a GPU.
        if self.guard > 0:
            raise OptionError(f"{owner}: the contention guard (guard) watches the "
                              "CPU and is for the local measurer; leave it out")
        self.device = whole(owner, "device", device, 0)
        self._checked: str | None = None  # target key whose GPU was found usable
        self._arch = ""

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        """One result per config, in order; NoGpuError (once, up front) without a GPU."""
        if not configs:
            return []
        self.require_gpu(target)
        results = super().measure(space, target, configs)
        return [dataclasses.replace(r, measurer=NAME) for r in results]

    def prepare(self, space: Space, target: TargetInfo) -> None:
        """Start the workers early only where the GPU is usable; otherwise the first
        ``measure`` says what is wrong, as it always has."""
        try:
            self.require_gpu(target)
        except OrchestratorError:
            return
        super().prepare(space, target)

    def require_gpu(self, target: TargetInfo) -> None:
        """Raise a one-line OrchestratorError unless ``target`` can run here."""
        if self._checked == target.key:
            return
        if target.kind != "cuda":
            raise OrchestratorError(
                f"measurer cuda runs CUDA targets, not {target.arch or target.kind!r}; use "
                "--target cuda:<gpu>, or --measurer local for the CPU")
        names = local_gpu_names()
        if not names:
            raise NoGpuError(f"measurer cuda: this machine has no NVIDIA GPU (nvidia-smi "
                             f"finds none); {NO_GPU_HINT}")
        if self.device >= len(names):
            raise NoGpuError(f"measurer cuda: no GPU number {self.device} (this machine has "
                             f"{len(names)}); pass --measurer-opt device=0")
        import tvm

        if not tvm.cuda(self.device).exist:
            raise NoGpuError(f"measurer cuda: TVM cannot open GPU {self.device} "
                             f"({names[self.device]}): is the NVIDIA driver loaded and TVM "
                             f"built with CUDA? Otherwise {NO_GPU_HINT}")
        spec = spec_for_name(names[self.device])
        arch = str(target.tvm_json.get("arch", ""))
        if spec is not None and arch and spec.arch != arch:
            raise OrchestratorError(
                f"measurer cuda: the target is {target.arch} ({arch}) but GPU {self.device} "
                f"is a {names[self.device]} ({spec.arch}); use --target cuda:{spec.name}")
        self._checked = target.key

    # -- LocalMeasurer hooks --------------------------------------------------------------

    def _pools(self, target: TargetInfo) -> tuple[WorkerPool, WorkerPool]:
        self._arch = str(target.tvm_json.get("arch", ""))
        if self._builders is None:
            self._builders = self._new_pool("build", self.build_workers, {})
        if self._runner is None:
            self._runner = self._new_pool("run", 1, {DEVICE_ENV: str(self.device)})
        self._runner.start()  # its start-up overlaps the first batch's builds
        return self._builders, self._runner

    def _new_pool(self, role: str, size: int, env: dict[str, str]) -> WorkerPool:
        if self._root is None:
            self._make_root()
        assert self._root is not None
        return CudaPool(role, size, self._root, env=env, startup_timeout=self.startup_timeout)

    def _make_root(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="orchestrator-cuda-"))
        self._remove_root = weakref.finalize(self, shutil.rmtree, self._root,
                                             ignore_errors=True)

    def _run_request(self, space: Space, target: TargetInfo, built: Outcome) -> dict[str, Any]:
        assert built.reply is not None
        request = super()._run_request(space, target, built)
        request.update(cubin=built.reply["cubin"], source_sha=built.reply["source_sha"],
                       arch=self._arch)
        return request
