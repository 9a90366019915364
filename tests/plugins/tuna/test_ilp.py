"""The list scheduler on a hand-made dependency example."""

from __future__ import annotations

from plugins.tuna.arch import ArchModel
from plugins.tuna.ilp import MicroOp, dependency_graphs, list_schedule, micro_ops
from plugins.tuna.isa import Effect

TOY = ArchModel(
    name="toy", isa="x86", issue_width=2,
    latency=(("fma", 4), ("vload", 5), ("alu", 1)),
    units=(("fma", "vfp"), ("vload", "load"), ("alu", "alu")),
    capacity=(("vfp", 1), ("load", 1), ("alu", 2)),
)

OPS = [
    MicroOp("vload", ("mem:a",), ("v0",)),        # 0: starts 0
    MicroOp("vload", ("mem:b",), ("v1",)),        # 1: one load port -> starts 1
    MicroOp("fma", ("v0", "v1", "v2"), ("v2",)),  # 2: waits for both loads: 1 + 5 = 6
    MicroOp("alu", ("r1",), ("r1",)),             # 3: independent: the front end
                                                  #    delivers it at cycle 3 // 2 = 1
    MicroOp("vload", ("mem:c",), ("v0",)),        # 4: overwrites v0, which 2 reads:
                                                  #    not before 2 starts (WAR) -> 6
]


def test_dependency_graphs():
    g = dependency_graphs(OPS, TOY)
    assert g.true[2] == ((0, 5), (1, 5))  # RAW on v0 and v1, with the load latency
    assert g.true[3] == ()
    assert g.false[4] == (0, 2)  # WAW with 0, WAR with 2


def test_schedule_respects_dependencies_ports_and_width():
    s = list_schedule(OPS, TOY)
    assert s.start == (0, 1, 6, 1, 6)
    assert s.cycles == 11  # the last load issues at 6 and takes 5 cycles


def test_issue_width_limits_independent_work():
    alus = [MicroOp("alu", (f"r{i}",), (f"r{i}",)) for i in range(6)]
    assert list_schedule(alus, TOY).start == (0, 0, 1, 1, 2, 2)


def test_folded_load_becomes_two_micro_ops():
    eff = Effect("fma", ("v1", "mem:(%rdi)", "rdi", "v0"), ("v0",), folded_load=True)
    load, op = micro_ops([eff])
    assert load.cls == "vload" and load.writes == ("tmp0",)
    assert op.cls == "fma" and "tmp0" in op.reads and "mem:(%rdi)" not in op.reads
