"""scripts/tuna_associativity.py on real schedules of the CPU templates, with a fixed
cache geometry so that the figures do not depend on the machine running the tests."""

from __future__ import annotations

from dataclasses import replace

from orchestrator.manager import load_plugins
from orchestrator.task import Task
from tests.plugins.tuna.helpers import ZNVER4
from tests.scripts_under_test import load_script

exit_status = load_script("script_main").exit_status

# 32 KiB 8-way L1d (64 sets), 1 MiB 8-way L2.
CPU = replace(ZNVER4, l1d_ways=8, l2_ways=8)


def test_power_of_two_rows_change_l1_movement_and_other_shapes_do_not():
    study = load_script("tuna_associativity").study
    plugins = load_plugins()
    pow2 = study(Task.create("dense", {"M": 64, "K": 1024, "N": 256}), CPU, plugins, 24, 0)
    odd = study(Task.create("dense", {"M": 64, "K": 1040, "N": 208}), CPU, plugins, 24, 0)
    assert pow2.configs == odd.configs == 24
    # Register tiles of 16 rows or more of A, 4 KiB apart, overflow one L1 set's 8 ways.
    assert pow2.changed["l1"] > 0
    assert all(r > 1.0 for r in pow2.ratios["l1"])  # crowding only ever adds movement
    assert odd.changed == {"l1": 0, "l2": 0}


def test_report_names_the_geometry_and_every_workload(tmp_path, monkeypatch, capsys):
    script = load_script("tuna_associativity")
    monkeypatch.setattr(script, "resolve_target", lambda name: CPU)
    out = tmp_path / "assoc.md"
    assert script.main(["--workloads", "dense:M=64,K=1024,N=256;mb_dw13", "--sample", "6",
                        "--out", str(out)]) == 0
    text = out.read_text()
    assert "L1d 32 KiB 8-way (64 sets), L2 1024 KiB 8-way (2048 sets)" in text
    rows = [line for line in text.splitlines() if line.startswith("| dense") or
            line.startswith("| mb_dw13")]
    assert len(rows) == 2 and all(row.split("|")[2].strip() == "6" for row in rows)
    assert exit_status(script.main, ["--workloads", "nosuchop:X=1"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: ")
    assert exit_status(script.main, ["--l1d", "32K"]) == 2
    assert "expected SIZE:WAYS" in capsys.readouterr().err
    # Another CPU's caches replace this one's.
    assert script.main(["--workloads", "mb_dw13", "--sample", "2", "--l1d", "48K:12",
                        "--l2", "2M:16", "--out", str(out)]) == 0
    assert "L1d 48 KiB 12-way (64 sets), L2 2048 KiB 16-way (2048 sets)" in out.read_text()
