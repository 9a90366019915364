"""MetaSchedule's local builder for the baselines, without its per-worker start-up cost.

MetaSchedule's default build function re-imports every tensor intrinsic in each fresh
builder worker: 20+ s per batch on our 2-core CPU machine, and on an H100 host all 32
candidates of a batch hit the builder's 30 s limit that way (2026-11-22, "Build errors:
32 sample(s)"). ``fast_build`` runs the same lowering pipeline without those imports.
"""

from __future__ import annotations

import sys
from typing import Any


def fast_build(mod: Any, target: Any, _params: Any) -> Any:
    """MetaSchedule's default build (same compile pipeline) without its imports."""
    import tvm
    from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm.compile(mod, target=target).mod


def local_builder(workers: int, timeout_sec: float = 30.0) -> Any:
    """A ``LocalBuilder`` of ``workers`` processes building with :func:`fast_build`."""
    import cloudpickle
    from tvm.s_tir import meta_schedule as ms

    # The workers cannot import scripts/: ship this module's functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    return ms.builder.LocalBuilder(max_workers=workers, timeout_sec=timeout_sec,
                                   f_build=fast_build)
