"""The host CPU's LLVM name is asked of TVM once per machine and TVM version, then read
from the cache file; a changed fingerprint or a broken file asks again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator import host_cpu
from orchestrator.errors import TargetError
from orchestrator.target import detect_host


@pytest.fixture
def asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each call of TVM's detection, which answers 'cpu-a' (the cache under tmp_path)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    calls: list[int] = []
    monkeypatch.setattr(host_cpu, "ask_tvm",
                        lambda: calls.append(1) or ("cpu-a", "x86_64-unknown-linux-gnu"))
    return calls


def test_the_answer_is_remembered_until_the_fingerprint_changes(
        asked: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert host_cpu.llvm_host() == ("cpu-a", "x86_64-unknown-linux-gnu")
    assert host_cpu.llvm_host() == ("cpu-a", "x86_64-unknown-linux-gnu")
    assert len(asked) == 1
    stored = json.loads((tmp_path / "orchestrator" / "host-cpu.json").read_text())
    assert stored["mcpu"] == "cpu-a" and stored["fingerprint"] == host_cpu.fingerprint()
    assert detect_host().arch == "cpu-a" and len(asked) == 1
    # Another CPU or TVM version: asked again.
    monkeypatch.setattr(host_cpu, "fingerprint", lambda cpuinfo=None: "another machine")
    host_cpu.llvm_host()
    assert len(asked) == 2


@pytest.mark.parametrize("text", ["{not json", '{"fingerprint": 3}', "[]", ""])
def test_a_broken_cache_file_is_asked_again_and_rewritten(asked: list[int], tmp_path: Path,
                                                          text: str) -> None:
    path = tmp_path / "orchestrator" / "host-cpu.json"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    assert host_cpu.llvm_host()[0] == "cpu-a" and len(asked) == 1
    assert json.loads(path.read_text())["mcpu"] == "cpu-a"


def test_without_a_readable_cpu_description_nothing_is_remembered(
        asked: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_cpu, "CPUINFO", tmp_path / "missing")
    assert host_cpu.fingerprint() is None
    host_cpu.llvm_host()
    host_cpu.llvm_host()
    assert len(asked) == 2 and not (tmp_path / "orchestrator" / "host-cpu.json").exists()


def test_an_unwritable_cache_is_only_a_slower_start(
        asked: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # a file where a folder must be
    assert host_cpu.llvm_host()[0] == "cpu-a"
    assert host_cpu.llvm_host()[0] == "cpu-a" and len(asked) == 2


def test_the_fingerprint_follows_the_cpu_description(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    info = tmp_path / "cpuinfo"
    monkeypatch.setattr(host_cpu, "CPUINFO", info)
    block = "processor\t: {}\nvendor_id\t: GenuineIntel\nmodel\t\t: 143\nflags\t\t: fpu {}\n"
    info.write_text(block.format(0, "avx2") + "\n" + block.format(1, "avx2"))
    first = host_cpu.fingerprint()
    info.write_text(block.format(0, "avx2") + "\n" + block.format(1, "avx512f"))
    assert host_cpu.fingerprint() == first  # only the first processor is read
    info.write_text(block.format(0, "avx512f"))
    assert first is not None and host_cpu.fingerprint() != first


def test_tvm_failing_to_detect_is_a_target_error(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import tvm

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def broken(device):
        raise RuntimeError("no LLVM")

    monkeypatch.setattr(tvm.target.Target, "from_device", staticmethod(broken))
    with pytest.raises(TargetError, match="cannot detect the host CPU through TVM: no LLVM"):
        host_cpu.llvm_host()
    assert not (tmp_path / "orchestrator" / "host-cpu.json").exists()


def test_the_real_detection_matches_the_remembered_one(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert host_cpu.llvm_host() == host_cpu.ask_tvm() == host_cpu.llvm_host()
