"""The hardware target: the TVM target JSON plus a small description cost models read."""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from orchestrator.errors import TargetError
from orchestrator.jsonkey import canonical_json, key_hash

# Floating-point operations per cycle per core for fp32, by micro-architecture family:
# FMA pipes x SIMD lanes x 2. Zen 4 executes AVX-512 on two 256-bit pipes.
_FLOPS_PER_CYCLE = {"avx512": 64, "znver4": 32, "avx2": 32, "neon": 16, "sse": 8}


@dataclass(frozen=True)
class TargetInfo:
    """A frozen description of where kernels run.

    ``tvm`` is the JSON target given to TVM (never the CLI string form, which 0.27
    rejects). The other fields are read by cost models; ``peak_gflops`` is an estimate
    from the SIMD width, FMA pipes, core count and the nominal clock the OS reports, so
    a kernel running at a turbo clock can exceed it.
    """

    kind: str
    tvm: tuple[tuple[str, Any], ...]
    cores: int
    simd_bits: int
    fma: bool
    l1d_bytes: int
    l2_bytes: int
    l3_bytes: int
    clock_ghz: float
    peak_gflops: float
    arch: str = ""
    simulated: bool = False
    # Ways of associativity (0: unknown, treated as fully associative). With the line
    # size they give the number of sets, which decides whether strided data conflicts.
    l1d_ways: int = 0
    l2_ways: int = 0

    @property
    def tvm_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.tvm}

    def tvm_target(self) -> Any:
        import tvm

        return tvm.target.Target(self.tvm_json)

    @property
    def key(self) -> str:
        return canonical_json(self.tvm_json)

    @property
    def key_hash(self) -> str:
        return key_hash(self.key)

    @property
    def simd_lanes_fp32(self) -> int:
        return self.simd_bits // 32

    def with_cores(self, cores: int) -> TargetInfo:
        """The same target with its kernels run on ``cores`` cores."""
        return replace(self, cores=cores, tvm=tuple(
            (k, cores if k == "num-cores" else v) for k, v in self.tvm))

    def cache_sets(self, level: int, line_bytes: int = 64) -> int:
        """Sets of the L1d (``level`` 1) or L2 cache; 1 when the ways are unknown."""
        size, ways = (self.l1d_bytes, self.l1d_ways) if level == 1 else (self.l2_bytes,
                                                                           self.l2_ways)
        if ways <= 0 or size <= 0:
            return 1
        return max(1, size // (ways * line_bytes))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tvm"] = self.tvm_json
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TargetInfo:
        d = dict(data)
        d["tvm"] = freeze_tvm_json(d["tvm"])
        return cls(**d)


def freeze_tvm_json(tvm_json: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A TVM target JSON object as the sorted, hashable pairs ``TargetInfo.tvm`` holds."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in tvm_json.items()))


def _cpu_flags(cpuinfo: str | None) -> set[str]:
    m = re.search(r"^(flags|Features)\s*:\s*(.*)$", cpuinfo or "", re.M)
    return set(m.group(2).split()) if m else set()


CPU_MAX_FREQ = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")


def _clock_ghz(cpuinfo: str | None) -> float:
    """The maximum clock from sysfs, else the current one /proc/cpuinfo gives, else 2.5."""
    try:
        return int(CPU_MAX_FREQ.read_text()) / 1e6
    except (OSError, ValueError):
        pass
    m = re.search(r"^cpu MHz\s*:\s*([\d.]+)", cpuinfo or "", re.M)
    return float(m.group(1)) / 1000 if m else 2.5


CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")


def _cache_level(level: int, kind: str = "Data") -> tuple[int, int]:
    """(size in bytes, ways) of the host's data/unified cache at ``level``."""
    for idx in sorted(CACHE_DIR.glob("index*")):
        try:
            if int((idx / "level").read_text()) != level:
                continue
            if level == 1 and (idx / "type").read_text().strip() != kind:
                continue
            size = (idx / "size").read_text().strip()
        except (OSError, ValueError):
            continue
        unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1], 1)
        try:
            ways = int((idx / "ways_of_associativity").read_text())
        except (OSError, ValueError):
            ways = 0
        return int(size.rstrip("KMG")) * unit, max(0, ways)
    return {1: 32 << 10, 2: 1 << 20, 3: 8 << 20}[level], 0


def _cache_bytes(level: int, kind: str = "Data") -> int:
    return _cache_level(level, kind)[0]


def cpu_cores() -> int:
    """Cores this process may use (the affinity mask, which containers restrict)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def detect_host() -> TargetInfo:
    """Describe the host CPU, with the ``mcpu`` LLVM knows it by (asked of TVM once per
    machine and TVM version: ``orchestrator.host_cpu``)."""
    from orchestrator.host_cpu import llvm_host, read_cpuinfo

    cpuinfo = read_cpuinfo()  # once: the flags, the clock and LLVM's fingerprint read it
    mcpu, mtriple = llvm_host(cpuinfo)
    cores = cpu_cores()
    flags = _cpu_flags(cpuinfo)
    if "avx512f" in flags:
        simd, family = 512, ("znver4" if mcpu.startswith("znver") else "avx512")
    elif "avx2" in flags:
        simd, family = 256, "avx2"
    elif "asimd" in flags or mtriple.startswith("aarch64"):
        simd, family = 128, "neon"
    else:
        simd, family = 128, "sse"
    fma = "fma" in flags or family == "neon"
    clock = _clock_ghz(cpuinfo)
    (l1_bytes, l1_ways), (l2_bytes, l2_ways) = _cache_level(1), _cache_level(2)
    tvm_json: dict[str, Any] = {"kind": "llvm", "mcpu": mcpu, "num-cores": cores}
    if mtriple:
        tvm_json["mtriple"] = mtriple
    return TargetInfo(
        kind="llvm",
        tvm=freeze_tvm_json(tvm_json),
        cores=cores,
        simd_bits=simd,
        fma=fma,
        l1d_bytes=l1_bytes,
        l2_bytes=l2_bytes,
        l3_bytes=_cache_bytes(3),
        clock_ghz=round(clock, 3),
        peak_gflops=round(cores * clock * _FLOPS_PER_CYCLE[family], 1),
        arch=mcpu,
        l1d_ways=l1_ways,
        l2_ways=l2_ways,
    )


def resolve_target(name: str) -> TargetInfo:
    """``host`` (the default) or ``llvm``: this machine's CPU; ``cuda`` or ``cuda:<gpu>``:
    an NVIDIA GPU (see :mod:`orchestrator.gpus`)."""
    if name in ("host", "llvm", "cpu"):
        return detect_host()
    if name == "cuda" or name.startswith("cuda:"):
        from orchestrator.gpus import resolve_gpu_target

        return resolve_gpu_target(name)
    raise TargetError(f"unknown target {name!r}; use 'host' (this machine's CPU) or "
                      "'cuda:<gpu>' (e.g. cuda:h100)")
