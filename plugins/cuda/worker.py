"""CUDA worker subprocesses: ``python -m plugins.cuda.worker build|run``.

They speak the JSON-line protocol of ``plugins.measure.workerpool`` (a ready line, one
reply per request echoing its id, replies on a private copy of stdout).

* ``build`` (CPU only): schedules a config through the space's schedule function,
  compiles it with TVM for the CUDA target, exports the host library (``kernel.so``,
  which embeds the CUDA C) and compiles that CUDA C with nvcc into ``kernel.cubin``
  for the target's arch. The reply names both files and the source's SHA-256.
* ``run`` (GPU): loads a library on ``tvm.cuda(device)``. TVM compiles the embedded CUDA
  C when it loads the library, through the ``tvm_callback_cuda_compile`` hook; this
  worker answers that hook with the cubin the build worker made (matched by the
  source's SHA-256), so nothing is compiled while kernels are timed. The output is
  checked against the NumPy reference and timed as by the ``local`` measurer.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from plugins.measure.worker import (
    BuildHandler,
    RunHandler,
    _claim_reply_stream,
    _die_with_parent,
    _fail,
)
from plugins.measure.workerpool import Worker, WorkerPool, describe_exception

MODULE = "plugins.cuda.worker"
KERNEL_FILE = "kernel.so"
CUBIN_FILE = "kernel.cubin"


def source_digest(source: str) -> str:
    """The SHA-256 (hex) by which the runner matches a CUDA source to its cubin."""
    return hashlib.sha256(source.encode()).hexdigest()


class CudaBuildHandler(BuildHandler):
    """Schedule, compile, export and nvcc-compile one config per request (no GPU needed)."""

    def build(self, mod: Any, target: Any, req: dict[str, Any]) -> dict[str, Any]:
        """Compile, export the library and nvcc-compile its CUDA source to a cubin."""
        from plugins.cuda.ptx import PtxError, arch_of, compile_source

        executable = self.tvm.compile(mod, target=target.tvm_target())
        source = "\n".join(m.inspect_source("cuda") for m in executable.mod.imports
                           if m.kind == "cuda")
        if not source:
            return _fail("build_error", "TVM generated no CUDA kernel (no loop is bound "
                                        "to blockIdx/threadIdx)")
        out = Path(req["out_dir"])
        out.mkdir(parents=True, exist_ok=True)
        executable.export_library(str(out / KERNEL_FILE))
        try:
            cubin = compile_source(source, arch_of(target), "cubin",
                                   float(req.get("nvcc_timeout", 300)))
        except PtxError as exc:
            return _fail("build_error", str(exc))
        (out / CUBIN_FILE).write_bytes(cubin)
        return {"status": "ok", "path": str(out / KERNEL_FILE), "cubin": str(out / CUBIN_FILE),
                "source_sha": source_digest(source)}


class CubinHook:
    """The ``tvm_callback_cuda_compile`` answer: the prepared cubin for a known source,
    else ``fallback(source)`` (a fresh compile)."""

    def __init__(self, fallback: Callable[[str], bytes]) -> None:
        self.fallback = fallback
        self.binaries: dict[str, bytes] = {}
        self.hits = 0

    def __call__(self, source: str, *_: Any) -> bytes:
        binary = self.binaries.get(source_digest(str(source)))
        if binary is None:
            return self.fallback(str(source))
        self.hits += 1
        return binary


class CudaRunHandler(RunHandler):
    """Load, check and time one library per request on ``tvm.cuda(device)``."""

    def __init__(self, device: int = 0) -> None:
        super().__init__()
        import tvm_ffi

        import tvm.support.nvcc  # noqa: F401  (registers TVM's hook; ours overrides it)

        self.dev = self.tvm.cuda(device)
        self.arch = ""
        self.hook = CubinHook(self._compile)
        tvm_ffi.register_global_func("tvm_callback_cuda_compile", self.hook, override=True)

    def _compile(self, source: str) -> bytes:
        from plugins.cuda.ptx import compile_source

        arch = self.arch or "sm_" + str(self.dev.compute_version).replace(".", "")
        return compile_source(source, arch, "cubin")

    def describe(self) -> dict[str, Any]:
        """What the ready line reports: whether the GPU exists, and its name."""
        exists = bool(self.dev.exist)
        return {"gpu": exists, "device_name": str(self.dev.device_name) if exists else ""}

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        self.arch = str(req.get("arch", ""))
        try:
            digest = str(req["source_sha"])
            self.hook.binaries = {digest: Path(req["cubin"]).read_bytes()}
        except (KeyError, OSError) as exc:
            return _fail("run_error", f"no cubin for this kernel: {describe_exception(exc)}")
        try:
            return super().handle(req)
        finally:
            self.hook.binaries = {}


class CudaWorker(Worker):
    """A :class:`Worker` running this module instead of the CPU measurement worker."""

    def __init__(self, role: str, env: Mapping[str, str], log_path: Path) -> None:
        self.role = role
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", MODULE, role], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, env=dict(env), start_new_session=True,
                bufsize=0)
        self.started = time.monotonic()
        self.ready = False
        self.hello: dict[str, Any] = {}
        self._buf = b""


class CudaPool(WorkerPool):
    """A :class:`WorkerPool` of CUDA workers."""

    worker_class = CudaWorker


DEVICE_ENV = "ORCHESTRATOR_CUDA_DEVICE"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    role = args[0] if args else ""
    if role not in ("build", "run"):
        print(f"usage: python -m {MODULE} build|run", file=sys.stderr)
        return 2
    replies = _claim_reply_stream()
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    start = time.monotonic()
    handler: CudaBuildHandler | CudaRunHandler
    hello: dict[str, Any] = {"ready": True, "pid": os.getpid()}
    if role == "build":
        handler = CudaBuildHandler()
    else:
        handler = CudaRunHandler(int(os.environ.get(DEVICE_ENV, "0")))
        hello.update(handler.describe(), threads=handler.threads)
    hello["seconds"] = time.monotonic() - start
    replies.write(json.dumps(hello) + "\n")
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        try:
            reply = handler.handle(req)
        except Exception as exc:  # a malformed request; never let it end the worker
            reply = _fail("build_error" if role == "build" else "run_error",
                          describe_exception(exc))
        reply["id"] = req.get("id")
        replies.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
