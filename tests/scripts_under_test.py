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
