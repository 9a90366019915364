"""The cpu space generator: spaces for awkward shapes, correct kernels, checks, errors."""

from __future__ import annotations

import dataclasses
import math
import random
import sys

import numpy as np
import pytest

from orchestrator.errors import InvalidConfigError
from orchestrator.space import Config, SplitKnob
from orchestrator.target import detect_host
from orchestrator.task import Task
from plugins.templates.common import schedule_errors
from plugins.templates.cpu import SCHEDULE_FN, CpuTemplates, apply_config

tvm = pytest.importorskip("tvm")

AWKWARD = [
    ("dense", dict(M=1, K=17, N=3)),
    ("dense", dict(M=127, K=61, N=97)),
    ("dense", dict(M=7, K=13, N=1009)),
    ("dense", dict(M=64, K=64, N=100)),
    ("batch_matmul", dict(B=3, M=17, K=5, N=33)),
    ("batch_matmul", dict(B=2, M=32, K=16, N=48)),
    ("conv2d", dict(N=1, C=3, H=17, W=17, K=17, R=3, S=3, stride=2, pad=1)),
    ("conv2d", dict(N=1, C=17, H=13, W=11, K=100, R=1, S=1, stride=1, pad=0)),
    ("conv2d", dict(N=2, C=8, H=12, W=12, K=16, R=3, S=3, stride=1, pad=2, dilation=2)),
    ("conv2d", dict(N=1, C=3, H=23, W=23, K=8, R=7, S=7, stride=2, pad=3)),
    ("conv2d", dict(N=1, C=5, H=7, W=7, K=3, R=3, S=3, stride=1, pad=0)),
    ("conv2d", dict(N=1, C=16, H=14, W=14, K=32, R=3, S=3, stride=1, pad=1)),
    ("depthwise_conv2d", dict(N=1, C=3, H=17, W=17, R=3, S=3, stride=2, pad=1)),
    ("depthwise_conv2d", dict(N=1, C=17, H=13, W=13, R=5, S=5, stride=1, pad=0)),
    ("depthwise_conv2d", dict(N=2, C=8, H=9, W=9, R=3, S=3, stride=1, pad=2, dilation=2)),
    ("depthwise_conv2d", dict(N=1, C=32, H=28, W=28, R=3, S=3, stride=1, pad=1)),
]
IDS = [f"{op}-{'-'.join(str(v) for v in shape.values())}" for op, shape in AWKWARD]


@pytest.fixture(scope="module")
def target():
    return detect_host()


@pytest.fixture(scope="module")
def gen():
    return CpuTemplates()


def _task(op: str, shape: dict) -> Task:
    return Task.create(op, shape)


def _run(task: Task, mod, target) -> tuple[np.ndarray, np.ndarray]:
    inputs = task.operator.random_inputs(task.params, seed=3)
    expected = task.operator.reference(inputs, task.params)
    ex = tvm.compile(mod, target=target.tvm_target())
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(x, dev) for x in inputs]
    out = tvm.runtime.empty(expected.shape, "float32", dev)
    ex(*args, out)
    return out.numpy(), expected


def test_supports_the_four_operators_on_llvm_only(gen, target):
    for op, shape in AWKWARD[::4]:
        assert gen.supports(_task(op, shape), target)
    gpu = dataclasses.replace(target, kind="cuda")
    assert not gen.supports(_task("dense", dict(M=8, K=8, N=8)), gpu)


def test_registered_as_cpu_space_generator():
    from orchestrator.manager import load_plugins

    plugins = load_plugins(autoload=False)
    assert "cpu" in plugins.registry("space_generator")
    assert isinstance(plugins.create("space_generator", "cpu"), CpuTemplates)


@pytest.mark.parametrize(("op", "shape"), AWKWARD, ids=IDS)
def test_space_is_non_empty_and_typed(gen, target, op, shape):
    task = _task(op, shape)
    space = gen.generate(task, target)
    assert space.schedule_fn == SCHEDULE_FN
    assert space.size > 0
    for knob in space.knobs:
        assert knob.choices, knob.name
        if isinstance(knob, SplitKnob):
            assert all(math.prod(c) == knob.extent and len(c) == knob.parts
                       for c in knob.choices), knob.name
    cfg = space.sample(random.Random(0))
    assert cfg is not None, "every draw was rejected by the check"
    assert space.validate(cfg) is None


# Configs per operator that are compiled and compared with NumPy (kept small for CI).
COMPILED = [AWKWARD[i] for i in (1, 2, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14)]


@pytest.mark.parametrize(("op", "shape"), COMPILED,
                         ids=[IDS[AWKWARD.index(c)] for c in COMPILED])
def test_random_configs_compile_and_match_numpy(gen, target, op, shape):
    task = _task(op, shape)
    space = gen.generate(task, target)
    rng = random.Random(7)
    seen = set()
    for _ in range(2):
        cfg = space.sample(rng)
        if cfg is None or cfg.key in seen:
            continue
        seen.add(cfg.key)
        got, expected = _run(task, apply_config(task, cfg, target), target)
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3, err_msg=cfg.key)
    assert seen


def _config_with(space, **values) -> Config:
    """The first valid-per-knob config of ``space`` with some knobs forced."""
    base = {k.name: k.choices[0] for k in space.knobs}
    base.update(values)
    return Config.of(base)


def test_check_rejects_oversized_register_tile(gen, target):
    task = _task("dense", dict(M=128, K=256, N=256))
    space = gen.generate(task, target)
    # The tallest and widest register tile the space offers: too many accumulators at
    # any SIMD width (8 x 32 lanes needs 32 AVX2 or 16 AVX-512 registers).
    tile_i = max(space.knob("tile_i").choices, key=lambda c: c[3])
    tile_j = max(space.knob("tile_j").choices, key=lambda c: c[3])
    assert tile_i[3] * tile_j[3] // target.simd_lanes_fp32 > space.check.maxacc
    cfg = _config_with(space, tile_i=tile_i, tile_j=tile_j)
    reason = space.validate(cfg)
    assert reason and "accumulators" in reason


def test_check_rejects_short_inner_reduction(gen, target):
    task = _task("dense", dict(M=128, K=256, N=256))
    space = gen.generate(task, target)
    cfg = space.sample(random.Random(0))
    cfg = Config.of({**cfg.to_dict(), "tile_k": (128, 2)})
    reason = space.check(cfg)
    assert reason and "reduction" in reason


def test_check_rejects_vector_width_that_is_not_whole_registers(gen, target):
    lanes = target.simd_lanes_fp32
    # 16x16 output: a shape whose full check has configs at 8 and 16 lanes (at 14x14 and
    # 8 lanes sampling finds none and the check is relaxed to the register limit alone)
    task = _task("conv2d", dict(N=1, C=16, H=16, W=16, K=4 * lanes, R=3, S=3, stride=1, pad=1))
    space = gen.generate(task, target)
    assert not space.check.relaxed
    assert space.knob("vec").choices == ("k",)
    assert all(c[3] % lanes == 0 for c in space.knob("tile_f").choices)
    odd = (8, 1, 1, lanes // 2)  # half a register of channels innermost
    reason = space.check(_config_with(space, tile_f=odd))
    assert reason and "vector width" in reason


def test_check_rejects_too_little_parallelism(gen, target):
    task = _task("depthwise_conv2d", dict(N=1, C=32, H=28, W=28, R=3, S=3, stride=1, pad=1))
    space = gen.generate(task, target)
    serial_c = next(c for c in space.knob("tile_c").choices if c[0] == 1 and c[2] == 1)
    serial_y = next(c for c in space.knob("tile_y").choices if c[0] == 1 and c[2] == 1)
    width = next(c for c in space.knob("tile_x").choices if c[2] == space.check.widths[0])
    reason = space.check(_config_with(space, tile_c=serial_c, tile_y=serial_y, tile_x=width))
    assert reason and "parallel" in reason


def test_check_option_relaxed_offers_what_the_full_check_rejects(target):
    # The parallelism test's config: the full check rejects it, the hard limit keeps it.
    task = _task("depthwise_conv2d", dict(N=1, C=32, H=28, W=28, R=3, S=3, stride=1, pad=1))
    full = CpuTemplates().generate(task, target)
    relaxed = CpuTemplates(check="relaxed").generate(task, target)
    assert relaxed.knobs == full.knobs and relaxed.check.relaxed and not full.check.relaxed
    assert "check relaxed (check=relaxed)" in relaxed.notes
    serial_c = next(c for c in full.knob("tile_c").choices if c[0] == 1 and c[2] == 1)
    serial_y = next(c for c in full.knob("tile_y").choices if c[0] == 1 and c[2] == 1)
    width = next(c for c in full.knob("tile_x").choices if c[2] == full.check.widths[0])
    cfg = _config_with(full, tile_c=serial_c, tile_y=serial_y, tile_x=width)
    assert "parallel" in full.validate(cfg)
    assert relaxed.validate(cfg) is None
    # Still no spilling register tile: the relaxed space rejects what the hard limit does.
    dense = _task("dense", dict(M=128, K=256, N=256))
    wide = CpuTemplates(check="relaxed").generate(dense, target)
    tile_i = max(wide.knob("tile_i").choices, key=lambda c: c[3])
    tile_j = max(wide.knob("tile_j").choices, key=lambda c: c[3])
    assert "accumulators" in wide.validate(_config_with(wide, tile_i=tile_i, tile_j=tile_j))
    rng = random.Random(1)
    drawn = [relaxed.sample(rng) for _ in range(200)]
    assert sum(full.validate(c) is not None for c in drawn) > 0  # poor configs are offered


def test_check_option_off_drops_the_check_and_bad_values_are_one_line_errors(target):
    from orchestrator.errors import OrchestratorError
    from orchestrator.manager import load_plugins

    task = _task("dense", dict(M=128, K=256, N=256))
    space = CpuTemplates(check="off").generate(task, target)
    assert space.check is None and "check dropped (check=off)" in space.notes
    assert "check relaxed" not in " ".join(CpuTemplates().generate(task, target).notes)
    plugins = load_plugins(autoload=False)
    made = plugins.create("space_generator", "cpu", check="relaxed")
    assert made.check == "relaxed"
    with pytest.raises(OrchestratorError) as err:
        plugins.create("space_generator", "cpu", check="loose")
    assert "check must be one of full, relaxed, off" in str(err.value)
    assert "\n" not in str(err.value)


def test_invalid_config_raises_invalid_config_error(gen, target):
    task = _task("dense", dict(M=32, K=32, N=32))
    space = gen.generate(task, target)
    good = space.sample(random.Random(0))
    bad_split = Config.of({**good.to_dict(), "tile_i": (3, 1, 1, 1)})
    with pytest.raises(InvalidConfigError, match="tile_i"):
        apply_config(task, bad_split, target)
    bad_choice = Config.of({**good.to_dict(), "unroll": 7})
    with pytest.raises(InvalidConfigError, match="unroll"):
        apply_config(task, bad_choice, target)
    missing = Config.of({k: v for k, v in good.to_dict().items() if k != "acc_at"})
    with pytest.raises(InvalidConfigError, match="acc_at"):
        apply_config(task, missing, target)


def test_schedule_errors_become_one_line_invalid_config_errors():
    from tvm.s_tir import Schedule

    task = _task("dense", dict(M=8, K=8, N=8))
    sch = Schedule(task.operator.prim_func(task.params))
    with pytest.raises(InvalidConfigError) as info:
        with schedule_errors("dense"):
            sch.get_sblock("no_such_block")
    assert "\n" not in str(info.value)
    assert "no_such_block" in str(info.value)


@pytest.mark.parametrize("op,shape", [AWKWARD[1], AWKWARD[8], AWKWARD[12]],
                         ids=[IDS[1], IDS[8], IDS[12]])
def test_apply_config_is_deterministic(gen, target, op, shape):
    task = _task(op, shape)
    space = gen.generate(task, target)
    cfg = space.sample(random.Random(11))
    first = apply_config(task, cfg, target)
    second = apply_config(task, Config.of(cfg.to_dict()), target)
    tvm.ir.assert_structural_equal(first, second)


def test_check_is_picklable_for_worker_processes(gen, target):
    import pickle

    space = gen.generate(_task("conv2d", dict(N=1, C=8, H=8, W=8, K=16, R=3, S=3, pad=1)), target)
    check = pickle.loads(pickle.dumps(space.check))
    cfg = space.sample(random.Random(0))
    assert check(cfg) == space.check(cfg) is None


def test_bench_script_helpers_without_tuning(monkeypatch):
    """scripts/bench_vs_peers.py: workloads, the shared timing routine and the table."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "scripts" / "bench_vs_peers.py"
    spec = importlib.util.spec_from_file_location("bench_vs_peers_under_test", path)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, bench)  # dataclasses look themselves up
    spec.loader.exec_module(bench)
    r18, bert = bench.load_workloads(["r18_l2", "bert_ffn1"])
    assert (r18.op, r18.params["C"], r18.params["pad"]) == ("conv2d", 128, 1)
    assert (bert.op, bert.params["N"]) == ("dense", 3072)
    calls = []
    entries = [bench.Entry("torch", run=lambda: calls.append(1)), bench.Entry("ms"),
               bench.Entry("ours", run=lambda: calls.append(2))]
    bench.time_side_by_side(entries, rounds=2, min_seconds=0.001, quiet_wait=0.0)
    assert len(entries[0].latencies) == 2 and not entries[1].latencies
    text = bench.render([(bert, entries)], trials=4, ms_trials=0, mcpu="test")
    assert "| bert_ffn1 |" in text and "n/a" in text and "TVM_NUM_THREADS" in text


def _vectorized_extents(stmt) -> list[int]:
    from plugins.tuna.tirwalk import child_stmts, const_int, kind_name

    out = []
    if hasattr(stmt, "loop_var") and kind_name(stmt) == "vectorized":
        out.append(const_int(stmt.extent))
    for child in child_stmts(stmt):
        out += _vectorized_extents(child)
    return out


@pytest.mark.parametrize("shape", [dict(M=64, K=32, N=1024), dict(M=60, K=32, N=1000)],
                         ids=["exact", "padded"])
def test_matmul_vectorizes_at_most_a_register_tile_row(gen, target, shape):
    # acc_at=outer writes back rows as long as N; vectorized whole, a 3072-lane row
    # took LLVM ~26 s to compile on bert_ffn1 (template bug found in stop 23).
    task = _task("dense", shape)
    space = gen.generate(task, target)
    # j0 = 1: the accumulator, and so each write-back row, spans all of N
    tile_j = max((c for c in space.knob("tile_j").choices if c[0] == 1), key=lambda c: c[3])
    cfg = _config_with(space, acc_at="outer", tile_j=tile_j)
    mod = apply_config(task, cfg, target)
    widths = _vectorized_extents(mod["main"].body)
    assert widths and max(widths) <= 4 * target.simd_lanes_fp32, widths
    got, expected = _run(task, mod, target)
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-3, err_msg=cfg.key)
