"""Import a script of ``scripts/`` as a module, for the tests of the reproduction scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` executed as module ``name`` (registered in sys.modules, where
    its dataclasses look themselves up)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def smoke_report(script: ModuleType, out: Path) -> str:
    """The report ``script``'s CI smoke run writes to ``out``, which says it is one."""
    assert script.main(["--smoke", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Smoke run (CI)" in text
    return text


TURNS_TABLE = ("| layer | gga / xgb seconds to 95% | speed-up (>= 5x) | ga seconds | speed-up over "
               "ga (>= 3x) | gga final / xgb (>= 0.98) | first result (s) | reachable: 5x xgb, "
               "3x ga |")


def turns_report(runs_rows: list[str], again_rows: list[str] | None = None,
                 machine: str = "AMD EPYC (znver4, AVX-512)") -> str:
    """A ``gga_turns.py`` report cut down to what the scripts that read reports use: the
    machine, the batch size, the targets tables (in the runs and, given ``again_rows``,
    timed again) and gga's means under each."""
    lines = ["# GGA leave-one-out, searchers taking turns on the machine", "",
             f"- Machine: {machine}, 2 cores available, x86_64", "",
             "Budgets: xgb 500, gga 300, ga 300 trials; seed 2; batches of 2.", "",
             TURNS_TABLE, "|---|---|---|---|---|---|---|---|", *runs_rows, "",
             "- gga over xgb: geometric mean 2.00x [1.00, 4.00] over 2 layers, undecided.",
             "- gga over ga: geometric mean <= 1.50x [1.00, 2.00] over 2 layers, undecided.", ""]
    if again_rows is not None:
        lines += ["## The configs the runs reported, timed again (`--deployed`)", "",
                  TURNS_TABLE, "|---|---|---|---|---|---|---|---|", *again_rows, "",
                  "- gga over xgb: geometric mean 1.20x [1.00, 1.50] over 2 layers, not met.",
                  ""]
    return "\n".join(lines)

