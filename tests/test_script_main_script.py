"""scripts/script_main.py: every script ends an ``OrchestratorError`` with one ``error:``
line and exit status 2, never a traceback."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys

import pytest

from orchestrator.errors import OrchestratorError
from tests.scripts_under_test import SCRIPTS, load_script


@pytest.fixture(scope="module")
def script():
    return load_script("script_main")


def test_an_orchestrator_error_is_one_line_and_status_2(script, capsys):
    def main(argv):
        raise OrchestratorError(f"{argv[0]} is not a history database\n  (it has tables t);"
                                " pass another --db")

    assert script.exit_status(main, ["x.db"]) == OrchestratorError.exit_code == 2
    err = capsys.readouterr().err
    assert err == "error: x.db is not a history database (it has tables t); pass another --db\n"


def test_the_status_is_mains_and_argv_reaches_it(script):
    seen = []
    assert script.exit_status(lambda argv: seen.append(argv) or 3, ["--a", "1"]) == 3
    assert seen == [["--a", "1"]]
    assert script.exit_status(lambda: None) == 0  # a main that returns nothing succeeded
    assert script.exit_status(lambda: 0) == 0


def test_an_interrupt_is_one_word_and_status_130(script, capsys):
    def main():
        raise KeyboardInterrupt

    assert script.exit_status(main) == 130
    assert capsys.readouterr().err == "interrupted\n"


def test_other_exceptions_are_not_swallowed(script):
    def main():
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        script.exit_status(main)


def test_every_script_with_a_main_ends_through_exit_status():
    ends = {}
    for path in sorted(SCRIPTS.glob("*.py")):
        tail = path.read_text().split('\nif __name__ == "__main__":\n', 1)
        if len(tail) == 2:
            ends[path.name] = tail[1].strip()
    assert len(ends) >= 30  # the scripts with a command line are all found
    wrong = {name: end for name, end in ends.items()
             if end != "raise SystemExit(exit_status(main))"}
    assert not wrong


def test_a_database_that_is_not_a_history_is_one_line_not_a_traceback(tmp_path):
    # space_top.py reads --db deep inside its work: the error comes from HistoryStore.open
    foreign = tmp_path / "notes.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('kept')")
    proc = subprocess.run([sys.executable, str(SCRIPTS / "space_top.py"), "--db", str(foreign),
                           "--layers", "r18_l4ds", "--out", str(tmp_path / "report")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(r"error: .*notes\.db is not an orchestrator history "
                                        r"database .*pass another --db", lines[0])
    with sqlite3.connect(foreign) as conn:  # what was there is untouched
        assert conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]
