"""A SIMULATED multi-core DNN accelerator (default: the MLU-100's published figures).

Nothing here runs on hardware. The cost of a block of fused layers on ``m`` cores is
predicted from the paper's observations:

* per-core efficiency rises with the op count a core is given and saturates at
  ``OpCount_critical`` (Section II.B, Figures 3(b), 4(a)): ``eff = min(1, (x/x_c)^gamma)``;
* an unfused layer is split across cores on the channel dimension with a minimal
  partition size (Section IV.A, Figure 6(a)), so a layer with few channels leaves cores idle;
* each block pays a launch and synchronisation cost that grows with its core count: the
  "net performance degradation" when MP is too large (Section III.A, Figure 5(a));
* a fused block keeps intermediate tensors on chip, saving their off-chip round trip
  (Section III.B), and is split spatially: each core computes a tile of every layer,
  with the halo of Figure 7(a) recomputed, growing with the block depth and core count;
  layers without a feature map (dense, global pooling) stay channel-split;
* off-chip tensors (block inputs, weights, block outputs) are read or written once and
  broadcast to the cores; latency = busiest core's compute + dispatch + bytes / bandwidth.

gamma and the dispatch cost are not published: they are the values that reproduce
Figure 5(a) and Figure 7(b) (see docs/results/dlfusion.md).
The block cost depends only on the block, so a plan's cost is the sum over its blocks.
A real backend replaces :class:`SimulatedAccelerator` by offering ``measure_plan``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Protocol

import numpy as np

from orchestrator.errors import OrchestratorError
from plugins.dlfusion.layers import NETWORK_INPUT, Layer, Network
from plugins.dlfusion.plan import Block, BlockResult, Plan, PlanError, PlanResult

DTYPE_BYTES = {"fp32": 4, "fp16": 2, "int8": 1}


class AcceleratorError(OrchestratorError):
    """An accelerator description that cannot be found or read."""


class PlanMeasurer(Protocol):
    """What a planner needs from a backend, simulated or real."""

    name: str
    cores: int

    def measure_plan(self, layers: Network, plan: Plan) -> PlanResult: ...


@dataclass(frozen=True)
class AcceleratorParams:
    """Parameters of the simulated accelerator (see the JSON file's ``sources``)."""

    name: str
    cores: int
    peak_ops_per_core: float
    dtype: str
    memory_bytes: float
    bandwidth_bytes_s: float
    opcount_critical: float
    efficiency_exponent: float
    channel_granularity: int
    dispatch_s_per_core: float
    frequency_ghz: float = 1.0
    description: str = ""
    sources: tuple[tuple[str, str], ...] = ()
    # Algorithm 1's tuned parameters (plugins/dlfusion/calibrate.py); None: the paper's
    alg1_opcount_critical: float | None = None
    alg1_mp_scale: float = 1.0
    alg1_source: str = ""

    @property
    def dtype_bytes(self) -> int:
        return DTYPE_BYTES[self.dtype]

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "cores": self.cores,
                "peak_ops_per_core": self.peak_ops_per_core, "dtype": self.dtype,
                "memory_bytes": self.memory_bytes, "bandwidth_bytes_s": self.bandwidth_bytes_s,
                "opcount_critical": self.opcount_critical,
                "efficiency_exponent": self.efficiency_exponent,
                "channel_granularity": self.channel_granularity,
                "dispatch_s_per_core": self.dispatch_s_per_core,
                "frequency_ghz": self.frequency_ghz, "simulated": True,
                "algorithm1": {"opcount_critical": self.alg1_opcount_critical,
                               "mp_scale": self.alg1_mp_scale, "source": self.alg1_source}}


def _accelerator_dir() -> Path:
    return Path(str(resources.files("plugins.dlfusion") / "accelerators"))


def available_accelerators() -> list[str]:
    return sorted(p.stem for p in _accelerator_dir().glob("*.json"))


def _resolve(spec: str) -> Path:
    path = Path(spec)
    if path.suffix == ".json" or path.exists():
        if not path.is_file():
            raise AcceleratorError(f"accelerator file {spec} does not exist")
        return path
    for stem in (spec, f"{spec}-simulated"):
        cand = _accelerator_dir() / f"{stem}.json"
        if cand.is_file():
            return cand
    raise AcceleratorError(f"unknown accelerator {spec!r}; built-in: "
                           f"{', '.join(available_accelerators())} (or give a JSON file)")


def load_params(spec: str | Path = "mlu100") -> AcceleratorParams:
    """Read accelerator parameters from a built-in name (``mlu100``) or a JSON path."""
    path = _resolve(str(spec))
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise AcceleratorError(f"cannot read accelerator file {path}: {exc}") from None
    try:
        dtype = str(raw.get("dtype", "fp16"))
        peaks = raw["peak_tops_per_core"]
        if dtype not in DTYPE_BYTES or dtype not in peaks:
            raise AcceleratorError(f"{path}: dtype {dtype!r} needs a peak_tops_per_core entry "
                                   f"and one of {', '.join(DTYPE_BYTES)}")
        unit = float(raw.get("gops_unit", 1e9))
        alg1 = raw.get("algorithm1") or {}
        if not isinstance(alg1, dict):
            raise AcceleratorError(f"{path}: 'algorithm1' must be an object with "
                                   "opcount_critical_gops and mp_scale")
        params = AcceleratorParams(
            name=str(raw.get("name", path.stem)),
            cores=int(raw["cores"]),
            peak_ops_per_core=float(peaks[dtype]) * 1e12,
            dtype=dtype,
            memory_bytes=float(raw["memory_gb"]) * 2**30,
            bandwidth_bytes_s=float(raw["bandwidth_gbs"]) * 1e9,
            opcount_critical=float(raw["opcount_critical_gops"]) * unit,
            efficiency_exponent=float(raw["efficiency_exponent"]),
            channel_granularity=int(raw["channel_granularity"]),
            dispatch_s_per_core=float(raw["dispatch_us_per_core"]) * 1e-6,
            frequency_ghz=float(raw.get("frequency_ghz", 1.0)),
            description=str(raw.get("description", "")),
            sources=tuple(sorted((str(k), str(v)) for k, v in raw.get("sources", {}).items())),
            alg1_opcount_critical=(float(alg1["opcount_critical_gops"]) * unit
                                   if "opcount_critical_gops" in alg1 else None),
            alg1_mp_scale=float(alg1.get("mp_scale", 1.0)),
            alg1_source=str(alg1.get("source", "")),
        )
    except AcceleratorError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise AcceleratorError(f"{path}: missing or invalid field {exc}") from None
    if params.cores < 1 or params.channel_granularity < 1 or params.bandwidth_bytes_s <= 0 \
            or params.peak_ops_per_core <= 0 or params.opcount_critical <= 0 \
            or params.dispatch_s_per_core < 0 \
            or not 0 <= params.efficiency_exponent < 1 or params.alg1_mp_scale <= 0 \
            or (params.alg1_opcount_critical is not None and params.alg1_opcount_critical <= 0):
        raise AcceleratorError(f"{path}: cores, granularity, bandwidth, peak and critical op "
                               "count must be positive (algorithm1 too) and efficiency_exponent in [0, 1)")
    return params


def grid_for(m: int, h: int, w: int) -> tuple[int, int]:
    """Split ``m`` cores into a gh x gw tile grid that minimises the largest tile."""
    best: tuple[int, int, int] | None = None
    for gh in range(1, m + 1):
        if m % gh:
            continue
        gw = m // gh
        key = (math.ceil(h / gh) * math.ceil(w / gw), abs(gh - gw), gh)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[2], m // best[2]


@dataclass(frozen=True)
class _NetInfo:
    """Per-layer numbers the cost model reads, precomputed once per network."""

    ops: tuple[float, ...]
    spatial: tuple[bool, ...]
    c_out: tuple[int, ...]
    out_hw: tuple[tuple[int, int], ...]
    in_hw: tuple[tuple[int, int], ...]
    kernel: tuple[tuple[int, int], ...]
    stride: tuple[tuple[int, int], ...]
    out_bytes: tuple[float, ...]
    weight_bytes: tuple[float, ...]
    inputs: tuple[tuple[tuple[int, float], ...], ...]  # (producer, bytes read from it)
    consumers: tuple[tuple[int, ...], ...]
    last_use: tuple[int, ...]  # the last consumer's index, or len(layers) for outputs


def _net_info(net: Network, dtype_bytes: int) -> _NetInfo:
    layers = net.layers
    n = len(layers)

    def producer_bytes(layer: Layer, p: int) -> float:
        return float((layer.in_elems if p == NETWORK_INPUT else layers[p].out_elems)
                     * dtype_bytes)

    return _NetInfo(
        ops=tuple(float(layer.ops) for layer in layers),
        spatial=tuple(layer.is_spatial for layer in layers),
        c_out=tuple(layer.c_out for layer in layers),
        out_hw=tuple(layer.out_hw for layer in layers),
        in_hw=tuple(layer.in_hw for layer in layers),
        kernel=tuple(layer.kernel for layer in layers),
        stride=tuple(layer.stride for layer in layers),
        out_bytes=tuple(float(layer.out_elems * dtype_bytes) for layer in layers),
        weight_bytes=tuple(float(layer.weight_elems * dtype_bytes) for layer in layers),
        inputs=tuple(tuple((p, producer_bytes(layer, p)) for p in dict.fromkeys(layer.inputs))
                     for layer in layers),
        consumers=net.consumers,
        last_use=tuple(max(c) if c else n for c in net.consumers),
    )


@dataclass(frozen=True)
class SimulatedAccelerator:
    """SIMULATED accelerator: predicts plan latency from :class:`AcceleratorParams`."""

    params: AcceleratorParams
    _cache: dict[int, tuple[Network, _NetInfo]] = field(default_factory=dict, repr=False,
                                                       compare=False)
    _share_cache: dict[tuple[int, bytes], np.ndarray] = field(default_factory=dict, repr=False,
                                                              compare=False)

    @classmethod
    def load(cls, spec: str | Path = "mlu100") -> SimulatedAccelerator:
        return cls(load_params(spec))

    @property
    def name(self) -> str:
        return self.params.name

    @property
    def cores(self) -> int:
        return self.params.cores

    def _info(self, net: Network) -> _NetInfo:
        hit = self._cache.get(id(net))
        if hit is None or hit[0] is not net:
            hit = (net, _net_info(net, self.params.dtype_bytes))
            self._cache[id(net)] = hit
        return hit[1]

    # ---- per-core compute -------------------------------------------------------------

    def efficiency(self, ops_per_core: float | np.ndarray) -> float | np.ndarray:
        """Fraction of a core's peak reached with this much work (Figure 4(a))."""
        x = np.maximum(np.asarray(ops_per_core, dtype=float), 1.0)
        eff = np.minimum(1.0, (x / self.params.opcount_critical) ** self.params.efficiency_exponent)
        return float(eff) if np.ndim(eff) == 0 else eff

    def compute_time(self, ops_per_core: float | np.ndarray) -> float | np.ndarray:
        x = np.asarray(ops_per_core, dtype=float)
        t = x / (self.params.peak_ops_per_core * np.asarray(self.efficiency(x)))
        return float(t) if np.ndim(t) == 0 else t

    def dispatch_time(self, mp: int | np.ndarray) -> float | np.ndarray:
        """Launch and synchronisation of one block on ``mp`` cores (grows with ``mp``)."""
        t = np.asarray(mp, dtype=float) * self.params.dispatch_s_per_core
        return float(t) if np.ndim(t) == 0 else t

    def channel_split(self, c_out: int, m: int) -> tuple[float, int]:
        """(share of the layer's work on the busiest core, busy cores) for a channel split."""
        g = self.params.channel_granularity
        per_core = g * math.ceil(math.ceil(c_out / m) / g)
        per_core = min(per_core, c_out)
        return per_core / c_out, math.ceil(c_out / per_core)

    # ---- one block, written plainly (used by measure_plan and as the DP's reference) --

    def block_cost(self, net: Network, block: Block) -> BlockResult:
        """Predicted latency and its parts for layers ``[start, stop)`` on ``mp`` cores."""
        info = self._info(net)
        i, j, m = block.start, block.stop - 1, block.mp
        if j >= len(net.layers):
            raise PlanError(f"block [{block.start}, {block.stop}) beyond {len(net)} layers")
        useful = sum(info.ops[i:j + 1])
        if i == j:
            share, busy = self.channel_split(info.c_out[i], m)
            x = info.ops[i] * share
            executed = x * busy
            nbytes = info.out_bytes[i] + info.weight_bytes[i] + sum(b for _, b in info.inputs[i])
            mode = "channel"
        else:
            x, executed, nbytes = self._fused_scalar(info, i, j, m)
            mode = "spatial"
        compute = self.compute_time(x)
        dispatch = self.dispatch_time(m)
        memory = nbytes / self.params.bandwidth_bytes_s
        return BlockResult(
            block=block, latency_s=compute + dispatch + memory, compute_s=compute,
            dispatch_s=dispatch, memory_s=memory,
            ops=int(useful), ops_per_core=x, efficiency=self.efficiency(x),
            redundancy=executed / useful - 1.0 if useful else 0.0, offchip_bytes=nbytes,
            mode=mode)

    def _fused_scalar(self, info: _NetInfo, i: int, j: int, m: int) -> tuple[float, float, float]:
        ref = max((l for l in range(i, j + 1) if info.spatial[l]), default=None)
        gh, gw = grid_for(m, *info.out_hw[ref]) if ref is not None else (1, 1)
        rt: dict[int, tuple[int, int]] = {}
        x = executed = nbytes = 0.0
        read: set[int] = set()
        for l in range(j, i - 1, -1):
            h, w = info.out_hw[l]
            base = (math.ceil(h / gh), math.ceil(w / gw))
            leaves = l == j or info.last_use[l] > j
            if leaves:
                nbytes += info.out_bytes[l]
            if info.spatial[l]:
                needs = [base] if leaves else []
                for c in info.consumers[l]:
                    if c <= j:
                        needs.append(self._in_req(info, c, rt[c]) if info.spatial[c] else base)
                th = min(h, max(n[0] for n in needs)) if needs else base[0]
                tw = min(w, max(n[1] for n in needs)) if needs else base[1]
                rt[l] = (th, tw)
                busy = math.ceil(h / base[0]) * math.ceil(w / base[1])
                x += info.ops[l] * th * tw / (h * w)
                executed += info.ops[l] * th * tw / (h * w) * busy
            else:
                share, busy = self.channel_split(info.c_out[l], m)
                x += info.ops[l] * share
                executed += info.ops[l] * share * busy
            nbytes += info.weight_bytes[l]
            nbytes += sum(b for p, b in info.inputs[l] if p < i and p not in read)
            read.update(p for p, _ in info.inputs[l] if p < i)
        return x, executed, nbytes

    @staticmethod
    def _in_req(info: _NetInfo, c: int, tile: tuple[int, int]) -> tuple[int, int]:
        (kh, kw), (sh, sw), (ih, iw) = info.kernel[c], info.stride[c], info.in_hw[c]
        return min(ih, (tile[0] - 1) * sh + kh), min(iw, (tile[1] - 1) * sw + kw)

    # ---- all blocks ending at one layer, for every core count (the DP's inner loop) ---

    def latencies_ending_at(self, net: Network, j: int, mps: np.ndarray) -> np.ndarray:
        """``out[i, k]``: latency of block ``[i, j]`` on ``mps[k]`` cores, for i in 0..j.

        Same model as :meth:`block_cost`, evaluated incrementally while the block grows
        towards the front, with every core count at once.
        """
        info = self._info(net)
        mps = np.asarray(mps, dtype=np.int64)
        k = len(mps)
        out = np.empty((j + 1, k))
        ref = max((l for l in range(0, j + 1) if info.spatial[l]), default=None)
        if ref is not None:
            grids = np.array([grid_for(int(m), *info.out_hw[ref]) for m in mps])
            gh, gw = grids[:, 0], grids[:, 1]
        else:
            gh = gw = np.ones(k, dtype=np.int64)
        dispatch = np.asarray(self.dispatch_time(mps))
        bw = self.params.bandwidth_bytes_s
        rth: dict[int, np.ndarray] = {}
        rtw: dict[int, np.ndarray] = {}
        x = np.zeros(k)
        nbytes = 0.0
        ext_bytes: dict[int, float] = {}

        def in_req(c: int) -> tuple[np.ndarray, np.ndarray]:
            (kh, kw), (sh, sw), (ih, iw) = info.kernel[c], info.stride[c], info.in_hw[c]
            return np.minimum(ih, (rth[c] - 1) * sh + kh), np.minimum(iw, (rtw[c] - 1) * sw + kw)

        for i in range(j, -1, -1):
            h, w = info.out_hw[i]
            leaves = i == j or info.last_use[i] > j
            if leaves:
                nbytes += info.out_bytes[i]
            nbytes += info.weight_bytes[i]
            share = self._channel_shares(info.c_out[i], mps)
            if i == j:
                single = info.out_bytes[i] + info.weight_bytes[i] \
                    + sum(b for _, b in info.inputs[i])
                out[i] = self.compute_time(info.ops[i] * share) + dispatch + single / bw
            if info.spatial[i]:
                bh, bwid = -(-h // gh), -(-w // gw)
                th = bh if leaves else None
                tw = bwid if leaves else None
                for c in info.consumers[i]:
                    if c <= j:
                        nh, nw = in_req(c) if info.spatial[c] else (bh, bwid)
                        th = nh if th is None else np.maximum(th, nh)
                        tw = nw if tw is None else np.maximum(tw, nw)
                if th is None:
                    th, tw = bh, bwid
                rth[i], rtw[i] = np.minimum(h, th), np.minimum(w, tw)
                x = x + info.ops[i] * rth[i] * rtw[i] / (h * w)
            else:
                x = x + info.ops[i] * share
            ext_bytes.pop(i, None)
            for pr, b in info.inputs[i]:
                ext_bytes[pr] = b
            if i < j:
                total = nbytes + sum(ext_bytes.values())
                out[i] = self.compute_time(x) + dispatch + total / bw
        return out

    def _channel_shares(self, c_out: int, mps: np.ndarray) -> np.ndarray:
        key = (c_out, mps.tobytes())
        hit = self._share_cache.get(key)
        if hit is None:
            hit = np.array([self.channel_split(c_out, int(m))[0] for m in mps])
            self._share_cache[key] = hit
        return hit

    # ---- whole plans -------------------------------------------------------------------

    def measure_plan(self, layers: Network, plan: Plan) -> PlanResult:
        """Predict a plan's latency (SIMULATED): the sum of its blocks' latencies."""
        plan.validate(len(layers), self.cores)
        self._check_memory(layers)
        results = tuple(self.block_cost(layers, b) for b in plan.blocks)
        return PlanResult(plan=plan, accelerator=self.name, simulated=True, blocks=results,
                          latency_s=sum(r.latency_s for r in results))

    def _check_memory(self, net: Network) -> None:
        info = self._info(net)
        need = sum(info.weight_bytes) + sum(info.out_bytes)
        if need > self.params.memory_bytes:
            raise AcceleratorError(f"{net.name} needs {need / 2**30:.1f} GiB, more than the "
                                   f"{self.params.memory_bytes / 2**30:.0f} GiB of {self.name}")
