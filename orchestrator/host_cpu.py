"""The name LLVM knows this machine's CPU by (``mcpu``, ``mtriple``), remembered per machine.

Only TVM can say it, and importing TVM takes about a second; nothing else the tuning loop's
own process does needs TVM (builds and timings run in worker processes). So the answer is
kept in a small file under the user's cache directory, with a fingerprint of what it
depends on: the CPU as the kernel describes it (vendor, family, model, flags), the machine
type and the TVM version. A later process whose fingerprint matches reads the file instead
of importing TVM; any change, or an unreadable file, asks TVM again. Delete the file
(``orchestrator/host-cpu.json`` under ``$XDG_CACHE_HOME`` or ``~/.cache``) to force that.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import tempfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from orchestrator.errors import TargetError

CPUINFO = Path("/proc/cpuinfo")
# The lines of /proc/cpuinfo's first processor that LLVM's host detection depends on
# (x86: CPUID vendor, family, model, features; Arm: implementer, part, features).
_CPU_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags",
               "Features", "CPU implementer", "CPU architecture", "CPU variant", "CPU part")


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orchestrator" / "host-cpu.json"


def read_cpuinfo() -> str | None:
    """The text of ``/proc/cpuinfo``; None where it cannot be read."""
    try:
        return CPUINFO.read_text()
    except OSError:
        return None


def fingerprint(cpuinfo: str | None = None) -> str | None:
    """A hash of what the answer depends on (``cpuinfo``: the text of /proc/cpuinfo,
    read here if not given), or None where the CPU cannot be read (then nothing is
    remembered)."""
    text = cpuinfo if cpuinfo is not None else read_cpuinfo()
    if text is None:
        return None
    first = text.split("\n\n", 1)[0]
    fields = {}
    for line in first.splitlines():
        name, sep, value = line.partition(":")
        if sep and name.strip() in _CPU_FIELDS:
            fields[name.strip()] = value.strip()
    if not fields:
        return None
    try:
        tvm_version = version("apache-tvm")
    except PackageNotFoundError:
        tvm_version = "unknown"
    fields.update(machine=platform.machine(), tvm=tvm_version)
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def ask_tvm() -> tuple[str, str]:
    """(mcpu, mtriple) from TVM's own host detection (imports TVM)."""
    import tvm

    try:
        detected = tvm.target.Target.from_device(tvm.cpu()).export()
    except Exception as exc:  # TVM raises its own error types here
        raise TargetError(f"cannot detect the host CPU through TVM: {exc}") from None
    return str(detected.get("mcpu") or "generic"), str(detected.get("mtriple") or "")


def llvm_host(cpuinfo: str | None = None) -> tuple[str, str]:
    """(mcpu, mtriple) of this machine: remembered if the fingerprint matches, else asked
    of TVM and remembered (``cpuinfo`` as for :func:`fingerprint`)."""
    key = fingerprint(cpuinfo)
    path = cache_path()
    if key is not None:
        try:
            data = json.loads(path.read_text())
            if data["fingerprint"] == key:
                return str(data["mcpu"]), str(data["mtriple"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    mcpu, mtriple = ask_tvm()
    if key is not None:
        _remember(path, {"fingerprint": key, "mcpu": mcpu, "mtriple": mtriple})
    return mcpu, mtriple


def _remember(path: Path, data: dict[str, str]) -> None:
    """Write ``data`` atomically (a reader never sees half a file); a cache that cannot be
    written is only a slower start."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".host-cpu-", suffix=".json")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
