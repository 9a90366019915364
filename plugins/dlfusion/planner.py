"""DLFusion's planner: equation 5 for a layer's MP and Algorithm 1 for the fusion partition."""

from __future__ import annotations

import math
from dataclasses import dataclass

from plugins.dlfusion.layers import Layer, Network
from plugins.dlfusion.plan import Block, Plan

ALPHA = 0.316  # Section IV.A: weight of log2(channels), from the PCA weights
BETA = 0.659   # Section IV.A: weight of log2(operation count)
# Equation 5 only says "proportional to"; we read its value directly as a core count with
# the op count in mega-ops of the paper's binary unit (2^20), which puts ResNet-18's
# 3x3 layers at 4-8 cores and VGG-19's at 8 (Figure 5(a) found 4 and 16 best).
MP_OPS_UNIT = 2**20


def pow2_floor(value: float, cores: int) -> int:
    """``2^floor(log2(value))`` clipped to ``[1, cores]`` (Algorithm 1, line 14)."""
    if value < 1:
        return 1
    return min(2 ** int(math.floor(math.log2(value))), 1 << int(math.log2(cores)))


def eq5_score(channels: int, ops: float) -> float:
    """Equation 5: ``alpha*log2(C) + beta*log2(OpCount)`` (OpCount in MP_OPS_UNIT)."""
    return ALPHA * math.log2(max(channels, 1)) + BETA * math.log2(max(ops, 1.0) / MP_OPS_UNIT)


def layer_mp(layer: Layer, cores: int, scale: float = 1.0) -> int:
    """A layer's MP: equation 5 (times ``scale``, the proportionality factor the paper
    leaves to the hardware) rounded down to a power of two within the core count."""
    return pow2_floor(scale * eq5_score(layer.c_out, layer.ops), cores)


@dataclass(frozen=True)
class Alg1Result:
    """Algorithm 1's output: block end indices (inclusive) and each block's MP."""

    partition_index: tuple[int, ...]
    mp_of_block: tuple[int, ...]
    layer_mps: tuple[int, ...]

    def blocks(self) -> tuple[Block, ...]:
        out, start = [], 0
        for end, mp in zip(self.partition_index, self.mp_of_block):
            out.append(Block(start, end + 1, mp))
            start = end + 1
        return tuple(out)


def joint_opt_fusion_and_mp(net: Network, opcount_critical: float, cores: int,
                            layer_mps: tuple[int, ...] | None = None) -> Alg1Result:
    """Algorithm 1: fuse layers until the op count per core reaches ``opcount_critical``.

    Read as intended rather than literally: ``avg_mp`` is the running mean of the MPs of
    the block's conv/FC layers (the pseudo-code divides the running sum again on every
    iteration), the last block is closed at the end, and trailing layers without
    conv/FC join the previous block. Pooling and elementwise layers join the current
    block without changing its op count or MP.
    """
    mps = layer_mps if layer_mps is not None else tuple(
        layer_mp(layer, cores) if layer.is_compute else 0 for layer in net.layers)
    ends: list[int] = []
    block_mps: list[int] = []
    sum_op = 0.0
    mp_sum = 0
    size = 0
    for i, layer in enumerate(net.layers):
        if layer.is_compute:
            sum_op += layer.ops
            mp_sum += mps[i]
            size += 1
        if size and sum_op / (mp_sum / size) >= opcount_critical:
            ends.append(i)
            block_mps.append(pow2_floor(mp_sum / size, cores))
            sum_op, mp_sum, size = 0.0, 0, 0
    last = len(net.layers) - 1
    if not ends or ends[-1] != last:
        if size:
            ends.append(last)
            block_mps.append(pow2_floor(mp_sum / size, cores))
        elif ends:
            ends[-1] = last
        else:  # no conv/FC layer at all
            ends.append(last)
            block_mps.append(1)
    return Alg1Result(tuple(ends), tuple(block_mps), tuple(mps))


def dlfusion_plan(net: Network, opcount_critical: float, cores: int) -> Plan:
    """Strategy 6: Algorithm 1's blocks, each with its own MP."""
    res = joint_opt_fusion_and_mp(net, opcount_critical, cores)
    return Plan("dlfusion", net.name, res.blocks())
