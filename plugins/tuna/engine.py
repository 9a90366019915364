"""Feature extraction for many configs: cached, in parallel worker processes.

Static analysis needs no hardware, so every core can analyze configs at once. Workers
are started on first use and kept until :meth:`FeatureEngine.close` (or interpreter
exit); ``workers=0`` analyzes in this process instead (tests, tiny batches). The
default is one worker per core, or ``$ORCHESTRATOR_TUNA_WORKERS``. The workers of an
engine share the counts of the programs they generated (``plugins.tuna.programs``), so
configs that lower to the same TIR pay for code generation once. ``opt_level``
generates the analyzed code at another LLVM optimization level than TVM's (3).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path

from orchestrator.errors import OptionError
from orchestrator.options import whole
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo, cpu_cores
from plugins.tuna.cache import Entry, FeatureCache, Failure
from plugins.tuna.features import OPT_LEVELS, Features

DEFAULT_TIMEOUT = 120.0
ENV_WORKERS = "ORCHESTRATOR_TUNA_WORKERS"


class FeatureEngine:
    """Features of configs, from the cache or computed by a pool of analysis workers."""

    def __init__(self, *, workers: int | None = None, cache_dir: str | Path | None = None,
                 timeout: float = DEFAULT_TIMEOUT, use_cache: bool = True,
                 opt_level: int | None = None) -> None:
        self.opt_level = check_opt_level(opt_level)
        if workers is None:
            workers = int(os.environ.get(ENV_WORKERS) or cpu_cores())
        self.workers = max(0, int(workers))
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.timeout = float(timeout)
        self.use_cache = use_cache
        self._caches: dict[tuple[str, str, str], FeatureCache] = {}
        self._pool = None
        self._root: Path | None = None
        self._cleanup: weakref.finalize | None = None
        self.analyzed = 0          # configs analyzed (not answered from the cache)
        self.analysis_seconds = 0.0  # wall time spent analyzing them

    def _cache(self, space: Space, target: TargetInfo) -> FeatureCache:
        key = (space.task.key, target.key, space.schedule_fn)
        if key not in self._caches:
            self._caches[key] = FeatureCache(space, target, self.cache_dir, self.opt_level)
        return self._caches[key]

    def features(self, space: Space, target: TargetInfo,
                 configs: Sequence[Config]) -> list[Entry]:
        """One entry per config, in order: its Features, or a Failure."""
        cache = self._cache(space, target)
        out: list[Entry | None] = [cache.get(c.key) if self.use_cache else None for c in configs]
        todo: dict[str, list[int]] = {}
        for i, (c, e) in enumerate(zip(configs, out)):
            if e is None:
                todo.setdefault(c.key, []).append(i)
        if todo:
            wanted = [configs[idx[0]] for idx in todo.values()]
            start = time.monotonic()
            computed = self._compute(space, target, wanted)
            self.analysis_seconds += time.monotonic() - start
            self.analyzed += len(wanted)
            keep = []
            for cfg, entry in zip(wanted, computed):
                for i in todo[cfg.key]:
                    out[i] = entry
                if isinstance(entry, Features) or entry.status in ("invalid_config",
                                                                   "build_error"):
                    keep.append((cfg.key, entry))
            if self.use_cache:
                cache.put(keep)
        return [e for e in out if e is not None]

    def _compute(self, space: Space, target: TargetInfo,
                 configs: Sequence[Config]) -> list[Entry]:
        common = {"schedule_fn": space.schedule_fn, "task": space.task.to_dict(),
                  "target": target.to_dict(), "programs": str(self._scratch() / "programs")}
        if self.opt_level is not None:
            common["opt_level"] = self.opt_level
        requests = [{**common, "config": c.to_dict()} for c in configs]
        if self.workers == 0:
            from plugins.tuna.worker import handle

            return [_entry(handle(r)) for r in requests]
        outcomes = self._workers().map(requests, self.timeout)
        out: list[Entry] = []
        for o in outcomes:
            if o.reply is None:
                status = "build_timeout" if o.failure == "timeout" else "build_error"
                out.append(Failure(status, o.error))
            else:
                out.append(_entry(o.reply))
        return out

    def _scratch(self) -> Path:
        """This engine's temporary directory: worker logs and the shared program counts."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="orchestrator-tuna-"))
            self._cleanup = weakref.finalize(self, shutil.rmtree, self._root, ignore_errors=True)
        return self._root

    def _workers(self):  # noqa: ANN202 - an AnalysisPool (imported lazily)
        from plugins.tuna.worker import AnalysisPool

        if self._pool is None:
            self._pool = AnalysisPool("analyze", self.workers, self._scratch())
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._cleanup is not None:
            self._cleanup()
            self._cleanup = None
            self._root = None


def check_opt_level(value: int | str | None, owner: str = "tuna") -> int | None:
    """``value`` as an LLVM optimization level of :data:`OPT_LEVELS`, None kept (TVM's);
    else a one-line error naming ``owner``."""
    if value is None:
        return None
    try:  # int() would truncate 2.5 to 2 and take True as 1
        level = whole(owner, "opt_level", value, 0)
    except OptionError:
        level = -1
    if level not in OPT_LEVELS:
        raise OptionError(
            f"{owner}: opt_level {value!r} is not an LLVM optimization level; use one of "
            f"{', '.join(map(str, OPT_LEVELS))} (3 is what TVM builds)")
    return level


def _entry(reply: dict) -> Entry:
    if reply.get("status") == "ok":
        return Features.from_dict(reply["features"])
    return Failure(str(reply.get("status", "build_error")), str(reply.get("error", "")))
