"""pyflakes over the repository's Python: unused imports and names, undefined names,
redefinitions. Part of the test command so that CI runs it on every commit."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyflakes.api import checkPath
from pyflakes.reporter import Reporter

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("orchestrator", "plugins", "history", "scripts", "tests")


class _Collect(Reporter):
    """Keeps pyflakes' messages as lines instead of printing them; a message on a line
    marked ``# noqa`` (an import kept for its side effect, a TVMScript dtype string that
    pyflakes takes for a forward reference) is left out, as flake8 leaves it out."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def unexpectedError(self, filename: str, msg: str) -> None:  # noqa: N802 (pyflakes' API)
        self.lines.append(f"{filename}: {msg}")

    def syntaxError(self, filename: str, msg: str, lineno: int, offset: int,  # noqa: N802
                    text: str) -> None:
        self.lines.append(f"{filename}:{lineno}: syntax error: {msg}")

    def flake(self, message) -> None:
        source = Path(message.filename).read_text().splitlines()
        if 0 < message.lineno <= len(source) and "# noqa" in source[message.lineno - 1]:
            return
        self.lines.append(str(message))


def _sources(folders: tuple[str, ...] = CHECKED) -> list[Path]:
    return sorted(p for d in folders for p in (ROOT / d).rglob("*.py")
                  if ".venv" not in p.parts and "build" not in p.parts)


def test_the_checked_folders_hold_python() -> None:
    found = {p.relative_to(ROOT).parts[0] for p in _sources()}
    assert found == set(CHECKED)


@pytest.mark.parametrize("folder", CHECKED)
def test_pyflakes_finds_nothing(folder: str) -> None:
    report = _Collect()
    for path in _sources((folder,)):  # this folder's files only, not all five walked again
        checkPath(str(path), report)
    assert report.lines == [], "pyflakes:\n" + "\n".join(report.lines)


def test_pyflakes_is_heard(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys  # noqa: F401\n\nprint(undefined_name)\n")
    report = _Collect()
    assert checkPath(str(bad), report) == 3  # pyflakes' own count, noqa or not
    assert len(report.lines) == 2  # the noqa line left out
    assert any("'os' imported but unused" in line for line in report.lines)
    assert any("undefined name 'undefined_name'" in line for line in report.lines)
