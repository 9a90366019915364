"""Algorithm 2 on hand-computed loop trees (one element per cache line, so that the
figures are element counts as in the paper)."""

from __future__ import annotations

from plugins.tuna.datamove import Access, Add, Box, Cache, LoopNode, Mul, Var, data_movement

LINE = 4  # one float per "line"


def _v(name: str) -> Var:
    return Var(hash(name) & 0xFFFF, name)


def _loop(name: str, extent: int, *children) -> LoopNode:
    return LoopNode(_v(name).key, extent, tuple(children), name)


def _acc(tensor: str, shape: tuple[int, ...], *indices, store: bool = False) -> Access:
    return Access(tensor, tuple(indices), shape, 4, store)


def test_small_nest_by_hand():
    # for i in 4: for j in 8: read A[i, j], B[j]
    i, j = _v("i"), _v("j")
    inner = _loop("j", 8, _acc("A", (4, 8), i, j), _acc("B", (8,), j))
    root = LoopNode(None, 1, (_loop("i", 4, inner),))
    big = data_movement(root, cache_lines=1000, line_bytes=LINE)
    assert dict(big.movement) == {"A": 32, "B": 8}  # everything fits: compulsory only
    small = data_movement(root, cache_lines=10, line_bytes=LINE)
    # One i iteration touches 16 > 10 elements: B (invariant in i) loses its reuse and
    # is read 4 times; A's rows are new in every iteration and are read once.
    assert dict(small.movement) == {"A": 32, "B": 32}
    i_level = data_movement(root.children[0], cache_lines=10, line_bytes=LINE)
    assert dict(i_level.reuse) == {"A": True, "B": False}


def _two_mm(ni: int, nj: int, nk: int, nl: int, ti: int, tj: int) -> tuple[LoopNode, LoopNode]:
    """Listing 1 of the paper (fused and tiled 2MM); returns (it loop, jt loop)."""
    it, jt, k, i1, j1, l, i2, j2 = (_v(n) for n in ("it", "jt", "k", "i1", "j1", "l", "i2", "j2"))
    i_a = Add(Mul(it, ti), i1)
    j_a = Add(Mul(jt, tj), j1)
    i_b = Add(Mul(it, ti), i2)
    j_b = Add(Mul(jt, tj), j2)
    first = _loop("k", nk, _loop("i1", ti, _loop("j1", tj,
                  _acc("C", (ni, nj), i_a, j_a), _acc("A", (ni, nk), i_a, k),
                  _acc("B", (nk, nj), k, j_a), _acc("C", (ni, nj), i_a, j_a, store=True))))
    second = _loop("l", nl, _loop("i2", ti, _loop("j2", tj,
                   _acc("E", (ni, nl), i_b, l), _acc("C", (ni, nj), i_b, j_b),
                   _acc("D", (nj, nl), j_b, l), _acc("E", (ni, nl), i_b, l, store=True))))
    jt_loop = _loop("jt", nj // tj, first, second)
    return _loop("it", ni // ti, jt_loop), jt_loop


def test_two_matrix_multiply_of_the_paper():
    ni = nj = 16
    nk = nl = 4
    ti = tj = 2
    cache = 40  # > one jt iteration (4 + 8 + 8 + 8 + 8 = 36), < one it iteration
    it_loop, jt_loop = _two_mm(ni, nj, nk, nl, ti, tj)
    jt = data_movement(jt_loop, cache, LINE)
    # Single iteration fits: movement = footprint = TiNj + TiNl + NjNl + NjNk + TiNk.
    expected_jt = ti * nj + ti * nl + nj * nl + nj * nk + ti * nk
    assert jt.total_movement == jt.total_footprint == expected_jt
    it = data_movement(LoopNode(None, 1, (it_loop,)), cache, LINE)
    # It does not: the paper's (TiNj + TiNl + NjNl + NjNk + TiNk) * Ni / Ti.
    assert it.total_movement == expected_jt * ni // ti
    assert dict(it.movement)["B"] == nk * nj * ni // ti  # re-read every it iteration
    assert dict(it.movement)["A"] == ni * nk  # each row block read once


def test_gap_of_nodes_not_touching_a_tensor_breaks_reuse():
    # for t in 2: { for a in 8: X[a] } { for b in 32: Y[b] }  -- X varies with nothing
    # in t; between two uses of X, the Y loop touches 32 > 20 lines.
    a, b = _v("a"), _v("b")
    t_loop = _loop("t", 2, _loop("a", 8, _acc("X", (8,), a)), _loop("b", 32, _acc("Y", (32,), b)))
    m = data_movement(LoopNode(None, 1, (t_loop,)), cache_lines=20, line_bytes=LINE)
    assert dict(m.movement) == {"X": 16, "Y": 64}


def test_rows_a_power_of_two_apart_crowd_into_one_set():
    # 16 rows x 1 float of a [64, K] matrix in a 64-set cache of 64-byte lines (4 KiB
    # period): K = 1024 puts every row 4 KiB apart, in one set; other K spread them.
    def sets(k: int, rows: int = 16, cols: int = 1) -> int:
        return Box((0, 0), (rows, cols), (rows, cols), (64, k), 4).sets(64, 64)

    assert sets(1024) == 1
    assert sets(2048) == 1
    assert sets(768) == 4  # 3 KiB apart: four residues
    assert sets(1152) == 8  # 4.5 KiB apart
    assert sets(1024, cols=128) == 8  # 8 lines per row, the same 8 sets for every row
    # A contiguous run as long as the set period covers every set.
    assert Box((0,), (1024,), (1024,), (4096,), 4).sets(64, 64) == 64


def _strided_nest(k: int) -> LoopNode:
    # for kk in 128: for i in 16: A[i, kk], B[kk, 0]  (a 16-row register tile of a matmul)
    i, kk, j = _v("i"), _v("kk"), _v("j")
    rows = _loop("i", 16, _acc("A", (64, k), i, kk), _acc("B", (k, 1024), kk, j))
    return LoopNode(None, 1, (_loop("kk", 128, rows),))


def test_crowded_sets_break_reuse_that_capacity_alone_keeps():
    cache = 768  # 48 KiB of 64-byte lines
    fully = data_movement(_strided_nest(1024), cache, 64)
    assert dict(fully.movement) == {"A": 128, "B": 128}  # 16 rows x 8 lines, each line reused
    # 12 ways: the 16 rows' lines of one k step share one set and evict each other, so
    # every step brings A's 16 lines again.
    assoc = data_movement(_strided_nest(1024), cache, 64, sets=64)
    assert dict(assoc.movement) == {"A": 16 * 128, "B": 128}
    # With rows 4.5 KiB apart they spread over 8 sets (2 lines each): nothing changes.
    spread = data_movement(_strided_nest(1152), cache, 64, sets=64)
    assert dict(spread.movement) == dict(data_movement(_strided_nest(1152), cache, 64).movement)


def test_cache_pressure_is_the_lines_unless_they_crowd():
    cache = Cache(768, 64, 64)  # 12 ways
    spread = Box((0, 0), (16, 1), (16, 1), (64, 1152), 4)
    assert cache.pressure(spread, 16) == 16
    crowded = Box((0, 0), (16, 1), (16, 1), (64, 1024), 4)
    assert cache.pressure(crowded, 16) == 16 * 64  # one set holding 16 lines
    few = Box((0, 0), (12, 1), (12, 1), (64, 1024), 4)
    assert cache.pressure(few, 12) == 12  # no more lines than ways: they fit
    assert Cache(768).pressure(crowded, 16) == 16  # fully associative: capacity alone


def test_scheduled_matmul_with_power_of_two_rows_moves_more_through_l1():
    from orchestrator.task import Task
    from plugins.tuna.looptree import loop_tree
    from tests.plugins.tuna.helpers import scheduled

    def l1(k: int, sets: int) -> float:
        task = Task.create("dense", {"M": 64, "K": k, "N": 64})
        tree = loop_tree(scheduled(task, rows=16)["main"], 1)
        return data_movement(tree, 512, 64, sets).total_movement  # 32 KiB, 8 ways

    assert l1(1024, 64) > 4 * l1(1024, 1)
    assert l1(1040, 64) == l1(1040, 1)
