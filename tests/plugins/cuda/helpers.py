"""Shared helpers for the CUDA plugin tests: plugin loading, GPU detection, small tasks."""

from __future__ import annotations

from functools import cache

import plugins.cuda
from orchestrator.gpus import GPUS, local_gpu_names
from orchestrator.manager import Plugins, load_plugins
from orchestrator.space import Config
from orchestrator.target import TargetInfo
from orchestrator.task import Task


def cuda_plugins() -> Plugins:
    """The plugin set with the cuda plugin (registered in code unless installed)."""
    found = load_plugins(autoload=False)
    if "cuda" in found.registry("space_generator"):
        return found
    return load_plugins(extra=[("cuda", plugins.cuda)], autoload=False)


@cache
def has_gpu() -> bool:
    """True when this machine has an NVIDIA GPU that TVM can open."""
    if not local_gpu_names():
        return False
    import tvm

    return bool(tvm.cuda(0).exist)


def target(name: str = "h100") -> TargetInfo:
    return GPUS[name].target()


def small_dense() -> Task:
    return Task.create("dense", {"M": 64, "K": 64, "N": 64})


# 64 threads (8 x 8), each a 4 x 4 register tile; K in 8 stages of 8: hand-checkable.
SMALL_DENSE_CONFIG = Config.of({"tile_m": [2, 8, 4], "tile_n": [2, 8, 4], "tile_k": [8, 8],
                                "layout": "blocked", "unroll": 0})
