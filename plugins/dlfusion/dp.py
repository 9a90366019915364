"""Exact optimal planning by dynamic programming (beyond the paper).

The model's plan cost is a sum over blocks and a block's cost depends only on its own
layers and MP, so ``best[j] = min_i best[i] + min_m cost([i, j), m)`` over contiguous
blocks is exact: no need to reduce the space as the paper's brute-force oracle does.
The same recurrence with block boundaries restricted to multiples of four and MP to
{1, 2, 4, 8, 12, 16, 24, 32} gives the paper's reduced oracle exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from plugins.dlfusion.layers import Network
from plugins.dlfusion.plan import Block, Plan

ORACLE_MPS: tuple[int, ...] = (1, 2, 4, 8, 12, 16, 24, 32)
ORACLE_BLOCK_MULTIPLE = 4


class BlockCostModel(Protocol):
    """Latency of every block ending at layer ``j``, for each candidate MP."""

    cores: int

    def latencies_ending_at(self, net: Network, j: int, mps: np.ndarray) -> np.ndarray: ...


def cost_table(model: BlockCostModel, net: Network, mps: Iterable[int]) -> np.ndarray:
    """``table[i, j, k]``: latency of block ``[i, j]`` (inclusive) on ``mps[k]`` cores."""
    mp_arr = np.asarray(list(mps), dtype=np.int64)
    n = len(net)
    table = np.full((n, n, len(mp_arr)), np.inf)
    for j in range(n):
        table[: j + 1, j, :] = model.latencies_ending_at(net, j, mp_arr)
    return table


def _solve(table: np.ndarray, mps: np.ndarray, starts_ok: np.ndarray,
           ends_ok: np.ndarray) -> tuple[float, list[Block]]:
    n = table.shape[0]
    best_m = table.argmin(axis=2)
    best_c = table.min(axis=2)
    best = np.full(n + 1, np.inf)
    back = np.zeros(n + 1, dtype=np.int64)
    best[0] = 0.0
    for stop in range(1, n + 1):
        if not ends_ok[stop]:
            continue
        cand = best[:stop] + np.where(starts_ok[:stop], best_c[:stop, stop - 1], np.inf)
        i = int(np.argmin(cand))
        best[stop], back[stop] = cand[i], i
    if not np.isfinite(best[n]):
        raise ValueError("no feasible plan")
    blocks: list[Block] = []
    stop = n
    while stop > 0:
        i = int(back[stop])
        blocks.append(Block(i, stop, int(mps[best_m[i, stop - 1]])))
        stop = i
    return float(best[n]), blocks[::-1]


def optimal_plan(model: BlockCostModel, net: Network, mps: Iterable[int] | None = None,
                 table: np.ndarray | None = None) -> tuple[Plan, float]:
    """The minimum-latency plan over all contiguous partitions and MPs (default 1..cores)."""
    mp_arr = np.asarray(list(mps) if mps is not None else range(1, model.cores + 1))
    if table is None:
        table = cost_table(model, net, mp_arr)
    n = len(net)
    ok = np.ones(n + 1, dtype=bool)
    latency, blocks = _solve(table, mp_arr, ok, ok)
    return Plan("optimal-dp", net.name, tuple(blocks)), latency


def reduced_oracle_plan(model: BlockCostModel, net: Network,
                        table_all_mps: np.ndarray | None = None) -> tuple[Plan, float]:
    """The paper's reduced brute force: MP in ORACLE_MPS, blocks of a multiple of 4 layers.

    When the layer count is not a multiple of 4, the last block holds the remainder.
    ``table_all_mps`` may be a cost table over MP 1..cores, to share work with the DP.
    """
    mp_arr = np.asarray([m for m in ORACLE_MPS if m <= model.cores])
    if table_all_mps is not None:
        table = table_all_mps[:, :, mp_arr - 1]
    else:
        table = cost_table(model, net, mp_arr)
    n = len(net)
    idx = np.arange(n + 1)
    starts_ok = idx % ORACLE_BLOCK_MULTIPLE == 0
    ends_ok = starts_ok | (idx == n)
    latency, blocks = _solve(table, mp_arr, starts_ok, ends_ok)
    return Plan("oracle", net.name, tuple(blocks)), latency
