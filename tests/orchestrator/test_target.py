"""The host description cost models read: cache sizes and ways from sysfs."""

from __future__ import annotations

from dataclasses import replace

import orchestrator.target as target_mod
from orchestrator.testing.conformance import TOY_TARGET


def _index(base, n: int, level: int, kind: str, size: str, ways: str | None) -> None:
    d = base / f"index{n}"
    d.mkdir()
    files = {"level": level, "type": kind, "size": size, "ways_of_associativity": ways}
    for name, value in files.items():
        if value is not None:
            (d / name).write_text(str(value) + "\n")


def test_cache_sizes_and_ways_come_from_sysfs(tmp_path, monkeypatch):
    _index(tmp_path, 0, 1, "Data", "48K", "12")
    _index(tmp_path, 1, 1, "Instruction", "64K", "16")
    _index(tmp_path, 2, 2, "Unified", "2048K", None)  # ways not reported
    monkeypatch.setattr(target_mod, "CACHE_DIR", tmp_path)
    assert target_mod._cache_level(1) == (48 << 10, 12)
    assert target_mod._cache_level(2) == (2 << 20, 0)
    assert target_mod._cache_level(3) == (8 << 20, 0)  # absent: a default size


def test_cache_sets_follow_from_size_and_ways():
    l1 = replace(TOY_TARGET, l1d_bytes=48 << 10, l1d_ways=12, l2_bytes=1 << 20, l2_ways=0)
    assert l1.cache_sets(1) == 64
    assert l1.cache_sets(2) == 1  # unknown ways: one set, capacity alone
    # Stored descriptions written before the ways existed still load.
    old = {k: v for k, v in l1.to_dict().items() if k not in ("l1d_ways", "l2_ways")}
    assert target_mod.TargetInfo.from_dict(old).cache_sets(1) == 1


def test_with_cores_changes_the_cores_and_the_tvm_target_alike():
    two = TOY_TARGET.with_cores(2)
    assert two.cores == 2 and dict(two.tvm).get("num-cores", 2) == 2
    host = replace(TOY_TARGET, tvm=(*TOY_TARGET.tvm, ("num-cores", 8)), cores=8)
    assert dict(host.with_cores(1).tvm)["num-cores"] == 1 and host.with_cores(1).cores == 1


def test_the_host_is_described_from_one_reading_of_cpuinfo(tmp_path, monkeypatch):
    import orchestrator.host_cpu as host_cpu

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu MHz\t\t: 3000.0\n"
                    "flags\t\t: fpu avx2 fma\n")
    reads: list[int] = []
    read = host_cpu.read_cpuinfo

    def counted() -> str | None:
        reads.append(1)
        return read()

    monkeypatch.setattr(host_cpu, "CPUINFO", info)
    monkeypatch.setattr(host_cpu, "read_cpuinfo", counted)
    monkeypatch.setattr(host_cpu, "ask_tvm", lambda: ("cpu-a", ""))
    monkeypatch.setattr(target_mod, "CPU_MAX_FREQ", tmp_path / "no-cpufreq")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    host = target_mod.detect_host()
    assert len(reads) == 1
    assert (host.simd_bits, host.fma, host.arch, host.clock_ghz) == (256, True, "cpu-a", 3.0)
    assert target_mod._cpu_flags(None) == set() and target_mod._clock_ghz(None) == 2.5
