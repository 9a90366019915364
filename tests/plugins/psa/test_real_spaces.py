"""The psa pruner on the real CUDA spaces (plugins/cuda, plugins/cnnopt) of a ResNet-18
convolution for an H100; skipped when a plugin is not importable."""

from __future__ import annotations

import importlib
import math

import pytest

import plugins.psa
from orchestrator.gpus import resolve_gpu_target
from orchestrator.manager import Plugins, load_plugins
from orchestrator.suite import read_suite
from plugins.psa.cost_model import PsaCostModel
from plugins.psa.pruner import PsaPruner

H100 = resolve_gpu_target("cuda:h100")
LAYER = "r18_l2"      # conv2d 1x128x28x28, 128 filters 3x3, pad 1
# Keeps the test fast whatever the space size: more configs than this are sampled.
MAX_ENUMERATE = 60_000
SAMPLE_SIZE = 4_000


def _plugins(name: str) -> Plugins:
    try:
        module = importlib.import_module(f"plugins.{name}")
    except ImportError as exc:
        pytest.skip(f"plugins.{name} is not importable here: {exc}")
    found = load_plugins()
    extra: list[tuple[str, object]] = []
    if "psa" not in found.registry("pruner"):
        extra.append(("psa", plugins.psa))
    if name not in found.registry("space_generator"):
        extra.append((name, module))
    found = load_plugins(extra=extra) if extra else found
    if name not in found.registry("space_generator"):
        pytest.skip(f"plugins.{name} registers no space generator {name!r}")
    return found


@pytest.mark.parametrize("generator", ["cuda", "cnnopt"])
def test_prunes_a_resnet18_layer_to_256(generator: str) -> None:
    found = _plugins(generator)
    task = next(t for t in read_suite() if t.name == LAYER)
    gen = found.registry("space_generator").create(generator)
    assert gen.supports(task, H100)
    space = gen.generate(task, H100)
    assert space.plan_fn, f"the {generator} space names no plan_fn"
    pruner = PsaPruner(size=256, explore=0.0, max_enumerate=MAX_ENUMERATE,
                       sample_size=SAMPLE_SIZE)
    pruned = pruner.prune(space, H100)
    cands = pruned.candidates
    assert cands is not None and len(cands) == 256 == len(set(cands))
    assert all(space.validate(c) is None for c in cands)
    lat = PsaCostModel(target=H100).latencies(space, list(cands))
    assert all(math.isfinite(v) for v in lat) and lat == sorted(lat)
    assert pruned.notes[-1].startswith("psa: kept the 256 configs")
