"""What every result file names: the machine, TVM version, thread count and date."""

from __future__ import annotations

import datetime
import os
import platform
import re
import shutil
import subprocess
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def cpu_model() -> str:
    try:
        m = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
        return m.group(1).strip() if m else platform.processor() or "unknown CPU"
    except OSError:
        return platform.processor() or "unknown CPU"


def cpu_kind() -> str:
    """The LLVM CPU name TVM detects and the widest SIMD, e.g. ``znver3, AVX2``: the
    model name alone ("AMD EPYC") does not tell one generation from another."""
    try:
        from orchestrator.target import detect_host

        host = detect_host()
    except Exception:  # no TVM, or it cannot tell: the model name has to do
        return ""
    simd = {512: "AVX-512", 256: "AVX2"}.get(host.simd_bits, f"{host.simd_bits}-bit SIMD")
    return f"{host.arch}, {simd}"


def gpus() -> list[str]:
    """``name, driver`` of each NVIDIA GPU ``nvidia-smi`` lists; none without it."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [line.strip() for line in out.splitlines() if line.strip()]


def machine_header() -> str:
    """A markdown block naming the machine (and its GPUs, if any) and the software the
    figures were taken on."""
    try:
        tvm = version("apache-tvm")
    except PackageNotFoundError:
        tvm = "not installed"
    cores = len(os.sched_getaffinity(0))
    kind = cpu_kind()
    found = gpus()
    return "\n".join([
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {cpu_model()}{f' ({kind})' if kind else ''}, {cores} cores available, "
        f"{platform.machine()}, Linux {platform.release()}",
        *([f"- GPU: {'; '.join(found)} (name, driver)"] if found else []),
        f"- Python {platform.python_version()}, apache-tvm {tvm}, {threads_note(cores)}",
    ])


def threads_note(cores: int) -> str:
    """``TVM_NUM_THREADS=N``, or when unset what the local measurer's runner uses: it sets
    the variable to the target's cores itself (TVM's own default is half of them)."""
    value = os.environ.get("TVM_NUM_THREADS")
    if value is not None:
        return f"TVM_NUM_THREADS={value}"
    return (f"TVM_NUM_THREADS unset here; the local measurer times with "
            f"TVM_NUM_THREADS={cores}, one thread per core")


def write_report(path: Path, text: str) -> None:
    """Write a result file (its folder made if needed) and echo it to the terminal."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(text)


def write_or_print(path: Path | None, text: str) -> None:
    """Write a report read from other reports to ``path`` (its folder made if needed) and
    name the file; print the text itself when no path is given."""
    if path is None:
        print(text, end="")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"report: {path}")
