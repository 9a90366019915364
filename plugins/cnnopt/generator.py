"""The ``cnnopt`` space generator: the RS and S schemas for conv2d on CUDA targets."""

from __future__ import annotations

from orchestrator.errors import InvalidConfigError
from orchestrator.space import Config, Space
from orchestrator.target import TargetInfo
from orchestrator.task import Task
from plugins.cnnopt.plan import smem_bytes
from plugins.cnnopt.schema import ConvDims, dims_of, knobs, tiles_of, warp_shapes, warp_violation
from plugins.cuda.common import STATIC_SMEM_BYTES

GENERATOR = "cnnopt"
SCHEDULE_FN = "plugins.cnnopt.schedule:apply_config"
PLAN_FN = "plugins.cnnopt.plan:plan_config"


def target_note(target: TargetInfo) -> str:
    """The note naming the target a space was generated for (read by the cost models)."""
    return f"target cuda:{target.arch}"


def target_from_notes(space: Space) -> str | None:
    """``cuda:<gpu>`` from a space's notes, or None."""
    for note in space.notes:
        if note.startswith("target cuda:"):
            return note.split(" ", 1)[1]
    return None


class WarpCheck:
    """The space's check: T_x T_y T_k = 32 (the schema's warp shape), and a shared-memory
    stage that TVM can declare (at most 48 KiB of static shared memory on any GPU; ptxas
    rejects more, as 244 configs of a PSA target space showed on an H100)."""

    def __init__(self, dims: ConvDims) -> None:
        self.dims = dims

    def __call__(self, config: Config) -> str | None:
        try:
            tiles = tiles_of(self.dims, config)
        except InvalidConfigError as exc:
            return str(exc)
        why = warp_violation(tiles)
        if why is not None:
            return why
        stage = smem_bytes(self.dims, tiles)
        if stage > STATIC_SMEM_BYTES:
            return (f"a shared-memory stage of {stage:,} bytes; TVM declares shared memory "
                    f"statically, at most {STATIC_SMEM_BYTES:,} bytes")
        return None


class CnnoptSpaces:
    """CNNOpt's RS and S kernel schemas for NCHW conv2d on NVIDIA GPUs (section 3 of Xu
    et al., PACT'22): multi-level tiling of X, Y, K over grid, warps, lanes and
    registers, C staged through shared memory and optionally split across blocks."""

    def supports(self, task: Task, target: TargetInfo) -> bool:
        """True for float32 NCHW conv2d on a CUDA target where a 32-thread warp fits."""
        if target.kind != "cuda" or task.op != "conv2d" or task.dtype != "float32":
            return False
        if task.layout not in ("", "NCHW"):
            return False
        return bool(warp_shapes(dims_of(task)))

    def generate(self, task: Task, target: TargetInfo) -> Space:
        """Every exact-factor tiling of both schemas; prune with ``cnnopt-capacity``."""
        dims = dims_of(task)
        return Space(task=task, generator=GENERATOR, knobs=tuple(knobs(dims)),
                     schedule_fn=SCHEDULE_FN, check=WarpCheck(dims), plan_fn=PLAN_FN,
                     notes=("schemas rs, s", target_note(target)))
