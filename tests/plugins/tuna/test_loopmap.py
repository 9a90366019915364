"""Algorithm 1: matching assembly loops with TIR loops gives exact instruction counts."""

from __future__ import annotations

import math

from plugins.tuna.arch import NEON, ZNVER4
from plugins.tuna.asm import parse_asm
from plugins.tuna.isa import AArch64, X86
from plugins.tuna.loopmap import count_program, map_loops, pattern_match
from plugins.tuna.tirwalk import TirLoop, lowered_loops

M = N = K = 64


def test_fma_count_of_a_vectorized_matmul_on_avx512(znver4_kernel):
    loops = lowered_loops(znver4_kernel.tir)
    # i0 (16), j0 (4), k0 (16) and k1 (4) remain; i1 is unrolled, j1 vectorized by TVM.
    assert [(t.name, t.extent) for t in loops if t.kind == "serial"][:2] == [
        ("i_0", 16), ("j_0", 4)]
    functions = parse_asm(znver4_kernel.asm, X86())
    counts = count_program(functions, loops, X86(), ZNVER4, cores=1)
    assert counts.count("fma") == M * N * K / 16  # one zmm FMA per 16 multiply-adds
    assert counts.matched == len(counts.loops) > 0
    assert counts.cycles > 0


def test_parallel_loop_counts_one_threads_share(znver4_parallel_kernel):
    loops = lowered_loops(znver4_parallel_kernel.tir)
    assert loops[0].kind == "parallel" and loops[0].region == 1
    functions = parse_asm(znver4_parallel_kernel.asm, X86())
    assert any("parallel_lambda" in f.name for f in functions)
    for cores in (1, 2, 3):
        counts = count_program(functions, loops, X86(), ZNVER4, cores=cores)
        # 16 rows of 4 x 64 x 64: ceil(16 / cores) of them on the busiest core.
        assert counts.count("fma") == math.ceil(16 / cores) * 4 * N * K / 16


def test_fmla_count_on_neon(neon_kernel):
    functions = parse_asm(neon_kernel.asm, AArch64())
    counts = count_program(functions, lowered_loops(neon_kernel.tir), AArch64(), NEON, cores=1)
    assert counts.count("fma") == M * N * K / 4  # 128-bit fmla: 4 lanes


def test_pattern_match_allows_llvm_unrolling_only():
    leaf = TirLoop(0, "k", 16, "serial", None, 0, 0, 0)
    outer = TirLoop(1, "i", 16, "serial", None, 0, 2, 0)
    assert pattern_match(leaf, 16, 0) and pattern_match(leaf, 8, 0)  # unrolled by 2
    assert not pattern_match(leaf, 3, 0)
    assert not pattern_match(leaf, None, 1)  # an assembly loop with loops inside
    assert pattern_match(outer, None, 3)


def test_matching_follows_the_nest(znver4_kernel):
    loops = lowered_loops(znver4_kernel.tir)
    functions = parse_asm(znver4_kernel.asm, X86())
    for function, mapped in zip(functions, map_loops(functions, loops, cores=1)):
        for loop, m in mapped.items():
            if m.tir_index is None:
                continue
            tir = loops[m.tir_index]
            for inner, mi in mapped.items():
                if loop.contains(inner) and mi.tir_index is not None and mi.tir_index != tir.index:
                    assert tir.index < mi.tir_index <= tir.index + tir.descendants


def test_copies_of_a_loop_llvm_unrolled_around_count_in_full():
    """r18_l2ds with tile_f [1, 2, 2, 32]: LLVM unrolls ff_1 (extent 2) completely,
    leaving two alike copies of the yy_1 nest whose trip counts the code hides. Matching
    the first copy with ff_1, and the second one's loops with nothing, counted 64% of
    the FMAs, so the model ranked this config first in the Xeon reference sample."""
    import dataclasses

    from orchestrator.loop import TuneOptions, build_space
    from orchestrator.manager import load_plugins
    from orchestrator.space import Config
    from orchestrator.suite import read_suite, select
    from plugins.tuna.features import analyze
    from tests.plugins.tuna.helpers import ZNVER4

    target = dataclasses.replace(ZNVER4, cores=2, tvm=(
        ("kind", "llvm"), ("mcpu", "znver4"), ("mtriple", "x86_64-linux-gnu"), ("num-cores", 2)))
    task = select(read_suite(), ["r18_l2ds"])[0]
    _, space = build_space(load_plugins(), task, target, TuneOptions(space_generator="cpu"))
    cfg = Config.of({"acc_at": "inner", "pad": "inline", "rs_at": "inner", "tile_c": [32, 2],
                     "tile_f": [1, 2, 2, 32], "tile_x": [4, 7, 1, 1], "tile_y": [1, 7, 1, 4],
                     "unroll": 64, "vec": "k"})
    features = analyze(space.schedule_fn, task, cfg, target)
    macs = 64 * 28 * 28 * 128  # C x OH x OW x K
    # per thread (2 cores, 4 parallel iterations), two 16-lane zmm FMAs per 32 lanes
    assert features["fma"] == macs / 16 / 2
    assert features.matched_loops == features.asm_loops == 11
