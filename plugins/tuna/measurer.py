"""The ``static`` measurer: a config's "latency" is its static score, no hardware used."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from orchestrator.options import option_names, owner_name, unknown_options
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.tuna.engine import DEFAULT_TIMEOUT
from plugins.tuna.features import Features
from plugins.tuna.scoring import StaticScorer

NAME = "static"


class StaticMeasurer:
    """Predicts each config's latency by Tuna static analysis instead of running it.

    Results have status ok and one latency sample, the predicted seconds, and are
    marked ``measurer="static"`` so history can tell them from real timings; a config
    that cannot be built is ``invalid_config`` or ``build_error`` as with ``local``.
    Options: ``workers``, ``cache_dir``, ``coefficients``, ``timeout``, ``opt_level``
    (LLVM's optimization level of the analyzed code; TVM's 3 by default; 2 is a little faster
    and less accurate).
    """

    #: Its latencies are predictions, not timings (read by the CLI to label them).
    predicts = True

    def __init__(self, *, workers: int | None = None, cache_dir: str | Path | None = None,
                 coefficients: str | Path | None = None, timeout: float = DEFAULT_TIMEOUT,
                 opt_level: int | None = None, **unknown: Any) -> None:
        owner = owner_name("measurer", NAME)
        if unknown:
            raise unknown_options(owner, unknown, option_names(StaticMeasurer))
        self.scorer = StaticScorer(workers=workers, cache_dir=cache_dir,
                                   coefficients=coefficients, timeout=timeout,
                                   opt_level=opt_level, owner=owner)

    def measure(self, space: Space, target: TargetInfo,
                configs: Sequence[Config]) -> list[MeasureResult]:
        out = []
        for cfg, entry in zip(configs, self.scorer.entries(space, target, configs)):
            if isinstance(entry, Features):
                seconds = self.scorer.seconds(target, entry) or 0.0
                out.append(MeasureResult(cfg, MeasureStatus.OK, (seconds,),
                                         build_seconds=entry.seconds, measurer=NAME))
            else:
                try:
                    status = MeasureStatus(entry.status)
                except ValueError:
                    status = MeasureStatus.BUILD_ERROR
                out.append(MeasureResult(cfg, status, error=entry.error, measurer=NAME))
        return out

    def close(self) -> None:
        self.scorer.close()
