"""Compiled kernels shared by the Tuna tests (each is built once per session)."""

from __future__ import annotations

import pytest

from tests.plugins.tuna.helpers import NEOVERSE, ZNVER4, dense_task, scheduled


@pytest.fixture(scope="session")
def znver4_kernel():
    """(lowered TIR + assembly) of the 64^3 matmul, vectorized, for Zen 4."""
    from plugins.tuna.lowering import lower_and_codegen

    return lower_and_codegen(scheduled(dense_task()), ZNVER4.tvm_target())


@pytest.fixture(scope="session")
def znver4_parallel_kernel():
    from plugins.tuna.lowering import lower_and_codegen

    return lower_and_codegen(scheduled(dense_task(), par=True), ZNVER4.tvm_target())


@pytest.fixture(scope="session")
def neon_kernel():
    from plugins.tuna.lowering import lower_and_codegen

    return lower_and_codegen(scheduled(dense_task()), NEOVERSE.tvm_target())
