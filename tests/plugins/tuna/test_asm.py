"""The assembly parser: functions, basic blocks, loops and trip counts."""

from __future__ import annotations

from plugins.tuna.asm import parse_asm, split_functions, trip_count
from plugins.tuna.isa import AArch64, X86


def test_splits_a_real_kernel_into_functions_blocks_and_loops(znver4_kernel):
    functions = parse_asm(znver4_kernel.asm, X86())
    names = [f.name for f in functions]
    assert "main_compute_" in names
    assert not any(n.startswith("__tvm_ffi_") for n in names)  # runtime wrappers skipped
    compute = functions[names.index("main_compute_")]
    isa = X86()
    for block in compute.blocks[:-1]:
        nxt = compute.blocks[block.index + 1]
        # A block ends at a jump or return, or where a branch target label starts.
        assert (block.instructions and isa.ends_block(block.instructions[-1])) \
            or nxt.label is not None
    labels = {b.label for b in compute.blocks if b.label}
    assert all(label.startswith(".LBB") for label in labels)
    assert compute.loops
    for loop in compute.loops:
        last = compute.blocks[loop.latch].instructions[-1]
        assert isa.branch(last) is not None
        assert loop.header in loop.body and loop.latch in loop.body
    # The innermost loop runs k1 = 4 iterations (maybe unrolled) and holds the FMAs.
    fma_loops = [lp for lp in compute.loops
                 if any(i.op.startswith("vfmadd") for b in lp.body
                        for i in compute.blocks[b].instructions)]
    assert fma_loops


def test_runtime_functions_are_listed_but_skipped():
    text = "\n".join([
        "\t.type\t__tvm_ffi_main,@function", "__tvm_ffi_main:", "\tretq", ".Lfunc_end0:",
        "\t.type\tmain_compute_,@function", "main_compute_:", "\tretq", ".Lfunc_end1:"])
    assert list(split_functions(text)) == ["__tvm_ffi_main", "main_compute_"]
    assert [f.name for f in parse_asm(text, X86())] == ["main_compute_"]


X86_LOOPS = """
\t.type\tf,@function
f:
\txorl\t%eax, %eax
\tmovl\t$4, %ecx
.LBB0_1:
\tvfmadd231ps\t(%rdi,%rax,4), %zmm1, %zmm0
\tvfmadd231ps\t64(%rdi,%rax,4), %zmm1, %zmm2
\taddq\t$2, %rax
\tcmpq\t$16, %rax
\tjne\t.LBB0_1
\tvmovups\t%zmm0, (%rsi)
.LBB0_2:
\tvmovups\t%zmm2, (%rdx)
\tdecq\t%rcx
\tjne\t.LBB0_2
\ttestq\t%rdx, %rdx
\tje\t.LBB0_4
\tincq\t%r8
.LBB0_4:
\tretq
.Lfunc_end0:
"""


def test_trip_counts_from_the_induction_variable():
    (f,) = parse_asm(X86_LOOPS, X86())
    # Blocks: entry, loop 1, the store after it, loop 2, the test, the skipped inc, ret.
    assert [b.label for b in f.blocks] == [None, ".LBB0_1", None, ".LBB0_2", None, None,
                                           ".LBB0_4"]
    assert [(lp.header, lp.latch, lp.trip) for lp in f.loops] == [(1, 1, 8), (3, 3, 4)]
    # Straight-line code around the loops runs once per call; each loop block once per
    # iteration; the conditional increment is reached on one of two paths outside loops.
    trips = {lp: lp.trip for lp in f.loops}
    assert f.executions(1, trips) == 8
    assert f.executions(3, trips) == 4
    assert f.executions(6, trips) == 1.0


def test_a_backward_jump_to_an_exit_block_is_no_loop():
    text = "\n".join(["\t.type\tg,@function", "g:", "\ttestq\t%rdi, %rdi", "\tjne\t.LBB0_2",
                      ".LBB0_1:", "\tretq", ".LBB0_2:", "\tcallq\t*(%rax)", "\ttestl\t%eax, %eax",
                      "\tjne\t.LBB0_1", "\tjmp\t.LBB0_1", ".Lfunc_end0:"])
    (g,) = parse_asm(text, X86())
    assert g.loops == ()


AARCH64_LOOP = """
\t.type\th,@function
h:
\tmov\tw8, #4
\tmov\tx9, xzr
.LBB0_1:
\tldr\tq0, [x0, x9]
\tfmla\tv1.4s, v0.4s, v2.s[0]
\tadd\tx9, x9, #16
\tsubs\tx8, x8, #1
\tb.ne\t.LBB0_1
\tstr\tq1, [x1]
\tret
.Lfunc_end0:
"""


def test_aarch64_count_down_loop():
    (h,) = parse_asm(AARCH64_LOOP, AArch64())
    assert [(lp.header, lp.trip) for lp in h.loops] == [(1, 4)]
    eff = AArch64().effect(h.blocks[1].instructions[1])
    assert eff.cls == "fma" and "v1" in eff.reads and eff.writes == ("v1",)


def test_aarch64_kernel_parses(neon_kernel):
    functions = parse_asm(neon_kernel.asm, AArch64())
    loops = [lp for f in functions for lp in f.loops]
    assert loops and any(lp.trip for lp in loops)


def test_trip_count_is_none_without_a_constant_bound():
    text = "\n".join(["\t.type\tk,@function", "k:", "\txorl\t%eax, %eax", ".LBB0_1:",
                      "\tincq\t%rax", "\tcmpq\t%rsi, %rax", "\tjne\t.LBB0_1", "\tretq",
                      ".Lfunc_end0:"])
    (k,) = parse_asm(text, X86())
    assert trip_count(k.blocks, 1, 1, X86(), (0,)) is None


# A row loop as LLVM versions it for a copy into a workspace buffer: a runtime alias
# check (pointer bounds compared, "no overlap" = setae | setae) picks the vectorized
# copy or a scalar loop; the second test of the same flag skips the scalar loop.
X86_ALIAS_CHECK = """
\t.type\tf,@function
f:
\txorl\t%r10d, %r10d
\tcmpq\t%r8, %rcx
\tsetae\t%cl
\tcmpq\t%rax, %r9
\tsetae\t%al
\torb\t%cl, %al
.LBB0_3:
\ttestb\t%al, %al
\tje\t.LBB0_9
\tvmovups\t(%rsi), %zmm1
\tvmovups\t%zmm1, (%rdx)
\tmovl\t$16, %ecx
\tjmp\t.LBB0_10
.LBB0_9:
\txorl\t%ecx, %ecx
.LBB0_10:
\ttestb\t%al, %al
\tjne\t.LBB0_5
.LBB0_16:
\tvmovss\t(%rsi,%rcx,4), %xmm1
\tvmovss\t%xmm1, (%rdx,%rcx,4)
\tincq\t%rcx
\tcmpq\t$16, %rcx
\tjne\t.LBB0_16
.LBB0_5:
\tincq\t%r10
\tcmpq\t$58, %r10
\tjne\t.LBB0_3
\tretq
"""


def test_runtime_alias_check_takes_the_no_overlap_side():
    (f,) = parse_asm(X86_ALIAS_CHECK, X86())
    by_label = {b.label: b.index for b in f.blocks}
    vector = by_label[".LBB0_3"] + 1  # the fall-through of `je .LBB0_9`
    scalar_loop = by_label[".LBB0_16"]
    assert f.reach[vector] == 1.0
    assert f.reach[by_label[".LBB0_9"]] == 0.0
    assert f.reach[scalar_loop] == 0.0
    assert f.reach[by_label[".LBB0_5"]] == 1.0


def test_a_flag_from_constant_compares_is_no_alias_check():
    # The same branches on a bound check (compare with a constant) split evenly.
    text = X86_ALIAS_CHECK.replace("cmpq\t%rax, %r9", "cmpq\t$57, %r9")
    (f,) = parse_asm(text, X86())
    by_label = {b.label: b.index for b in f.blocks}
    assert 0.0 < f.reach[by_label[".LBB0_9"]] < 1.0


# An inner copy loop that LLVM unrolled into two copies, each testing the exit and each
# with its own back edge, inside an outer loop; copy A also has an error exit.
X86_TWO_EXITS = """
\t.type\tf,@function
f:
\txorl\t%r8d, %r8d
.LBB0_1:
\txorl\t%ecx, %ecx
.LBB0_2:
\ttestb\t$1, %cl
\tjne\t.LBB0_5
\ttestq\t%rdi, %rdi
\tje\t.LBB0_9
\tvmovups\t(%rsi,%rcx,4), %zmm0
\tvmovups\t%zmm0, (%rdx,%rcx,4)
\taddq\t$16, %rcx
\tcmpq\t$64, %rcx
\tje\t.LBB0_4
\tjmp\t.LBB0_2
.LBB0_5:
\tvmovups\t(%rsi,%rcx,4), %zmm0
\tvmovups\t%zmm0, (%rdx,%rcx,4)
\taddq\t$16, %rcx
\tcmpq\t$64, %rcx
\tjne\t.LBB0_2
.LBB0_4:
\tvaddps\t%zmm1, %zmm2, %zmm3
\tincq\t%r8
\tcmpq\t$4, %r8
\tjne\t.LBB0_1
\tretq
.LBB0_9:
\tmovl\t$-1, %eax
\tretq
"""


def test_every_exit_of_an_unrolled_loop_leads_to_the_code_after_it():
    (f,) = parse_asm(X86_TWO_EXITS, X86())
    by_label = {b.label: b.index for b in f.blocks}
    assert len(f.loops) == 2
    # One pass through the outer body runs the code after the inner loop once, whichever
    # copy left the inner loop (before: only the main latch's exit counted, so half).
    assert f.reach[by_label[".LBB0_4"]] == 1.0
    assert f.reach[by_label[".LBB0_5"]] == 0.5
    assert f.reach[by_label[".LBB0_9"]] == 0.0  # the error exit takes nothing
