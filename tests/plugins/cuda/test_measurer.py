"""The cuda measurer: its GPU check, the CPU build half, and (with a GPU) real runs."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.errors import OrchestratorError
from orchestrator.result import MeasureStatus
from orchestrator.space import Config
from orchestrator.target import detect_host
from plugins.cuda.measurer import CudaMeasurer, NoGpuError
from plugins.cuda.ptx import cuda_source
from plugins.cuda.templates import CudaTemplates, apply_config
from plugins.cuda.worker import CudaPool, CubinHook, source_digest
from tests.plugins.cuda.helpers import (
    SMALL_DENSE_CONFIG,
    cuda_plugins,
    has_gpu,
    small_dense,
    target,
)

GPU = has_gpu()
NEEDS_GPU = pytest.mark.skipif(not GPU, reason="needs an NVIDIA GPU: the cuda measurer "
                                               "runs kernels on tvm.cuda(0)")


def test_registered_as_cuda_measurer() -> None:
    plugins = cuda_plugins()
    assert "cuda" in plugins.registry("measurer")
    m = plugins.create("measurer", "cuda", repeat=2)
    try:
        assert isinstance(m, CudaMeasurer) and m.repeat == 2
    finally:
        m.close()


def test_gpu_timing_defaults_and_overrides() -> None:
    m = CudaMeasurer()
    assert (m.repeat, m.min_repeat_ms, m.build_timeout) == (3, 10, 120.0)
    m = CudaMeasurer(repeat=7, min_repeat_ms=50)
    assert (m.repeat, m.min_repeat_ms) == (7, 50)
    assert m.guard == 0  # the local measurer's guard watches the CPU: off for GPUs
    with pytest.raises(OrchestratorError,
                       match="^measurer 'cuda': the contention guard .* leave it out"):
        CudaMeasurer(guard=0.25)


def test_unknown_options_are_named() -> None:
    with pytest.raises(OrchestratorError, match="^measurer 'cuda': unknown option.*bogus.*device"):
        CudaMeasurer(bogus=1)
    with pytest.raises(OrchestratorError,
                       match="^measurer 'cuda': option repeat takes a whole number"):
        CudaMeasurer(repeat="often")
    with pytest.raises(OrchestratorError,
                       match=r"^measurer 'cuda': option device takes a whole number, got 0\.5$"):
        CudaMeasurer(device=0.5)  # was truncated to GPU 0, as the local measurer's numbers were


def test_cpu_targets_are_refused() -> None:
    space = CudaTemplates().generate(small_dense(), target("t4"))
    with CudaMeasurer() as m, pytest.raises(OrchestratorError, match="--target cuda"):
        m.measure(space, detect_host(), [SMALL_DENSE_CONFIG])


@pytest.mark.skipif(GPU, reason="checks the behaviour without a GPU")
def test_without_a_gpu_one_error_names_the_alternatives() -> None:
    space = CudaTemplates().generate(small_dense(), target("h100"))
    configs = [space.sample(random.Random(i)) for i in range(5)]
    with CudaMeasurer() as m:
        m.prepare(space, target("h100"))  # when a task starts: quiet, starts nothing here
        assert m.worker_pids() == {"build": [], "run": []}
        assert m.measure(space, target("h100"), []) == []
        with pytest.raises(NoGpuError) as err:
            m.measure(space, target("h100"), configs)
        message = str(err.value)
        assert "\n" not in message and "no NVIDIA GPU" in message
        assert "--measurer static" in message and "machine with" in message
        assert m.worker_pids() == {"build": [], "run": []}  # nothing was started


@pytest.fixture(scope="module")
def build_pool(tmp_path_factory) -> Iterator[CudaPool]:
    pool = CudaPool("build", 1, tmp_path_factory.mktemp("cuda-build"))
    yield pool
    pool.close()


def test_build_worker_makes_a_library_and_a_cubin(build_pool: CudaPool, tmp_path: Path) -> None:
    task, tgt = small_dense(), target("t4")
    space = CudaTemplates().generate(task, tgt)
    common = {"schedule_fn": space.schedule_fn, "task": task.to_dict(), "target": tgt.to_dict()}
    bad = {**SMALL_DENSE_CONFIG.to_dict(), "tile_m": [3, 1, 1]}
    ok, invalid = build_pool.map([
        {**common, "config": SMALL_DENSE_CONFIG.to_dict(), "out_dir": str(tmp_path / "a")},
        {**common, "config": bad, "out_dir": str(tmp_path / "b")},
    ], timeout=120)
    assert ok.reply is not None and ok.reply["status"] == "ok", ok
    library, cubin = Path(ok.reply["path"]), Path(ok.reply["cubin"])
    # The library holds the CUDA C where TVM has no CUDA compiler at export (here), or a
    # binary where it has one (NVRTC on the H100 machine): only its existence is common.
    assert library.stat().st_size > 0
    assert cubin.read_bytes()[:4] == b"\x7fELF"
    expected = cuda_source(apply_config(task, SMALL_DENSE_CONFIG, tgt), tgt)
    assert ok.reply["source_sha"] == source_digest(expected)
    assert invalid.reply is not None and invalid.reply["status"] == "invalid_config"
    assert "tile_m" in invalid.reply["error"]


def test_cubin_hook_serves_the_prepared_binary() -> None:
    compiled: list[str] = []
    hook = CubinHook(lambda src: compiled.append(src) or b"fresh")
    hook.binaries = {source_digest("kernel A"): b"prepared"}
    assert hook("kernel A") == b"prepared" and hook.hits == 1
    assert hook("kernel B") == b"fresh" and compiled == ["kernel B"]


def with_layout(space, layout: str, n: int) -> list[Config]:
    """``n`` valid configs of ``space`` with the given layout (forcing the layout onto a
    sampled config can break the template's rules, as the H100 run of this test showed)."""
    out: list[Config] = []
    rng = random.Random(0)
    while len(out) < n:
        cfg = Config.of({**space.sample(rng).to_dict(), "layout": layout})
        if space.validate(cfg) is None and cfg not in out:
            out.append(cfg)
    return out


def test_configs_forced_to_a_layout_are_valid() -> None:
    space = CudaTemplates().generate(small_dense(), target("h100"))
    for layout in ("blocked", "interleaved"):
        configs = with_layout(space, layout, 3)
        assert {c["layout"] for c in configs} == {layout}
        assert all(space.validate(c) is None for c in configs)


@NEEDS_GPU
@pytest.mark.parametrize("layout", ["blocked", "interleaved"])
def test_measures_dense_and_conv_on_the_gpu(layout: str) -> None:
    from orchestrator.gpus import GPUS, local_gpu_names, spec_for_name
    from orchestrator.task import Task

    spec = spec_for_name(local_gpu_names()[0]) or GPUS["h100"]
    tgt = spec.target()
    gen = CudaTemplates()
    tasks = [small_dense(),
             Task.create("conv2d", {"N": 1, "C": 16, "H": 14, "W": 14, "K": 32, "R": 3, "S": 3,
                                    "stride": 1, "pad": 1}),
             Task.create("conv2d", {"N": 2, "C": 8, "H": 15, "W": 15, "K": 16, "R": 3, "S": 3,
                                    "stride": 2, "pad": 2, "dilation": 2})]
    with CudaMeasurer(build_workers=2, repeat=3, min_repeat_ms=1) as m:
        for task in tasks:
            space = gen.generate(task, tgt)
            configs = with_layout(space, layout, 3)
            results = m.measure(space, tgt, configs)
            assert [r.config for r in results] == configs
            for r in results:
                assert r.status is MeasureStatus.OK, r.error  # checked against NumPy
                assert r.measurer == "cuda" and len(r.latencies) == 3 and r.latency > 0


@pytest.mark.skipif(GPU, reason="checks the behaviour without a GPU")
def test_pipeline_without_a_gpu_gives_statuses_not_exceptions(monkeypatch) -> None:
    """With the GPU check bypassed, builds succeed on the CPU and every run fails as a
    run_error result (the runner cannot load CUDA code here), config by config."""
    task, tgt = small_dense(), target("t4")
    space = CudaTemplates().generate(task, tgt)
    bad = Config.of({**SMALL_DENSE_CONFIG.to_dict(), "tile_m": [3, 1, 1]})
    monkeypatch.setattr(CudaMeasurer, "require_gpu", lambda self, target: None)
    with CudaMeasurer(build_workers=1, run_timeout=60) as m:
        results = m.measure(space, tgt, [SMALL_DENSE_CONFIG, bad])
        assert [r.config for r in results] == [SMALL_DENSE_CONFIG, bad]
        ran, invalid = results
        assert ran.status is MeasureStatus.RUN_ERROR and ran.build_seconds > 0, ran
        assert "\n" not in ran.error and ran.error
        assert invalid.status is MeasureStatus.INVALID_CONFIG
        assert {r.measurer for r in results} == {"cuda"}
        runner = [w for w in m._runner.workers if w.ready]
        assert runner and runner[0].hello["gpu"] is False
