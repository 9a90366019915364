"""On-disk JSON-lines cache of feature vectors, one file per (task, target, template).

The file name hashes the task key, the target key, the schedule function with a
fingerprint of its package's source, a fingerprint of this analyzer's source, the TVM
version and the feature version: a config's features are reused only when all of them
are unchanged (a fix to the counting keeps the feature version, and so the fitted
coefficients, but not the cached counts). Each line holds one config key and either its
features or the deterministic failure (invalid config, build error) it produced; lines
are appended (O_APPEND), so several processes may share a file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.jsonkey import canonical_json
from orchestrator.space import Space
from orchestrator.target import TargetInfo
from plugins.tuna.features import FEATURE_VERSION, Features

ENV_DIR = "ORCHESTRATOR_TUNA_CACHE"


@dataclass(frozen=True)
class Failure:
    """A config whose features cannot be computed: ``status`` is a MeasureStatus value."""

    status: str
    error: str


Entry = Features | Failure


def default_dir() -> Path:
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "orchestrator" / "tuna"


_FINGERPRINTS: dict[str, str] = {}


def template_fingerprint(schedule_fn: str) -> str:
    """A hash of the source files of the schedule function's package (a changed template
    builds different code)."""
    if schedule_fn in _FINGERPRINTS:
        return _FINGERPRINTS[schedule_fn]
    module = schedule_fn.partition(":")[0]
    digest = hashlib.sha256(schedule_fn.encode())
    try:
        spec = importlib.util.find_spec(module)
        origin = Path(spec.origin) if spec and spec.origin else None
    except (ImportError, ValueError):
        origin = None
    if origin is not None and origin.exists():
        for path in sorted(origin.parent.glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    _FINGERPRINTS[schedule_fn] = digest.hexdigest()[:16]
    return _FINGERPRINTS[schedule_fn]


def analyzer_fingerprint() -> str:
    """A hash of the source of this package (the static analyzer that computes features)."""
    return template_fingerprint(f"{__name__.rpartition('.')[0]}.features:analyze")


def tvm_version() -> str:
    """The installed apache-tvm version (part of every cache key)."""
    try:
        from importlib.metadata import version

        return version("apache-tvm")
    except Exception:  # not installed as a distribution
        return "unknown"


def cache_key(space: Space, target: TargetInfo, opt_level: int | None = None) -> dict[str, Any]:
    key = {"task": space.task.key, "target": target.key, "schedule_fn": space.schedule_fn,
            "template": template_fingerprint(space.schedule_fn), "tvm": tvm_version(),
            "features": FEATURE_VERSION, "analyzer": analyzer_fingerprint(),
            # The data-movement features depend on the caches, which the TVM target
            # (mcpu, cores) does not pin down.
            "caches": [target.l1d_bytes, target.l1d_ways, target.l2_bytes, target.l2_ways]}
    if opt_level is not None:  # absent by default, so that TVM's level keeps its caches
        key["opt_level"] = int(opt_level)
    return key


class FeatureCache:
    """Features by config key for one (space, target), backed by a JSON-lines file."""

    def __init__(self, space: Space, target: TargetInfo, directory: Path | None = None,
                 opt_level: int | None = None) -> None:
        self.key = cache_key(space, target, opt_level)
        name = hashlib.sha256(canonical_json(self.key).encode()).hexdigest()[:24]
        self.path = (directory or default_dir()) / f"{name}.jsonl"
        self._entries: dict[str, Entry] | None = None

    def _load(self) -> dict[str, Entry]:
        if self._entries is not None:
            return self._entries
        entries: dict[str, Entry] = {}
        try:
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        item = json.loads(line)
                    except ValueError:
                        continue  # a line cut short by a crash
                    if "header" in item:
                        if item["header"] != self.key:
                            break  # a hash collision: treat as empty
                        continue
                    if "features" in item:
                        entries[item["config"]] = Features.from_dict(item["features"])
                    elif "status" in item:
                        entries[item["config"]] = Failure(item["status"], item.get("error", ""))
        except OSError:
            pass
        self._entries = entries
        return entries

    def get(self, config_key: str) -> Entry | None:
        return self._load().get(config_key)

    def __len__(self) -> int:
        return len(self._load())

    def put(self, items: list[tuple[str, Entry]]) -> None:
        """Remember and append entries (failures only when deterministic)."""
        if not items:
            return
        entries = self._load()
        lines = []
        for key, entry in items:
            entries[key] = entry
            if isinstance(entry, Features):
                lines.append({"config": key, "features": entry.to_dict()})
            else:
                lines.append({"config": key, "status": entry.status, "error": entry.error})
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            new = not self.path.exists()
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            with os.fdopen(fd, "a", encoding="utf-8") as f:
                text = "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines)
                if new:
                    text = json.dumps({"header": self.key}, sort_keys=True) + "\n" + text
                f.write(text)
        except OSError:
            pass  # a read-only cache directory only costs recomputation
