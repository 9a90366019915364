"""Offline training of the ``cnnopt-ml`` and ``cnnopt-hybrid`` models (section 4.1).

Training data are real measurements from the history database: every ok result of a
conv2d task on the target GPU whose config belongs to the cnnopt space (results of
other templates have other knobs and are skipped; static, replayed and synthetic
results are not timings). ``train_command`` is ``orchestrator train``.

``random_problems`` draws training problem sizes as the paper does (X = Y with a largest
prime factor of at most 17, K and C powers of two, C = 3 too, F in {3, 5, 7}), with
smaller upper bounds by default so that a training campaign fits in an hour.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from orchestrator.gpus import GpuSpec, gpu_spec
from orchestrator.result import MeasureResult
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.features import KINDS, feature_names, matrix
from plugins.cnnopt.generator import CnnoptSpaces
from plugins.cnnopt.regression import Forest, ForestParams, TrainedModel, now, user_path

# Results from these measurers are not real timings.
NOT_MEASURED = ("static", "replay", "synthetic", "space")
MIN_SAMPLES = 16


@dataclass(frozen=True)
class Samples:
    """Training rows of one kind, their latencies and the task each row belongs to."""

    x: np.ndarray
    seconds: np.ndarray
    groups: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.seconds)


def best_real(results: Sequence[MeasureResult]) -> dict[Config, float]:
    """The best real (measured on hardware) latency of each config."""
    best: dict[Config, float] = {}
    for r in results:
        if r.ok and r.measurer not in NOT_MEASURED and r.latency < best.get(r.config, np.inf):
            best[r.config] = r.latency
    return best


def task_samples(space: Space, results: Sequence[MeasureResult], kind: str,
                 gpu: GpuSpec) -> Samples:
    """Rows of one task's measured configs that belong to its cnnopt space."""
    best = best_real(results)
    members = set(space.candidates) if space.candidates is not None else None
    knob_space = dataclasses.replace(space, candidates=None)
    configs = [c for c in best if knob_space.validate(c) is None
               and (members is None or c in members)]
    x, ok = matrix(space, configs, kind, gpu)
    keep = np.array(ok, bool)
    secs = np.array([best[c] for c in configs], float)
    return Samples(x[keep] if len(x) else x, secs[keep] if len(secs) else secs,
                   tuple(space.task.key for k in ok if k))


def concat(parts: Sequence[Samples], kind: str) -> Samples:
    width = len(feature_names(kind))
    xs = [p.x for p in parts if len(p)]
    if not xs:
        return Samples(np.zeros((0, width)), np.zeros(0), ())
    return Samples(np.vstack(xs), np.concatenate([p.seconds for p in parts if len(p)]),
                   tuple(g for p in parts for g in p.groups))


def history_samples(store: Any, target: TargetInfo, kind: str,
                    log: Callable[[str], None] | None = None) -> Samples:
    """Samples of every conv2d task measured on ``target`` in ``store``."""
    target_id = store.find_target(target)
    if target_id is None:
        return concat([], kind)
    gen, gpu = CnnoptSpaces(), gpu_spec(target)
    parts = []
    for task_id, task in store.tasks():
        if not gen.supports(task, target):
            continue
        results = store.results(task_id, target_id, ok_only=True)
        got = task_samples(gen.generate(task, target), results, kind, gpu)
        if len(got) and log:
            log(f"  {task.label()}: {len(got)} configs")
        parts.append(got)
    return concat(parts, kind)


def train(samples: Samples, kind: str, gpu: str, *, seed: int = 0,
          params: ForestParams | None = None) -> TrainedModel:
    """A trained model of ``kind`` from ``samples``."""
    if len(samples) < MIN_SAMPLES:
        raise CnnoptError(f"training cnnopt-{kind} needs at least {MIN_SAMPLES} measured "
                          f"cnnopt configs, found {len(samples)}; tune conv2d tasks with "
                          "--space cnnopt --measurer cuda on this GPU first")
    forest = Forest(params, seed).fit(samples.x, samples.seconds)
    info = {"samples": len(samples), "tasks": len(set(samples.groups)), "date": now(),
            "seed": seed, "target": f"cuda:{gpu}"}
    return TrainedModel(kind, gpu, forest, info)


def kind_of(cost_model: str) -> str:
    """``ml`` or ``hybrid`` from a cost model name (CnnoptError for others)."""
    kind = cost_model.removeprefix("cnnopt-")
    if kind not in KINDS:
        raise CnnoptError(f"cannot train cost model {cost_model!r}; trainable: "
                          + ", ".join(f"cnnopt-{k}" for k in KINDS))
    return kind


def train_command(cost_model: str, db: str | None, target: str, out: Path | None) -> int:
    """``orchestrator train --cost-model cnnopt-hybrid``: fit and store the model.

    Reads every real conv2d measurement of the cnnopt space on ``target`` from the
    history database ``db`` and writes the trained model to ``out`` (default: the user
    config dir, where the cost models look). Returns the exit code.
    """
    from history.store import HistoryStore
    from orchestrator.target import resolve_target

    kind = kind_of(cost_model)
    tgt = resolve_target(target)
    gpu = gpu_spec(tgt)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr)

    store = HistoryStore.open(db, create=False)
    try:
        log(f"reading real cnnopt measurements on {gpu.name} from {store.url}")
        samples = history_samples(store, tgt, kind, log)
    finally:
        store.close()
    model = train(samples, kind, gpu.name)
    path = model.save(out or user_path(gpu.name, kind))
    print(f"wrote cnnopt-{kind} model for {gpu.name} trained on {len(samples)} configs of "
          f"{model.info['tasks']} task(s) to {path}")
    return 0


# -- training problem sizes ---------------------------------------------------------------

def largest_prime_factor(n: int) -> int:
    largest, p = 1, 2
    while p * p <= n:
        while n % p == 0:
            largest, n = p, n // p
        p += 1
    return max(largest, n) if n > 1 else largest


def random_problems(rng: random.Random, count: int, *, stride: int = 1, max_xy: int = 112,
                    max_channels: int = 512) -> list[Task]:
    """``count`` random conv2d problems (batch 1, padding keeps X = H / stride)."""
    xs = [v for v in range(3, max_xy + 1) if largest_prime_factor(v) <= 17]
    chans = [2 ** e for e in range(4, 11) if 2 ** e <= max_channels]
    tasks: list[Task] = []
    while len(tasks) < count:
        out = rng.choice(xs)
        f = rng.choice((3, 5, 7))
        c = rng.choice([3, *chans])
        k = rng.choice(chans)
        size = out * stride
        shape = {"N": 1, "C": c, "H": size, "W": size, "K": k, "R": f, "S": f,
                 "stride": stride, "pad": f // 2}
        task = Task.create("conv2d", shape, name=f"rand_{len(tasks)}")
        if task.operator.output_shape(task.params)[2] >= 3:
            tasks.append(task)
    return tasks


def describe_model(model: TrainedModel) -> str:
    return json.dumps({"kind": model.kind, "gpu": model.gpu, **model.info}, sort_keys=True)
