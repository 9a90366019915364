"""The ``cnnopt-capacity`` pruner: the paper's capacity constraints, enumerated exactly.

A config survives when, on the target GPU (orchestrator.gpus.GpuSpec):

* its warp is ``T_x T_y T_k = 32`` threads and its block at most
  ``max_threads_per_block`` threads (every tile is an exact factor by construction);
* its registers per thread, equation (2) for RS and (3) for S plus ``REG_OVERHEAD``,
  stay within ``regs_per_thread``, and times the block's threads within
  ``regs_per_block`` (registers are allocated per warp in units of 256);
* one shared-memory stage fits ``smem_per_block``, and at most 48 KiB, the static
  ``__shared__`` limit of CUDA (TVM allocates shared memory statically);
* C is split across blocks (``B_c > 1``) only when the grid without the split has fewer
  blocks than the GPU has SMs: the tail-effect case of section 3.2.

The survivors are enumerated structurally (warp shapes first), not by filtering the
whole cross product, and returned with ``Space.with_candidates`` ranked by the
analytical model's estimated time, fastest first.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from orchestrator.gpus import GpuSpec, gpu_spec
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from plugins.cnnopt.errors import CnnoptError
from plugins.cnnopt.plan import FLOAT_BYTES, REG_OVERHEAD, registers_rs, registers_s
from plugins.cnnopt.schema import KERNELS, ConvDims, dims_of, warp_shapes
from plugins.cuda.common import STATIC_SMEM_BYTES  # TVM's static limit, as for `cuda`


def smem_limit(gpu: GpuSpec) -> int:
    """Shared memory one block of a TVM kernel may use on ``gpu`` (bytes)."""
    return min(gpu.smem_per_block, STATIC_SMEM_BYTES)


def block_registers(regs_per_thread: int, threads: int, warp_size: int = 32) -> int:
    """Registers a block allocates: per warp, rounded up to 256."""
    warps = math.ceil(threads / warp_size)
    return math.ceil(regs_per_thread * warp_size / 256) * 256 * warps


def fits_registers(kernel: str, dims: ConvDims, rx: int, ry: int, rk: int, threads: int,
                   gpu: GpuSpec) -> bool:
    """The register constraints (equations 2 and 3) for one thread and one block."""
    if kernel == "rs":
        regs = registers_rs(rx, ry, rk, dims.in_rows(ry), dims.in_cols(rx))
    else:
        regs = registers_s(rx, ry, rk, dims.in_cols(rx))
    regs += REG_OVERHEAD
    return (regs <= gpu.regs_per_thread
            and block_registers(regs, threads, gpu.warp_size) <= min(gpu.regs_per_block,
                                                                     gpu.regs_per_sm))


@dataclass(frozen=True)
class Rules:
    """Pruning rules beyond the capacity constraints (ours, not the paper's; set every
    field to 1 or 0 for the capacity constraints alone)."""

    min_outputs: int = 4           # R^x R^y R^k: outputs a thread keeps in registers
    min_threads: int = 64          # threads per block (two warps)
    min_stage_channels: int = 4    # W_c, channels per shared stage (capped at C / B_c)
    min_blocks_share: float = 0.5  # grid blocks >= this share of the SMs (capped by the
    #                                largest grid the shape allows)

    @classmethod
    def capacity_only(cls) -> Rules:
        return cls(1, 1, 1, 0.0)


def capacity_configs(space: Space, gpu: GpuSpec, rules: Rules | None = None) -> Iterator[Config]:
    """Every config of a cnnopt ``space`` that meets the capacity constraints (and the
    extra ``rules``; default ``Rules()``)."""
    rules = rules or Rules()
    dims = dims_of(space.task)
    most_blocks = dims.n * dims.x * dims.y * dims.k // 32
    min_blocks = min(math.ceil(rules.min_blocks_share * gpu.sms), most_blocks)
    by_t: dict[str, dict[int, list[tuple[int, ...]]]] = {}
    for name in ("tile_x", "tile_y", "tile_k"):
        groups: dict[int, list[tuple[int, ...]]] = defaultdict(list)
        for choice in space.knob(name).choices:
            groups[choice[2]].append(choice)
        by_t[name] = groups
    c_choices = space.knob("tile_c").choices
    kernels = [k for k in KERNELS if k in space.knob("kernel").choices]
    limit = smem_limit(gpu)
    f_area = dims.fy * dims.fx
    for kernel in kernels:
        for tx, ty, tk in warp_shapes(dims):
            for xs in by_t["tile_x"].get(tx, ()):
                bx, wx, _, rx = xs
                for ys in by_t["tile_y"].get(ty, ()):
                    by, wy, _, ry = ys
                    if wx * wy * 32 > gpu.max_threads_per_block:
                        continue
                    if bx * by * dims.k * dims.n < min_blocks:
                        continue
                    if not fits_registers(kernel, dims, rx, ry, 1, wx * wy * 32, gpu):
                        continue
                    in_area = dims.in_rows(wy * ty * ry) * dims.in_cols(wx * tx * rx)
                    for ks in by_t["tile_k"].get(tk, ()):
                        bk, wk, _, rk = ks
                        threads = wx * wy * wk * 32
                        if threads > gpu.max_threads_per_block or threads < rules.min_threads:
                            continue
                        if rx * ry * rk < rules.min_outputs:
                            continue
                        if not fits_registers(kernel, dims, rx, ry, rk, threads, gpu):
                            continue
                        per_channel = FLOAT_BYTES * (in_area + wk * tk * rk * f_area)
                        base_grid = dims.n * bx * by * bk
                        for cs in c_choices:
                            bc, _, wc = cs
                            if wc * per_channel > limit:
                                continue
                            if bc > 1 and base_grid >= gpu.sms:
                                continue
                            if wc < min(rules.min_stage_channels, dims.c // bc):
                                continue
                            if base_grid * bc < min_blocks:
                                continue
                            yield Config.of({"kernel": kernel, "tile_x": xs, "tile_y": ys,
                                             "tile_k": ks, "tile_c": cs})


class CapacityPruner:
    """Keeps the configs that meet CNNOpt's capacity constraints on the target GPU,
    ranked by the analytical model (fastest estimate first).

    Options: ``rank`` (default True; False keeps the enumeration order), ``rules``
    (a Rules; default ``Rules()``, ``Rules.capacity_only()`` for the paper's
    constraints alone; the pruner ``cnnopt-capacity-only`` uses that).
    """

    def __init__(self, *, rank: bool = True, rules: Rules | None = None) -> None:
        self.rank = bool(rank)
        self.rules = rules or Rules()

    def prune(self, space: Space, target: TargetInfo) -> Space:
        if space.generator != "cnnopt":
            raise CnnoptError(f"pruner cnnopt-capacity works on cnnopt spaces, not on "
                              f"{space.generator!r} (use --space cnnopt)")
        gpu = gpu_spec(target)
        configs = list(capacity_configs(space, gpu, self.rules))
        if space.candidates is not None:
            keep = set(space.candidates)
            configs = [c for c in configs if c in keep]
        if not configs:
            raise CnnoptError(f"no config of {space.task.label()} meets the capacity "
                              f"constraints of {gpu.name}")
        if self.rank:
            from plugins.cnnopt.analytical import AnalyticalModel

            model = AnalyticalModel(gpu)
            est = model.estimate_configs(space, configs)
            order = sorted(range(len(configs)), key=lambda i: est[i])
            configs = [configs[i] for i in order]
        note = f"cnnopt-capacity on {gpu.name}: {len(configs)} configs"
        return space.with_candidates(configs, note)
