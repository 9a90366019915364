"""NVIDIA GPU descriptions: the figures analytical GPU models read, and CUDA targets.

The table holds vendor-published figures (datasheets and the CUDA programming guide's
compute-capability tables). ``resolve_gpu_target("cuda:h100")`` turns a name into a
:class:`~orchestrator.target.TargetInfo` with ``kind == "cuda"``; ``cuda`` alone means
the GPU this machine has (detected with ``nvidia-smi``), and fails with a one-line
error when there is none. Building CUDA kernels needs no GPU (nvcc is enough), so a
named GPU can be targeted from any machine.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass

from orchestrator.errors import TargetError
from orchestrator.target import TargetInfo, freeze_tvm_json


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model. Sizes in bytes, rates per second, FP32 unless named otherwise."""

    name: str                     # short key used in --target cuda:<name>
    title: str                    # marketing name, as nvidia-smi prints it
    arch: str                     # sm_XY, what nvcc and TVM compile for
    sms: int                      # streaming multiprocessors
    warp_size: int
    regs_per_sm: int              # 32-bit registers
    regs_per_thread: int          # most a thread may allocate
    regs_per_block: int
    smem_per_sm: int
    smem_per_block: int           # most one block may use (opt-in limit)
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    peak_fp32_gflops: float
    mem_bandwidth_gbs: float      # DRAM, GB/s
    l2_bytes: int
    clock_ghz: float              # boost clock
    smem_banks: int = 32
    bank_bytes: int = 4

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size

    def target(self) -> TargetInfo:
        """The TargetInfo that compiles for this GPU (kind ``cuda``)."""
        tvm_json = {"kind": "cuda", "arch": self.arch, "max_num_threads": self.max_threads_per_block,
                    "max_threads_per_block": self.max_threads_per_block,
                    "thread_warp_size": self.warp_size,
                    "max_shared_memory_per_block": self.smem_per_block,
                    "registers_per_block": self.regs_per_block,
                    "l2_cache_size_bytes": self.l2_bytes, "tag": ""}
        return TargetInfo(kind="cuda", tvm=freeze_tvm_json(tvm_json), cores=self.sms,
                          simd_bits=self.warp_size * 32, fma=True, l1d_bytes=self.smem_per_sm,
                          l2_bytes=self.l2_bytes, l3_bytes=0, clock_ghz=self.clock_ghz,
                          peak_gflops=self.peak_fp32_gflops, arch=self.name)


_KIB = 1024
_MIB = 1024 * 1024

GPUS: dict[str, GpuSpec] = {g.name: g for g in (
    GpuSpec("h100", "NVIDIA H100 80GB HBM3", "sm_90", 132, 32, 65536, 255, 65536, 228 * _KIB,
            227 * _KIB, 1024, 2048, 32, 66900.0, 3350.0, 50 * _MIB, 1.98),
    GpuSpec("h200", "NVIDIA H200", "sm_90", 132, 32, 65536, 255, 65536, 228 * _KIB, 227 * _KIB,
            1024, 2048, 32, 66900.0, 4800.0, 50 * _MIB, 1.98),
    GpuSpec("a100", "NVIDIA A100-SXM4-80GB", "sm_80", 108, 32, 65536, 255, 65536, 164 * _KIB,
            163 * _KIB, 1024, 2048, 32, 19500.0, 2039.0, 40 * _MIB, 1.41),
    GpuSpec("v100", "Tesla V100-SXM2-16GB", "sm_70", 80, 32, 65536, 255, 65536, 96 * _KIB,
            96 * _KIB, 1024, 2048, 32, 15700.0, 900.0, 6 * _MIB, 1.53),
    GpuSpec("t4", "Tesla T4", "sm_75", 40, 32, 65536, 255, 65536, 64 * _KIB, 64 * _KIB, 1024,
            1024, 16, 8100.0, 320.0, 4 * _MIB, 1.59),
    GpuSpec("rtx2080ti", "NVIDIA GeForce RTX 2080 Ti", "sm_75", 68, 32, 65536, 255, 65536,
            64 * _KIB, 64 * _KIB, 1024, 1024, 16, 13450.0, 616.0, 5632 * _KIB, 1.545),
)}

# nvidia-smi names -> table keys (first match wins; more specific first)
_NAME_HINTS = (("h200", "h200"), ("h100", "h100"), ("a100", "a100"), ("v100", "v100"),
               ("t4", "t4"), ("2080 ti", "rtx2080ti"))


def local_gpu_names() -> list[str]:
    """Names of this machine's NVIDIA GPUs as nvidia-smi prints them; [] when none."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


def spec_for_name(title: str) -> GpuSpec | None:
    """The table entry for an nvidia-smi name, or None if the model is not in the table."""
    low = title.lower()
    for hint, key in _NAME_HINTS:
        if hint in low:
            return GPUS[key]
    return None


def detect_gpu() -> GpuSpec:
    """The first local GPU's description; TargetError if there is none or it is unknown."""
    names = local_gpu_names()
    if not names:
        raise TargetError("no NVIDIA GPU on this machine (nvidia-smi found none); name one to "
                          f"compile for instead: --target cuda:<{'|'.join(GPUS)}>")
    spec = spec_for_name(names[0])
    if spec is None:
        raise TargetError(f"GPU {names[0]!r} is not in the GPU table; use --target "
                          f"cuda:<{'|'.join(GPUS)}> for the closest model")
    return spec


def gpu_spec(target: TargetInfo) -> GpuSpec:
    """The GpuSpec behind a CUDA TargetInfo."""
    if target.kind != "cuda":
        raise TargetError(f"target {target.arch or target.kind!r} is not a CUDA GPU")
    try:
        return GPUS[target.arch]
    except KeyError:
        raise TargetError(f"unknown GPU {target.arch!r}; known: {', '.join(GPUS)}") from None


def resolve_gpu_target(name: str) -> TargetInfo:
    """``cuda`` (this machine's GPU) or ``cuda:<model>`` (any model of the table)."""
    _, _, model = name.partition(":")
    model = model.strip().lower()
    if not model:
        return detect_gpu().target()
    if model not in GPUS:
        raise TargetError(f"unknown GPU {model!r} in --target {name!r}; known: "
                          f"{', '.join(GPUS)}")
    return GPUS[model].target()
