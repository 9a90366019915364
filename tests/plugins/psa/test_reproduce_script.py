"""scripts/reproduce_psa.py end to end on a synthetic CUDA conv space (no TVM, no GPU)."""

from __future__ import annotations


import pytest

import plugins.psa
from orchestrator.hookspecs import hookimpl
from orchestrator.kernel_plan import KernelPlan
from orchestrator.manager import Plugins, load_plugins
from orchestrator.result import MeasureResult, MeasureStatus
from orchestrator.space import ChoiceKnob, Config, Space
from orchestrator.task import Task
from tests.scripts_under_test import load_script


def conv_plan(task: Task, config: Config, target: object) -> KernelPlan:
    """A conv kernel whose block count and load run follow two knobs."""
    threads = config["threads"]
    blocks = max(1, task.flops // (threads * 4096))
    return KernelPlan(grid_blocks=blocks, threads_per_block=threads, regs_per_thread=64,
                      smem_bytes_per_block=config["smem"] * 1024, flops=task.flops,
                      useful_flops=task.flops, global_load_bytes=task.flops / 8,
                      global_store_bytes=4e5, smem_load_bytes=task.flops / 2,
                      load_run_bytes=config["run"], reduction_steps=8)


def conv_space(task: Task) -> Space:
    knobs = (ChoiceKnob("threads", tuple(range(32, 1025, 16))),
             ChoiceKnob("smem", (0, 8, 16, 48, 96)), ChoiceKnob("run", (4, 12, 16, 32, 64, 128)),
             ChoiceKnob("pad", tuple(range(4))))
    return Space(task, "fake-cuda", knobs, "orchestrator.testing.toy:no_schedule",
                 plan_fn=f"{__name__}:conv_plan")


def synthetic_latency(config: Config) -> float:
    return 1e-5 * (1 + (config["threads"] % 32 != 0) + (config["run"] < 32) + config["pad"])


class FakeCuda:
    """A ``fake-cuda`` space generator for conv2d and a ``fake-cuda`` measurer with
    synthetic latencies (one config in 50 fails)."""

    @hookimpl
    def orchestrator_add_space_generators(self, registry):
        class Gen:
            def supports(self, task, target):
                return task.op == "conv2d" and target.kind == "cuda"

            def generate(self, task, target):
                return conv_space(task)

        registry.add("fake-cuda", Gen)

    @hookimpl
    def orchestrator_add_measurers(self, registry):
        class Measurer:
            def measure(self, space, target, configs):
                return [MeasureResult(c, MeasureStatus.OK, (synthetic_latency(c),))
                        if i % 50 else MeasureResult(c, MeasureStatus.RUN_ERROR, error="x")
                        for i, c in enumerate(configs)]

            def close(self):
                pass

        registry.add("fake-cuda", Measurer)


@pytest.fixture()
def script(monkeypatch):
    mod = load_script("reproduce_psa")
    own = mod.plugin_set
    monkeypatch.setattr(mod, "plugin_set", lambda: _with_fake(own()))
    return mod


def _with_fake(found: Plugins) -> Plugins:
    """The script's own plugin set plus the fake (psa in code if no entry point has it)."""
    extra: list[tuple[str, object]] = [("fakecuda", FakeCuda())]
    if "psa" not in found.registry("pruner"):
        extra.append(("psa", plugins.psa))
    return load_plugins(extra=extra)


FAKE = ["--generators", "fake-cuda,not-installed", "--measurer", "fake-cuda"]


def test_smoke_writes_the_analytical_report(script, tmp_path) -> None:
    out = tmp_path / "psa.md"
    assert script.main(["--smoke", *FAKE, "--out", str(out)]) == 0
    text = out.read_text()
    assert "No GPU measurement was made" in text and "Best-1" in text
    assert "| fake-cuda | h100 | r18_l4 | 7,560 | 2,000 (sample) |" in text
    assert "not-installed" in text            # named as not available
    assert "- Machine:" in text


def test_sampled_when_the_space_is_large(script, tmp_path) -> None:
    out = tmp_path / "psa.md"
    assert script.main([*FAKE, "--layers", "r18_l4,r18_l3", "--targets", "a100", "--max-enumerate",
                        "1000", "--sample-size", "600", "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count("(sample)") == 2 and "| fake-cuda | a100 | r18_l3 |" in text


def test_measure_refused_without_gpu(script, monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setattr(script, "local_gpu_names", lambda: [])
    exit_status = load_script("script_main").exit_status
    assert exit_status(script.main, ["--measure", "--out", str(tmp_path / "x.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --measure needs an NVIDIA GPU") and "\n" not in err
    assert not (tmp_path / "x.md").exists()


def test_an_unknown_gpu_is_one_error_line_through_exit_status(script, tmp_path,
                                                               capsys) -> None:
    exit_status = load_script("script_main").exit_status
    out = tmp_path / "x.md"
    code = exit_status(lambda: script.main([*FAKE, "--targets", "h100,z900", "--out", str(out)]))
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("error: ") and "'z900'" in err and "\n" not in err
    assert not out.exists()


def test_measure_path_on_a_fake_gpu(script, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(script, "local_gpu_names", lambda: ["NVIDIA H100 80GB HBM3"])
    real = script.resolve_gpu_target
    monkeypatch.setattr(script, "resolve_gpu_target",
                        lambda name: real("cuda:h100" if name == "cuda" else name))
    out, raw = tmp_path / "psa.md", tmp_path / "raw.json"
    assert script.main(["--measure", *FAKE, "--layers", "r18_l4", "--sample", "200", "--out",
                        str(out), "--raw", str(raw)]) == 0
    text = out.read_text()
    assert "Measured Best-k" in text and "No GPU measurement" not in text
    row = [line for line in text.splitlines() if line.startswith("| fake-cuda | h100 | r18_l4 |")][-1]
    cells = [c.strip() for c in row.strip("|").split("|")]
    values = [float(c) for c in cells[4:] if c != "n/a"]
    assert len(values) == 12 and all(0.0 < v <= 1.0 for v in values)
    assert values[0] == 1.0                   # psa256-b1: the best synthetic config is kept
    assert "| fake-cuda | h100 | **all (eq. 6)** |" in text
    assert raw.exists()


def test_smoke_on_the_real_cuda_spaces(tmp_path) -> None:
    """The --smoke run as shipped: r18_l4 on an H100 with the cuda/cnnopt generators."""
    mod = load_script("reproduce_psa")
    found = mod.plugin_set()
    have = [g for g in mod.GENERATORS if g in found.registry("space_generator")]
    if not have:
        pytest.skip("neither plugins.cuda nor plugins.cnnopt is importable here")
    out = tmp_path / "psa.md"
    assert mod.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert "No GPU measurement was made" in text
    for g in have:
        assert f"| {g} | h100 | r18_l4 |" in text
