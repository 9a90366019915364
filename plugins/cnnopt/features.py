"""Model inputs of section 4.1: {Problem Size}, {Tile Sizes} and {Analytical Features}."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from orchestrator.errors import InvalidConfigError
from orchestrator.gpus import GpuSpec
from orchestrator.space import Config, Space
from plugins.cnnopt.analytical import FEATURES as ANALYTIC, analyze
from plugins.cnnopt.schema import ConvDims, Tiles, dims_of, tiles_of

PROBLEM = ("N", "K", "C", "Y", "X", "F", "stride")
TILES = ("bx", "wx", "tx", "rx", "by", "wy", "ty", "ry", "bk", "wk", "tk", "rk",
         "bc", "sc", "wc", "rs")
KINDS = ("ml", "hybrid")
# Stands in for an infinite analytical value (a config that cannot launch).
BIG = 1e30


def feature_names(kind: str) -> tuple[str, ...]:
    """The input columns of the ``ml`` (problem, tiles) or ``hybrid`` (+ analytical) model."""
    if kind == "ml":
        return PROBLEM + TILES
    if kind == "hybrid":
        return PROBLEM + TILES + ANALYTIC
    raise ValueError(kind)


def row(dims: ConvDims, t: Tiles, kind: str, gpu: GpuSpec | None) -> list[float]:
    """One model input row of tiles ``t`` (``gpu`` is needed for ``hybrid``)."""
    out = [float(v) for v in (dims.n, dims.k, dims.c, dims.y, dims.x, dims.fy, dims.stride)]
    out += [float(v) for _, v in t.named()]
    if kind == "hybrid":
        if gpu is None:
            raise ValueError("hybrid features need a GPU")
        out += [v if math.isfinite(v) else BIG for v in analyze(dims, t, gpu).values()]
    return out


def matrix(space: Space, configs: Sequence[Config], kind: str,
           gpu: GpuSpec | None) -> tuple[np.ndarray, list[bool]]:
    """Rows of ``configs`` and which of them the schema accepts (rejected rows are NaN)."""
    dims = dims_of(space.task)
    width = len(feature_names(kind))
    rows, ok = [], []
    for cfg in configs:
        try:
            rows.append(row(dims, tiles_of(dims, cfg), kind, gpu))
            ok.append(True)
        except InvalidConfigError:
            rows.append([math.nan] * width)
            ok.append(False)
    return np.asarray(rows, dtype=np.float64).reshape(len(rows), width), ok
