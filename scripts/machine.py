"""What every result file names: the machine, TVM version, thread count and date."""

from __future__ import annotations

import datetime
import os
import platform
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def cpu_model() -> str:
    try:
        m = re.search(r"^model name\s*:\s*(.*)$", Path("/proc/cpuinfo").read_text(), re.M)
        return m.group(1).strip() if m else platform.processor() or "unknown CPU"
    except OSError:
        return platform.processor() or "unknown CPU"


def machine_header() -> str:
    """A markdown block naming the machine and software the figures were taken on."""
    try:
        tvm = version("apache-tvm")
    except PackageNotFoundError:
        tvm = "not installed"
    cores = len(os.sched_getaffinity(0))
    return "\n".join([
        f"- Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
        f"- Machine: {cpu_model()}, {cores} cores available, {platform.machine()}, "
        f"Linux {platform.release()}",
        f"- Python {platform.python_version()}, apache-tvm {tvm}, "
        f"TVM_NUM_THREADS={os.environ.get('TVM_NUM_THREADS', 'unset')}",
    ])
