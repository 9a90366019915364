"""The contention guard: a fixed reference kernel timed beside every config, to tell
when the machine itself was slow, and to time such a config again once it is not.

On a shared virtual machine a neighbour can take part of a core for seconds at a time.
Every kernel timed meanwhile runs slower by about the same factor (about 0.6x on the
2-core EPYC VMs this project runs on), and the guest sees neither steal time nor lost
CPU time, so only a kernel that never changes can show it. The runner keeps the
sentinel's recent timings; its usual time is their lower quartile (the fast side, so
that a slow spell does not become the norm, but not the single luckiest timing). When
the sentinel timed right after a config is more than ``guard`` slower than usual, twice
in a row, the config was timed on a slowed machine: the runner waits (timing the
sentinel every ``POLL_SECONDS``) until the sentinel is back to usual and times the
config again, for at most ``wait`` seconds in all (the run worker stops waiting for a
while once a wait has run out: see ``worker.NO_WAIT_SECONDS``).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# A tiled float32 matmul of this size takes about 0.05 ms on 2 cores: small enough to time
# beside every config, large enough to keep every thread of the pool busy.
_M, _N, _K = 128, 128, 256
FLOPS = 2 * _M * _N * _K
POLL_SECONDS = 0.25
_KEPT = 400     # recent sentinel timings the usual time is taken from
_FIRST = 5      # timings taken when the sentinel is made, so that it has a usual time
_REPEAT_SECONDS = 0.004


def build(tvm: Any, target: Any) -> Any:
    """Compile the sentinel for ``target`` (a ``tvm.target.Target``); returns the runtime
    module."""
    from tvm import te
    from tvm.s_tir import Schedule

    a = te.placeholder((_M, _K), "float32", name="A")
    b = te.placeholder((_K, _N), "float32", name="B")
    k = te.reduce_axis((0, _K), name="k")
    c = te.compute((_M, _N), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = Schedule(te.create_prim_func([a, b, c]))
    blk = sch.get_sblock("C")
    i, j, kk = sch.get_loops(blk)
    i0, i1, i2 = sch.split(i, factors=[None, 4, 4])
    j0, j1, j2 = sch.split(j, factors=[None, 2, 16])
    k0, k1 = sch.split(kk, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1, k0, k1, i2, j2)
    cw = sch.cache_write(blk, 0, "global")
    sch.reverse_compute_at(cw, j1)
    sch.vectorize(j2)
    sch.unroll(i2)
    sch.parallel(sch.fuse(i0, j0))
    sch.decompose_reduction(blk, k0)
    sch.vectorize(sch.get_loops(cw)[-1])
    return tvm.compile(sch.mod, target=target).mod


class Sentinel:
    """The compiled sentinel, its buffers and its timer, in the runner process."""

    def __init__(self, tvm: Any, np: Any, dev: Any, target: Any) -> None:
        self.module = build(tvm, target)
        rng = np.random.default_rng(0)
        self.args = [tvm.runtime.tensor(rng.random((_M, _K), dtype="float32"), dev),
                     tvm.runtime.tensor(rng.random((_K, _N), dtype="float32"), dev),
                     tvm.runtime.tensor(np.zeros((_M, _N), "float32"), dev)]
        # Calls per repeat fixed once, so that no timing pays TVM's own calibration.
        once = self.module.time_evaluator("main", dev, number=1, repeat=3)
        call = max(min(once(*self.args).results), 1e-7)
        self.timer = self.module.time_evaluator(
            "main", dev, number=max(1, math.ceil(_REPEAT_SECONDS / call)), repeat=3)
        self.recent: deque[float] = deque(maxlen=_KEPT)
        for _ in range(_FIRST):
            self.time()

    def time(self) -> float:
        """Seconds per call now (the median of three 4 ms repeats), kept in ``recent``."""
        runs = sorted(float(s) for s in self.timer(*self.args).results)
        now = runs[len(runs) // 2]
        self.recent.append(now)
        return now

    def usual(self) -> float:
        """The lower quartile of the recent timings."""
        return sorted(self.recent)[len(self.recent) // 4]


@dataclass(frozen=True)
class Guarded:
    """A guarded timing: the config's latencies, how many earlier timings of it were
    thrown away as slowed, and whether the kept one is slowed too (the wait ran out)."""

    latencies: list[float]
    retimed: int
    slowed: bool


def guarded_timing(time_config: Callable[[], list[float]], sentinel_time: Callable[[], float],
                   usual: Callable[[], float], guard: float, wait: float,
                   clock: Callable[[], float] = time.monotonic,
                   sleep: Callable[[float], None] = time.sleep) -> Guarded:
    """Time a config by ``time_config``, then check the machine with the sentinel; while
    the sentinel is more than ``guard`` slower than ``usual()`` (twice in a row), wait for
    it to be back to usual and time the config again, for at most ``wait`` seconds."""

    def slowed() -> bool:  # the second look only when the first was slow
        return all(sentinel_time() > (1.0 + guard) * usual() for _ in range(2))

    deadline = clock() + wait
    retimed = 0
    while True:
        latencies = time_config()
        if not slowed():
            return Guarded(latencies, retimed, False)
        while clock() < deadline:
            sleep(POLL_SECONDS)
            if not slowed():
                break
        else:
            return Guarded(latencies, retimed, True)
        retimed += 1
